"""torch.autograd.gradcheck's check_forward_ad (torch/autograd/gradcheck.py, slow mode).

The analytical Jacobian is built column by column inside a dual level, each differentiable
input made a dual tensor of its detached self with a zero tangent, one element of that
tangent set to 1 per call of the function; then, with check_undefined_grad, each
differentiable input once with a zero tangent and once as a plain tensor must give the same
output tangents (the other inputs' tangents drawn by the engine's own generator, as
gradgradcheck's grad_outputs are). The order of the checks, hence of the function's and its
Functions' calls, is torch's. A function of complex inputs is checked along their imaginary,
then their real parts, the other part held.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import dtypes, forward_ad, messages
from .dtypes import get_default_dtype
from .factories import zeros_like
from .gradcheck_common import (
    GradcheckError,
    as_tuple,
    differentiable_outputs,
    numerical_jacobian,
    part_name,
    tensor_text,
)
from .ops.basic import complex_imag, complex_numbers, inplace
from .ops.basic import elementwise as ew
from .ops.common import new
from .tensor import Tensor


def _real_and_imag_input(func: Callable[..., Any], indices: list[int],
                         inputs: tuple[Any, ...]) -> tuple[Callable[..., Any],
                                                           Callable[..., Any]]:
    """x -> func(x + orig.imag * 1j) and y -> func(orig.real + y * 1j) for the complex
    inputs (the other part held at the original's, never 0)."""
    def apply(make: Callable[[Tensor, Tensor], Tensor]) -> Callable[..., Any]:
        def wrapped(*args: Any) -> tuple[Any, ...]:
            new_args = list(args)
            for k in indices:
                new_args[k] = make(new_args[k], inputs[k])
            return as_tuple(func(*new_args))
        return wrapped
    return (apply(lambda x, orig: ew.add(x, ew.mul(complex_imag.imag(orig), 1j))),
            apply(lambda y, orig: ew.add(complex_numbers.real(orig), ew.mul(y, 1j))))


def _parts(inputs: tuple[Any, ...], part: Callable[[Tensor], Tensor]) -> tuple[Any, ...]:
    """The complex inputs replaced by one part each (its view: x.real, x.imag)."""
    return tuple(part(x) if isinstance(x, Tensor) and x.dtype.is_complex else x
                 for x in inputs)


def forward_real_imag(func: Callable[..., Any], func_out: Any, inputs: tuple[Any, ...],
                      outputs: tuple[Tensor, ...], eps: float, rtol: float, atol: float,
                      check_undefined_grad: bool) -> None:
    """torch's _gradcheck_real_imag, forward half: a function of complex inputs is checked
    along their imaginary parts, then their real parts."""
    complex_inp = [i for i, x in enumerate(inputs) if isinstance(x, Tensor)
                   and x.dtype.is_complex]
    if not complex_inp:
        _slow_gradcheck_forward(func, func_out, inputs, outputs, eps, rtol, atol)
        if check_undefined_grad:
            _test_undefined_forward_mode(func, inputs)
        return
    real_fn, imag_fn = _real_and_imag_input(func, complex_inp, inputs)
    imag_inputs = _parts(inputs, complex_imag.imag)
    imag_out = imag_fn(*imag_inputs)
    _slow_gradcheck_forward(imag_fn, imag_out, imag_inputs, differentiable_outputs(imag_out),
                            eps, rtol, atol, complex_inp, True)
    real_inputs = _parts(inputs, complex_numbers.real)
    real_out = real_fn(*real_inputs)
    _slow_gradcheck_forward(real_fn, real_out, real_inputs, differentiable_outputs(real_out),
                            eps, rtol, atol, complex_inp, False)
    if check_undefined_grad:
        _test_undefined_forward_mode(imag_fn, imag_inputs)
        _test_undefined_forward_mode(real_fn, real_inputs)


def _float_or_complex(x: Any) -> bool:
    return isinstance(x, Tensor) and (x.dtype.is_floating_point or x.dtype.is_complex)


def _dual_inputs(inputs: tuple[Any, ...]) -> tuple[list[Any], list[Tensor]]:
    """The inputs with each that requires grad a dual tensor of its detached self and a zero
    tangent; and those tangents, read back from the duals (torch's _get_analytical_jacobian_
    forward_ad)."""
    duals: list[Any] = []
    tangents: list[Tensor] = []
    for inp in inputs:
        if isinstance(inp, Tensor) and inp.requires_grad:
            inp = forward_ad.make_dual(inp.detach(), zeros_like(inp))
            tangent = forward_ad.unpack_dual(inp).tangent
            assert tangent is not None
            tangents.append(tangent)
        duals.append(inp)
    return duals, tangents


def _analytical_jacobian_forward(func: Callable[..., Any], inputs: tuple[Any, ...],
                                 func_out: tuple[Any, ...]) -> list[list[np.ndarray]]:
    """[input][output] -> (numel of input, numel of output), one call of func per element of
    each differentiable input, its tangent one-hot."""
    floats = [o for o in func_out if _float_or_complex(o)]
    with forward_ad.dual_level():
        duals, tangents = _dual_inputs(inputs)
        jacobians = [[np.zeros((t.numel(), o.numel()), o._data.dtype) for o in floats]
                     for t in tangents]
        for i, tangent in enumerate(tangents):
            for lin, idx in enumerate(itertools.product(*(range(n) for n in tangent.shape))):
                tangent[idx] = 1.0
                outs = [o for o in as_tuple(func(*duals)) if _float_or_complex(o)]
                for k, o in enumerate(outs):
                    res = forward_ad.unpack_dual(o).tangent
                    if res is not None:
                        jacobians[i][k][lin] = res._data.reshape(-1)
                tangent[idx] = 0.0
    return jacobians


def _slow_gradcheck_forward(func: Callable[..., Any], func_out: Any, inputs: tuple[Any, ...],
                            outputs: tuple[Tensor, ...], eps: float, rtol: float,
                            atol: float, complex_indices: Sequence[int] = (),
                            test_imag: bool = False) -> None:
    all_out = as_tuple(func_out)
    numerical = numerical_jacobian(func, inputs, all_out, eps)
    if not outputs:
        if any(np.count_nonzero(j) for per_input in numerical for j in per_input):
            raise GradcheckError(messages.GRADCHECK_NONZERO_NUMERICAL)
        return
    # torch pairs the numerical Jacobians of the outputs that require grad (index i) with
    # the analytical ones of the floating outputs (the same index i)
    by_output = [[numerical[j][k] for j in range(len(numerical))]
                 for k, o in enumerate(all_out) if o.requires_grad]
    analytical = _analytical_jacobian_forward(func, inputs, all_out)
    for i, per_input in enumerate(by_output):
        for j, n in enumerate(per_input):
            a = analytical[j][i]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                # torch tests the input's index among those requiring grad against the
                # complex inputs' indices among all inputs
                prefix = part_name(test_imag, "inputs") if j in complex_indices else ""
                raise GradcheckError(prefix + messages.gradcheck_forward_jacobian_mismatch(
                    i, j, tensor_text(n, outputs[i].dtype), tensor_text(a, outputs[i].dtype)))


class _TorchCpuGenerator:
    """A fresh torch.Generator() (CPU, its default seed 67280421310721) as far as gradcheck
    draws from it: torch.rand in the default dtype (ATen's uniform_real_distribution): per
    element of a double, two 32-bit mt19937 outputs (the first the high word), the low 53
    bits scaled by 2**-53; of a float, one output, its low 24 bits scaled by 2**-24."""

    def __init__(self, seed: int = 67280421310721) -> None:
        key = np.empty(624, np.uint64)
        key[0] = seed & 0xFFFFFFFF
        for i in range(1, 624):   # std::mt19937's seeding (init_genrand)
            prev = int(key[i - 1])
            key[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF
        self._bits = np.random.MT19937()
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": key.astype(np.uint32), "pos": 624}}

    def rand(self, n: int, dt: dtypes.dtype) -> np.ndarray:
        if dt is dtypes.float64:
            raw = np.asarray(self._bits.random_raw(2 * n), np.uint64)
            bits = ((raw[0::2] << np.uint64(32)) | raw[1::2]) & np.uint64(2 ** 53 - 1)
            return bits.astype(np.float64) * 2.0 ** -53
        if dt is not dtypes.float32:
            raise NotImplementedError(messages.GRADCHECK_NOT_MODELLED)
        raw = np.asarray(self._bits.random_raw(n), np.uint64)
        return ((raw & np.uint64(0xFFFFFF)).astype(np.float64) * 2.0 ** -24).astype(np.float32)


def _test_undefined_forward_mode(func: Callable[..., Any], inputs: tuple[Any, ...]) -> None:
    """Each differentiable input, with a zero tangent and as a plain tensor, must give the
    same output tangents, the other inputs' tangents those torch draws (_make_vectors: a
    fresh generator's rand, in the input's dtype, of norm 1)."""
    gen = _TorchCpuGenerator()
    with forward_ad.dual_level():
        duals, tangents = _dual_inputs(inputs)
        for tangent in tangents:
            u = gen.rand(tangent.numel(), get_default_dtype()).astype(
                dtypes.to_real(tangent.dtype).np)
            u /= np.sqrt(np.sum(u * u))
            inplace.copy_(tangent, new(u.reshape(tangent.shape), tangent.dtype, tangent.device))
        for idx, inp in enumerate(inputs):
            if not (isinstance(inp, Tensor) and inp.requires_grad):
                continue
            kept = duals[idx]
            duals[idx] = forward_ad.make_dual(inp.detach(), zeros_like(inp))
            outs1 = [o for o in as_tuple(func(*duals)) if _float_or_complex(o)]
            duals[idx] = inp.detach()
            outs2 = [o for o in as_tuple(func(*duals)) if _float_or_complex(o)]
            duals[idx] = kept
            for k, (o1, o2) in enumerate(zip(outs1, outs2, strict=False)):
                r1 = forward_ad.unpack_dual(o1).tangent
                r2 = forward_ad.unpack_dual(o2).tangent
                if r1 is not None and r2 is not None \
                        and not np.allclose(r1._data, r2._data, rtol=1e-5, atol=1e-8):
                    raise GradcheckError(*messages.gradcheck_undefined_tangent_mismatch(
                        k, inp, r1, r2))
