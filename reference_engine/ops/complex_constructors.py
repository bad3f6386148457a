"""Complex tensors made from real ones (issue 22): complex(real, imag) and polar(abs, angle),
with their out= forms. Gradients follow complex_numbers.py's convention."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec
from ..tensor import Tensor
from .basic import elementwise as ew
from .basic.complex_imag import imag
from .basic.complex_numbers import conj, real
from .common import elementwise_op
from .complex_polar import sgn
from .out_overloads import into_out


def _check_types(fn: str, names: tuple[str, str], a: Any, b: Any) -> None:
    """The Python arg parser's check, first argument first."""
    for position, (name, t) in enumerate(zip(names, (a, b), strict=True), 1):
        if not isinstance(t, Tensor):
            raise TypeError(messages.argument_must_be_tensor(fn, name, position,
                                                             type(t).__name__))


# complex_check_floating's dtypes (isFloatingType less bfloat16, which has no complex twin)
_PARTS = (dtypes.float16, dtypes.float32, dtypes.float64)


def _check_pair(a: Tensor, b: Tensor, out: Tensor | None = None) -> None:
    """ATen's complex_check_floating, and complex_check_dtype's checks of the second
    argument and of `out`."""
    if not (a.dtype in _PARTS and b.dtype in _PARTS):
        raise RuntimeError(messages.complex_inputs_not_float(a.dtype.scalar_name,
                                                             b.dtype.scalar_name))
    if a.dtype is not b.dtype:
        raise RuntimeError(messages.complex_second_argument(a.dtype.scalar_name,
                                                            b.dtype.scalar_name))
    ct = dtypes.to_complex(a.dtype)
    if out is not None and out.dtype is not ct:
        raise RuntimeError(messages.complex_out_dtype(ct.scalar_name, out.dtype.scalar_name))


def _into_out(fn: str, a: Tensor, b: Tensor, out: Tensor,
              op: Callable[[Tensor, Tensor], Tensor]) -> Tensor:
    """complex_out / polar_out: autograd refuses out= first, then the kernel checks dtypes."""

    def compute() -> Tensor:
        _check_pair(a, b, out)
        return op(a, b)
    return into_out(fn, out, (a, b), compute)


# torch's codegen saves an input whose name a formula mentions, and `at::real(grad)` names
# `real` (as `at::imag(grad)` names `imag`): ComplexBackward0 saves both inputs, each when its
# own grad is wanted, unread by the formulas (pack hooks see imag, then real).
COMPLEX = OpSpec("ComplexBackward0", ("real", "imag"), {"real": ("real",), "imag": ("imag",)},
                 backward=lambda c, g: c.grads(lambda: real(g), lambda: _imag_of(g)),
                 jvp=lambda c: complex(c.real_t, c.imag_t))


def _imag_of(g: Tensor) -> Tensor:
    """at::imag of a gradient, which is complex here (a complex result's grad)."""
    return imag(g)


def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:
    _check_types("complex", ("real", "imag"), real, imag)
    if out is not None:
        return _into_out("complex", real, imag, out, complex)
    _check_pair(real, imag)
    return elementwise_op(COMPLEX, _from_parts, (real, imag),
                          out_dtype=dtypes.to_complex(real.dtype))


def _from_parts(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    """re + i im, part by part (re + 1j * im would make inf * 1j's real part NaN)."""
    re, im = np.broadcast_arrays(re, im)
    out = np.empty(re.shape, np.result_type(re.dtype, np.complex64))
    out.real, out.imag = re, im
    return out


def _polar_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """FunctionsManual's polar_backward: grad_abs = real(conj(grad) * sgn(result)),
    grad_angle = real(conj(grad) * result * i)."""
    gc = conj(g)
    result = c.result
    return c.grads(lambda: real(ew.mul(gc, sgn(result))),
                   lambda: real(ew.mul(gc, ew.mul(result, 1j))))


def _polar_jvp(c: Any) -> Tensor:
    """at::complex(abs_t*angle_p.cos() - angle_t*abs_p*angle_p.sin(),
                   abs_t*angle_p.sin() + angle_t*abs_p*angle_p.cos())"""
    cos, sin = ew.cos(c.angle), ew.sin(c.angle)
    return complex(ew.sub(ew.mul(c.abs_t, cos), ew.mul(ew.mul(c.angle_t, c.abs), sin)),
                   ew.add(ew.mul(c.abs_t, sin), ew.mul(ew.mul(c.angle_t, c.abs), cos)))


POLAR = OpSpec("PolarBackward0", ("abs", "angle"), {"abs": ("result",), "angle": ("result",)},
               backward=_polar_backward, jvp=_polar_jvp)


def polar(abs: Tensor, angle: Tensor, *, out: Tensor | None = None) -> Tensor:
    _check_types("polar", ("abs", "angle"), abs, angle)
    if out is not None:
        return _into_out("polar", abs, angle, out, polar)
    _check_pair(abs, angle)
    return elementwise_op(POLAR, _polar_array, (abs, angle), out_dtype=dtypes.to_complex(abs.dtype))


def _polar_array(r: np.ndarray, t: np.ndarray) -> np.ndarray:
    """r cos t + i r sin t. torch's kernel calls libm's cos and sin of the parts' type, which
    round (nearly always) correctly; numpy's float32 cos and sin are coarser, so they are
    taken in float64 and rounded."""
    t64 = t.astype(np.float64)
    return _from_parts(r * np.cos(t64).astype(t.dtype), r * np.sin(t64).astype(t.dtype))
