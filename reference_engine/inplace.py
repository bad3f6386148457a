"""In-place ops: write into the tensor's memory, bump the shared version counter, and
rebase the tensor's history onto the op's node.

On a view the history goes to the base instead, wrapped in CopySlices, and the
view's own grad_fn is rebuilt lazily (see views.regenerate_view_grad_fn).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import engine, messages, ops, views
from .autograd_meta import OpNode, OpSpec, build_node, differentiable
from .grad_mode import is_grad_enabled, no_grad
from .graph import Edge, Node
from .tensor import Tensor


def check_inplace(t: Tensor) -> None:
    if not is_grad_enabled():
        return
    if t._base is not None and t._base.is_leaf and t._base.requires_grad:
        raise RuntimeError(messages.VIEW_OF_LEAF_INPLACE)
    if t._base is None and t.is_leaf and t.requires_grad:
        raise RuntimeError(messages.LEAF_INPLACE)


def apply_inplace(self: Tensor, spec: OpSpec, result: Tensor, others: Sequence[Tensor],
                  **attrs: Any) -> Tensor:
    """Make self hold result's values, as op spec applied to (self, *others) in place."""
    check_inplace(self)
    if not np.can_cast(result.dtype.np, self.dtype.np, casting="same_kind") \
            and result.dtype is not self.dtype:
        raise RuntimeError(messages.cannot_cast(result.dtype.scalar_name, self.dtype.scalar_name))
    track = differentiable([self, *others]) and self.dtype.is_floating_point
    old_edge = engine.gradient_edge(self)
    # A formula that reads `self` needs the value from before the write: torch saves a clone.
    reads_self = any("self" in spec.saves.get(n, ()) for n in spec.inputs)
    original = ops.clone(self) if track and reads_self else self
    self._data[...] = np.broadcast_to(result._data, self.shape).astype(self.dtype.np)
    self._version_counter.bump()
    if track:
        edges = [old_edge] + [engine.gradient_edge(o) for o in others]
        node = build_node(spec, edges, [original, *others], self, attrs)
        rebase_history(self, node)
    return self


def rebase_history(t: Tensor, node: Node) -> None:
    if t._base is None:
        t._set_grad_fn(node)
        return
    base = t._base
    assert t._view_index is not None
    copy_slices = CopySlices(engine.gradient_edge(base), base, t._view_index, node)
    base._set_grad_fn(copy_slices)


class CopySlices(Node):
    """Base's grad_fn after an in-place op on one of its views: grads for the untouched
    elements pass through, the view's elements go through the wrapped op's node."""

    def __init__(self, base_edge: Edge, base: Tensor, index: np.ndarray, fn: Node) -> None:
        super().__init__([base_edge, *fn.next_edges[1:]])
        self.index = index
        self.fn = fn
        self.input_metadata = [base._meta()]

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        g = grads[0]
        if g is None:
            return [None] * len(self.next_edges)
        result = ops.clone(g)
        res = self.fn.apply([ops.gather(result, self.index, "IndexBackward0")])
        out: list[Tensor | None] = [None if res[0] is None
                                    else ops.index_put(result, self.index, res[0])]
        return out + list(res[1:])

    def release_variables(self) -> None:
        self.fn.release_variables()


# ---- the in-place ops ------------------------------------------------------------------

def _operand(x: Any) -> Tensor:
    return ops.wrap(x)


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


def neg_(self: Tensor) -> Tensor:
    with no_grad():
        r = ops.neg(self)
    return apply_inplace(self, ops.NEG, r, [])


def exp_(self: Tensor) -> Tensor:
    with no_grad():
        r = ops.exp(self)
    return apply_inplace(self, ops.EXP, r, [])


def clamp_(self: Tensor, min: float | None = None, max: float | None = None) -> Tensor:
    with no_grad():
        r = ops.clamp(self, min, max)
    return apply_inplace(self, ops.CLAMP, r, [], min=min, max=max)


ZERO = OpSpec("ZeroBackward0", ("self",), backward=lambda c, g: [ops.zeros_like(g)])
FILL = OpSpec("FillBackward2", ("self",), backward=lambda c, g: [ops.zeros_like(g)])
COPY = OpSpec("CopyBackwards", ("self", "src"),
              backward=lambda c, g: c.grads(lambda: ops.zeros_like(g),
                                            lambda: ops.to(g, c.src_device, c.src_dtype)))


def zero_(self: Tensor) -> Tensor:
    return apply_inplace(self, ZERO, ops.zeros_like(self), [])


def fill_(self: Tensor, value: Any) -> Tensor:
    return apply_inplace(self, FILL, ops.new(np.full(self.shape, value), self.dtype, self.device),
                         [])


def copy_(self: Tensor, src: Any) -> Tensor:
    src = ops.wrap(src)
    ops.broadcast_shape(tuple(self.shape), tuple(src.shape))
    values = ops.new(np.broadcast_to(src._data, self.shape), self.dtype, self.device)
    return apply_inplace(self, COPY, values, [src], src_device=src.device, src_dtype=src.dtype)


def squeeze_(self: Tensor, dim: int) -> Tensor:
    """Metadata-only in-place squeeze, as ATen's matmul uses it (SqueezeBackward4)."""
    sizes = tuple(self.shape)
    d = ops.wrap_dim(dim, self.ndim)
    if self.shape[d] == 1:
        self._data = np.squeeze(self._data, d)
    self._version_counter.bump()
    if self.requires_grad and is_grad_enabled():
        node: OpNode = build_node(SQUEEZE4, [engine.gradient_edge(self)], [self], self,
                                  {"dim": (d,), "self_sym_sizes": sizes})
        node.input_metadata = [self._meta()]
        self._set_grad_fn(node)
    return self


SQUEEZE4 = OpSpec("SqueezeBackward4", ("self",),
                  backward=lambda c, g: [views.reshape(g, c.self_sym_sizes)])


# ---- __setitem__ -------------------------------------------------------------------------

def setitem(self: Tensor, index: Any, value: Any) -> None:
    """Basic index: copy_ into the view (CopySlices on the base). Advanced index:
    index_put_ on the tensor itself (IndexPutBackward0)."""
    value_t = ops.wrap(value)
    if views._is_advanced(index):
        positions = views.advanced_positions(self, index)
        with no_grad():
            r = ops.index_put(self, positions, value_t.to(self.dtype))
        apply_inplace(self, ops.INDEX_PUT, r, [value_t], index=positions)
        return
    copy_(views.getitem(self, index), value_t)

