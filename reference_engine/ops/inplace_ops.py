"""The in-place ops on ops/basic/inplace.py's machinery: add_/sub_/mul_/div_/pow_, the unary
in-place forms (unary_inplace), zero_/fill_/eq_ (copy_ and masked_fill_, which the basic
ops' formulas call: ops/basic/inplace.py; clamp_: ops/piecewise.py; squeeze_(dim):
views_inplace.py; __setitem__: views_indexing.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes, forward_ad, messages
from ..autograd_meta import OpSpec
from ..grad_mode import no_grad
from ..tensor import Tensor
from . import common, triangular
from .basic import comparisons, powers, reductions
from .basic import elementwise as ops
from .basic.inplace import apply_inplace

# ---- the in-place ops ------------------------------------------------------------------

def _operand(x: Any) -> Tensor:
    return common.wrap(x)


def add_(self: Tensor, other: Any, alpha: float = 1) -> Tensor:
    with no_grad():
        r = ops.add(self, other, alpha)
    return apply_inplace(self, ops.ADD, r, [_operand(other)], alpha=alpha)


def sub_(self: Tensor, other: Any, alpha: float = 1) -> Tensor:
    with no_grad():
        r = ops.sub(self, other, alpha)
    return apply_inplace(self, ops.SUB, r, [_operand(other)], alpha=alpha)


def mul_(self: Tensor, other: Any) -> Tensor:
    with no_grad():
        r = ops.mul(self, other)
    return apply_inplace(self, ops.MUL, r, [_operand(other)])


def div_(self: Tensor, other: Any) -> Tensor:
    with no_grad():
        r = ops.div(self, other)
    return apply_inplace(self, ops.DIV, r, [_operand(other)])


def pow_(self: Tensor, exponent: Any) -> Tensor:
    with no_grad():
        r = powers.pow(self, exponent)
    if isinstance(exponent, Tensor):
        return apply_inplace(self, powers.POW1, r, [exponent])
    return apply_inplace(self, powers.POW0, r, [], exponent=exponent)


def unary_inplace(spec: OpSpec, fn: Any) -> Any:
    """The in-place form of a unary elementwise op: same node, same saved values."""
    def op_(self: Tensor) -> Tensor:
        with no_grad():
            r = fn(self)
        return apply_inplace(self, spec, r, [])
    # Named for the op: it is Tensor.<name>_ itself, and Python's errors name the function.
    op_.__name__ = op_.__qualname__ = fn.__name__ + "_"
    return op_


neg_ = unary_inplace(ops.NEG, ops.neg)
exp_ = unary_inplace(ops.EXP, ops.exp)
log_ = unary_inplace(ops.LOG, ops.log)
sqrt_ = unary_inplace(ops.SQRT, ops.sqrt)
sin_ = unary_inplace(ops.SIN, ops.sin)
cos_ = unary_inplace(ops.COS, ops.cos)


# Their forward formulas (derivatives.yaml: zero_ `result: self_t.zero_()`, fill_.Scalar
# `self_t.fill_(0)`, copy_ `self_t.copy_(src_t)`) give the tangent the in-place update then
# writes into self's (forward_ad.update_inplace): zeros, or src's tangent broadcast to self
ZERO = OpSpec("ZeroBackward0", ("self",), backward=lambda c, g: [common.zeros_like(g)],
              jvp=lambda c: common.zeros_like(c.self_t))
FILL = OpSpec("FillBackward2", ("self",), backward=lambda c, g: [common.zeros_like(g)],
              jvp=lambda c: common.zeros_like(c.self_t))
def zero_(self: Tensor) -> Tensor:
    result = common.zeros_like(self)
    forward_ad.record_tangent(ZERO, [self], result, {})
    return apply_inplace(self, ZERO, result, [], idempotent=True)


# eq_: derivatives.yaml's eq_.Tensor (EqBackward1) and eq_.Scalar (EqBackward0): zero
# gradients (zeros_like(self), zeros_like(other): common.info_zeros), and `result:
# self_t.zero_()`, the tangent zeroed in place (update_inplace writes zeros into it: the
# comparison's result has none); other's tangent is not read, so a plain self compared with
# a dual tensor gets none
EQ_TENSOR = OpSpec("EqBackward1", ("self", "other"),
                   backward=lambda c, g: [common.info_zeros(g), common.info_zeros(g)],
                   jvp_reads=("self",))
EQ_SCALAR = OpSpec("EqBackward0", ("self",), backward=lambda c, g: [common.info_zeros(g)])


def eq_(self: Tensor, other: Any) -> Tensor:
    r = comparisons.compare(self, other, np.equal)
    if isinstance(other, Tensor):
        return apply_inplace(self, EQ_TENSOR, r, [other])
    return apply_inplace(self, EQ_SCALAR, r, [])


# fill_.Tensor: value's gradient is the sum of the grad (FillBackward3)
FILL_VALUE = OpSpec("FillBackward3", ("self", "value"),
                    backward=lambda c, g: c.grads(lambda: common.zeros_like(g),
                                                  lambda: reductions.sum(g)),
                    jvp=lambda c: triangular.fill(c.self_t, c.value_t))


def fill_(self: Tensor, value: Any) -> Tensor:
    # fill_(Tensor) checks overlap; fill_(Scalar) does not (writing one value twice is fine).
    if isinstance(value, Tensor):
        # Fill.cpp's fill_(Tensor): self.copy_(value), so a complex value keeps its real
        # part with copy_'s warning, and a value past the dtype's range wraps or is inf
        if value.ndim:
            raise RuntimeError(messages.fill_value_dims(value.ndim))
        arr = dtypes.cast(np.broadcast_to(value._data, self.shape), self.dtype.np, warn=True)
        value_t = common.new(arr, self.dtype, self.device)
        forward_ad.record_tangent(FILL_VALUE, [self, value], value_t, {})
        return apply_inplace(self, FILL_VALUE, value_t, [value])
    arr = np.full(self.shape, dtypes.scalar_in(value, self.dtype))
    value_t = common.new(arr, self.dtype, self.device)
    forward_ad.record_tangent(FILL, [self], value_t, {})
    return apply_inplace(self, FILL, value_t, [], idempotent=True)
