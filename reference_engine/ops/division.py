"""torch.div: div.Tensor_mode (DivBackward2) where a rounding_mode is given (None, "trunc"
or "floor"), with the kernels that round (ATen's div_trunc / div_floor), else div.Tensor,
elementwise.div (DivBackward0). DivBackward2's formula calls elementwise's div, so the
choice between the two overloads is made here, above elementwise, not in it (which would
import this module back).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec
from ..tensor import Tensor
from .basic import elementwise as ew
from .basic.elementwise import mul, neg, sub
from .common import elementwise_op, result_dtype, wrap, zeros_contiguous, zeros_like


def _div_mode_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """div_tensor_self_backward / div_tensor_other_backward: zeros with a rounding mode,
    else DivBackward0's formulas."""
    if c.rounding_mode is not None:
        return c.grads(lambda: zeros_like(g), lambda: zeros_like(g))
    return c.grads(lambda: ew.div(g, c.other),
                   lambda: mul(neg(g), ew.div(ew.div(c.self, c.other), c.other)))


DIV_MODE = OpSpec(
    "DivBackward2", ("self", "other"), {"self": ("other",), "other": ("self", "other")},
    _div_mode_backward,
    # result.new_zeros(result.sizes()): contiguous
    jvp=lambda c: zeros_contiguous(c.result) if c.rounding_mode is not None else
    sub(ew.div(c.self_t, c.other), ew.div(mul(c.other_t, ew.div(c.self, c.other)), c.other)))


def _div_rounded(mode: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """BinaryOpsKernel div_trunc / div_floor. Floats: trunc(a / b); floor as numpy's
    floor_divide, which is ATen's div_floor_floating (fmod, then the sign correction).
    Integers: C's truncating division, or Python's floor division."""
    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if np.issubdtype(np.result_type(a, b), np.floating):
            return np.trunc(a / b) if mode == "trunc" else np.floor_divide(a, b)
        q = np.floor_divide(a, b)
        if mode == "floor":
            return q
        return q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)))
    return fn


def div_mode(self: Any, other: Any, rounding_mode: str | None) -> Tensor:
    """div.Tensor_mode (DivBackward2, which a Python number other also takes, wrapped)."""
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(messages.div_rounding_mode(rounding_mode))
    ts = [wrap(self), wrap(other)]
    dt = result_dtype(ts)
    if rounding_mode is None:
        return elementwise_op(DIV_MODE, np.true_divide, ts, rounding_mode=None,
                              compute_dtype=dt if dt.is_differentiable
                              else dtypes.get_default_dtype())
    return elementwise_op(DIV_MODE, _div_rounded(rounding_mode), ts, rounding_mode=rounding_mode)


_UNSET: Any = object()   # rounding_mode not given (given, even None: div.Tensor_mode)


def div(self: Any, other: Any, *, rounding_mode: Any = _UNSET) -> Tensor:
    """torch.div and Tensor.div: div.Tensor_mode where a rounding_mode is given, else
    div.Tensor (elementwise.div)."""
    if rounding_mode is not _UNSET:
        return div_mode(wrap(self), wrap(other), rounding_mode)
    return ew.div(self, other)
