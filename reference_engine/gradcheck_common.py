"""What gradcheck's backward check (gradcheck.py) and forward check (gradcheck_forward.py)
share: the error, the numerical Jacobian (central differences, each element of each input
that requires grad perturbed in place by +-eps; a complex input's derivative the conjugate
Wirtinger one, ds/dx + i ds/dy) and the texts of a mismatch.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import dtypes, messages
from .ops.common import new
from .tensor import Tensor


class GradcheckError(RuntimeError):
    """torch.autograd.gradcheck.GradcheckError."""


def as_tuple(x: Any) -> tuple[Any, ...]:
    if isinstance(x, tuple):
        return x
    return tuple(x) if isinstance(x, list) else (x,)


def differentiable_inputs(inputs: Sequence[Any]) -> list[Tensor]:
    return [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]


def differentiable_outputs(x: Any) -> tuple[Tensor, ...]:
    return tuple(o for o in as_tuple(x) if o.requires_grad)


def numerical_jacobian(func: Callable[..., Any], inputs: tuple[Any, ...],
                       outputs: tuple[Tensor, ...], eps: float) -> list[list[np.ndarray]]:
    """[input][output] -> (numel of input, numel of output): d output / d input element."""
    result = []
    for inp in differentiable_inputs(inputs):
        data = writable_array(inp)
        columns: list[list[np.ndarray]] = [[] for _ in outputs]
        for idx in itertools.product(*(range(n) for n in data.shape)):
            ds_dx = _central_difference(func, inputs, data, idx, eps)
            if inp.dtype.is_complex:
                # the conjugate Wirtinger derivative: ds/dx + i ds/dy
                ds_dy = _central_difference(func, inputs, data, idx, eps * 1j)
                ds_dx = [dx + dy * 1j for dx, dy in zip(ds_dx, ds_dy, strict=True)]
            for k, d in enumerate(ds_dx):
                columns[k].append(d)
        result.append([np.stack(c).astype(inp._data.dtype if inp.dtype.is_complex
                                          else c[0].dtype, copy=False)
                       if c else np.zeros((0, o.numel()), o._data.dtype)
                       for c, o in zip(columns, outputs, strict=True)])
    return result


def writable_array(t: Tensor) -> np.ndarray:
    """t's elements as an array gradcheck may move in place (torch writes through x.data): a
    complex tensor's part view is read-only here (complex_numbers' views), so it is reached
    through its base's memory."""
    a = t._data
    if a.flags.writeable or t._base is None or a.size == 0:
        return a
    root = t._base._data
    offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(a.shape, a.dtype, buffer=root, offset=offset, strides=a.strides)


def _central_difference(func: Callable[..., Any], inputs: tuple[Any, ...], data: np.ndarray,
                        idx: tuple[int, ...], delta: float | complex) -> list[np.ndarray]:
    """(f(x + delta) - f(x - delta)) / (2 |delta|) per output, x's element idx moved in place
    (torch's _compute_numerical_gradient)."""
    orig = data[idx].copy()
    data[idx] = orig - delta
    below = [o.clone() for o in as_tuple(func(*inputs))]
    data[idx] = orig + delta
    above = [o.clone() for o in as_tuple(func(*inputs))]
    data[idx] = orig
    return [((b._data - a._data) / np.asarray(2 * abs(delta), b._data.dtype)).reshape(-1)
            for a, b in zip(below, above, strict=True)]


def tensor_text(a: np.ndarray, dt: dtypes.dtype) -> str:
    return str(new(a, dt, dtypes.device("cpu")))


def part_name(test_imag: bool, element: str) -> str:
    return messages.gradcheck_complex_part("imaginary" if test_imag else "real", element)
