"""abs, angle and sgn of complex tensors (the polar form: |z|, arg z and z / |z|), with
FunctionsManual's formulas. Above the basic ops: sgn's formula writes in place
(masked_fill_), and no basic op's formula calls these (their real-tensor forms:
ops/unary_via_backward.py's abs, ops/backward.py's sgn, ops/unary_math.py's angle).
Complex numbers' views and conjugation: ops/basic/complex_numbers.py."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..autograd_meta import OpSpec
from ..tensor import Tensor
from .basic import comparisons as cmp
from .basic import elementwise, inplace
from .basic import elementwise as ew
from .basic.complex_numbers import conj, real
from .common import elementwise_op, zeros_scalar


def _abs_array(a: np.ndarray) -> np.ndarray:
    """|z| as torch computes it: hypot of the parts (numpy's complex64 abs rounds otherwise)."""
    return np.hypot(a.real, a.imag)


def _sgn_array(a: np.ndarray) -> np.ndarray:
    """z / |z| (0 at 0), each part divided by |z| as torch's kernel does (numpy's complex by
    real division would multiply by 1 / |z|, rounding differently)."""
    mag = _abs_array(a)
    safe = np.where(mag == 0, 1, mag)
    out = np.empty(a.shape, a.dtype)
    with np.errstate(all="ignore"):
        out.real, out.imag = a.real / safe, a.imag / safe
    out[mag == 0] = 0
    return out


SGN = OpSpec("SgnBackward0", ("self",), {"self": ("self", "result")},
             backward=lambda c, g: [sgn_backward(c.self, g, c.result)],
             jvp=lambda c: sgn_backward(c.self, c.self_t, c.result))


def sgn(self: Tensor) -> Tensor:
    """z / |z| (0 at 0) of a complex tensor."""
    return elementwise_op(SGN, _sgn_array, (self,))


def sgn_backward(x: Tensor, gx: Tensor, sgn_x: Tensor) -> Tensor:
    """FunctionsManual's sgn_backward, as written there (its float32 roundings):
    ((gx - (sgn * sgn) * gx.conj()) / (2. * |x|)).masked_fill_(|x| == 0., 0.)."""
    absx = abs(x)
    value = ew.div(ew.sub(gx, ew.mul(ew.mul(sgn_x, sgn_x), conj(gx))), ew.mul_scalar(absx, 2.0))
    return inplace.masked_fill_(value, cmp.compare(absx, 0.0, np.equal), 0.0)


# handle_r_to_c(result's real dtype, self_t.conj() * self_p.sgn()): the real part
ABS = OpSpec("AbsBackward0", ("self",), {"self": ("self",)},
             backward=lambda c, g: [_mul(g, sgn(c.self))],
             jvp=lambda c: real(_mul(conj(c.self_t), sgn(c.self))))


def _mul(a: Tensor, b: Tensor) -> Tensor:
    return elementwise.mul(a, b)


def abs(self: Tensor) -> Tensor:
    """|z| of a complex tensor: a real tensor of the parts' dtype."""
    return elementwise_op(ABS, _abs_array, (self,), out_dtype=dtypes.to_real(self.dtype))


def _angle_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """FunctionsManual's angle_backward of a complex self:
    where(self == 0, 0, grad * self / |self|^2 * i)."""
    z = c.self
    sq = ew.mul(abs(z), abs(z))
    value = ew.mul(ew.div(ew.mul(g, z), sq), 1j)
    return [cmp.where(cmp.compare(z, 0.0, np.equal), zeros_scalar(value), value)]


# handle_r_to_c(result's real dtype, angle_backward(self_t.conj(), self_p).conj())
def _angle_jvp(c: Any) -> Tensor:
    g = _angle_backward(c, conj(c.self_t))[0]
    assert g is not None
    return real(conj(g))


ANGLE = OpSpec("AngleBackward0", ("self",), {"self": ("self",)}, backward=_angle_backward,
               jvp=_angle_jvp)


def angle(self: Tensor) -> Tensor:
    """arg z of a complex tensor: a real tensor of the parts' dtype."""
    return elementwise_op(ANGLE, np.angle, (self,), out_dtype=dtypes.to_real(self.dtype))
