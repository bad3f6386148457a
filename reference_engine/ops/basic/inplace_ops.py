"""The in-place ops on inplace.py's machinery: add_/sub_/mul_/div_/pow_, the unary in-place
forms (_unary_), masked_fill_, zero_/fill_/copy_ (clamp_: ops/piecewise.py; squeeze_(dim):
views_inplace.py; __setitem__: views_indexing.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import forward_ad, messages
from ...autograd_meta import OpNode, OpSpec
from ...grad_mode import no_grad
from ...graph import Node, node_class
from ...tensor import Tensor
from .. import common
from . import complex_numbers, copying, views
from . import elementwise as ops
from .inplace import apply_inplace

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
        r = ops.pow(self, exponent)
    if isinstance(exponent, Tensor):
        return apply_inplace(self, ops.POW1, r, [exponent])
    return apply_inplace(self, ops.POW0, r, [], exponent=exponent)


def _unary_(spec: OpSpec, fn: Any) -> Any:
    """The in-place form of a unary elementwise op: same node, same saved values."""
    def op_(self: Tensor) -> Tensor:
        with no_grad():
            r = fn(self)
        return apply_inplace(self, spec, r, [])
    # Named for the op: it is Tensor.<name>_ itself, and Python's errors name the function.
    op_.__name__ = op_.__qualname__ = fn.__name__ + "_"
    return op_


neg_ = _unary_(ops.NEG, ops.neg)
exp_ = _unary_(ops.EXP, ops.exp)
log_ = _unary_(ops.LOG, ops.log)
sqrt_ = _unary_(ops.SQRT, ops.sqrt)
abs_ = _unary_(ops.ABS, ops.abs)
sin_ = _unary_(ops.SIN, ops.sin)
cos_ = _unary_(ops.COS, ops.cos)
tanh_ = _unary_(ops.TANH, ops.tanh)
sigmoid_ = _unary_(ops.SIGMOID, ops.sigmoid)
relu_ = _unary_(ops.RELU, ops.relu)


def masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    from . import indexing
    with no_grad():
        r = indexing.masked_fill(self, mask, value)
    if isinstance(value, Tensor):
        return apply_inplace(self, indexing.MASKED_FILL_TENSOR, r, [value], mask=mask)
    return apply_inplace(self, indexing.MASKED_FILL, r, [], mask=mask)


def _copy_jvp(c: Any) -> Tensor:
    """copy_'s tangent for a self without one (VariableTypeManual.cpp copy_, written by
    hand): src's tangent broadcast to self's size (a view of it, which set_fw_grad copies
    into self's layout unless it has it: a size-1 leading dim keeps the view), else a clone;
    in src's tangent's dtype either way. A self with a tangent has src's copied into it."""
    if tuple(c.src_t.shape) != tuple(c.self.shape):
        return views.expand(c.src_t, tuple(c.self.shape))
    return copying.clone(c.src_t)


# Their forward formulas (derivatives.yaml: zero_ `result: self_t.zero_()`, fill_.Scalar
# `self_t.fill_(0)`, copy_ `self_t.copy_(src_t)`) give the tangent the in-place update then
# writes into self's (forward_ad.update_inplace): zeros, or src's tangent broadcast to self
ZERO = OpSpec("ZeroBackward0", ("self",), backward=lambda c, g: [common.zeros_like(g)],
              jvp=lambda c: common.zeros_like(c.self_t))
FILL = OpSpec("FillBackward2", ("self",), backward=lambda c, g: [common.zeros_like(g)],
              jvp=lambda c: common.zeros_like(c.self_t))
COPY = OpSpec("CopyBackwards", ("self", "src"),
              backward=lambda c, g: c.grads(lambda: common.zeros_like(g),
                                            lambda: copying.to(_r_to_c(g, c.src_dtype),
                                                               c.src_device, c.src_dtype)),
              jvp=_copy_jvp)


def _r_to_c(g: Tensor, dt: Any) -> Tensor:
    """CopyBackwards' handle_r_to_c: a real source takes the real part of a complex grad."""
    return complex_numbers.real(g) if g.dtype.is_complex and not dt.is_complex else g


def _copy_backwards_name(self: Node) -> str:
    return "torch::autograd::CopyBackwards"   # a hand-written C++ node: named in full


node_class(COPY.grad_fn, OpNode).name = _copy_backwards_name


def zero_(self: Tensor) -> Tensor:
    result = common.zeros_like(self)
    forward_ad.record_tangent(ZERO, [self], result, {})
    return apply_inplace(self, ZERO, result, [], idempotent=True)


# eq_: derivatives.yaml's eq_.Tensor (EqBackward1) and eq_.Scalar (EqBackward0): zero
# gradients, and `result: self_t.zero_()`, the tangent zeroed in place (update_inplace
# writes zeros into it: the comparison's result has none); other's tangent is not read, so
# a plain self compared with a dual tensor gets none
EQ_TENSOR = OpSpec("EqBackward1", ("self", "other"),
                   backward=lambda c, g: [common.zeros_like(g), common.zeros_like(g)],
                   jvp_reads=("self",))
EQ_SCALAR = OpSpec("EqBackward0", ("self",), backward=lambda c, g: [common.zeros_like(g)])


def eq_(self: Tensor, other: Any) -> Tensor:
    from . import comparisons
    r = comparisons.compare(self, other, np.equal)
    if isinstance(other, Tensor):
        return apply_inplace(self, EQ_TENSOR, r, [other])
    return apply_inplace(self, EQ_SCALAR, r, [])


def fill_(self: Tensor, value: Any) -> Tensor:
    # fill_(Tensor) checks overlap; fill_(Scalar) does not (writing one value twice is fine).
    value_t = common.new(np.full(self.shape, value), self.dtype, self.device)
    forward_ad.record_tangent(FILL, [self], value_t, {})  # (a tensor value's tangent: not read)
    return apply_inplace(self, FILL, value_t,
                         [], idempotent=not isinstance(value, Tensor))


def copy_(self: Tensor, other: Any) -> Tensor:
    other = common.wrap(other)
    shape = common.broadcast_shape(tuple(self.shape), tuple(other.shape))
    if shape != tuple(self.shape):   # (before NumPy's broadcast_to refuses it in its words)
        raise RuntimeError(messages.output_broadcast(tuple(self.shape), shape))
    values = common.new(np.broadcast_to(other._data, self.shape), self.dtype, self.device)
    forward_ad.record_tangent(COPY, [self, other], values, {})
    # ATen's copy_impl returns before its TensorIterator when the source is self's very data (same
    # start, sizes, strides, dtype): `g.copy_(g)` on an expanded g passes the overlap checks
    return apply_inplace(self, COPY, values, [other], idempotent=_same_data(self, other),
                         src_device=other.device, src_dtype=other.dtype)


def _same_data(a: Tensor, b: Tensor) -> bool:
    x, y = a._data, b._data
    return (x.__array_interface__["data"][0] == y.__array_interface__["data"][0]
            and x.shape == y.shape and x.strides == y.strides and a.dtype is b.dtype)
