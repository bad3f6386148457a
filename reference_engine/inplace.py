"""In-place ops: write into the tensor's memory, bump the shared version counter, and
rebase the tensor's history onto the op's node.

On a view the history goes to the base instead, wrapped in CopySlices, and the
view's own grad_fn is rebuilt lazily (see views.regenerate_view_grad_fn).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import (
    dtypes,
    engine,
    forward_ad,
    messages,
    views,
    views_indexing,
    views_inplace,
    views_multi_output,
)
from .autograd_meta import OpNode, OpSpec, build_node, differentiable, save_result
from .grad_mode import is_grad_enabled, is_inference_mode_enabled, no_grad
from .graph import TASK_NODES, Edge, Node, node_class
from .ops import common, copying
from .ops import elementwise as ops
from .saved import short_name
from .tensor import Tensor

# torch's CreationMeta: how a view was made decides whether it may be modified in place.
DEFAULT = "DEFAULT"
NO_GRAD_MODE = "NO_GRAD_MODE"
MULTI_OUTPUT_NODE = views_multi_output.MULTI_OUTPUT_NODE  # made where multi-output views are
IN_CUSTOM_FUNCTION = "IN_CUSTOM_FUNCTION"
INFERENCE_MODE = "INFERENCE_MODE"


def creation_meta(t: Tensor) -> str:
    if t._view_creation_meta is not None:
        return t._view_creation_meta
    return DEFAULT if t._view_differentiable else NO_GRAD_MODE


def inference_mode_meta(src: Tensor, meta: str | None) -> str | None:
    """torch's get_creation_meta_in_mode and propagate_creation_meta for inference mode: a
    view made inside it is INFERENCE_MODE, and so is any view of such a view."""
    if is_inference_mode_enabled() or (src._base is not None
                                       and creation_meta(src) == INFERENCE_MODE):
        return INFERENCE_MODE
    return meta


def handle_view_on_rebase(t: Tensor, indirect: bool = False) -> None:
    """variable.cpp handle_view_on_rebase: raise if this view may not be rebased, either
    because it is modified in place (direct) or its base was (indirect)."""
    meta = creation_meta(t)
    if meta == DEFAULT:
        return
    fn = t._grad_fn
    name = None if fn is None else short_name(fn)
    header = messages.view_inplace_header(t._output_nr, name,
                                          no_grad=meta in (NO_GRAD_MODE, INFERENCE_MODE)
                                          or fn is None,
                                          indirect=indirect,
                                          inference=meta == INFERENCE_MODE)
    raise RuntimeError(header + messages.VIEW_INPLACE_REASON[meta])


def check_inplace(t: Tensor, others: Sequence[Tensor] = ()) -> None:
    """VariableTypeUtils.h check_inplace: only when grad mode is on and some operand
    requires grad."""
    if not is_grad_enabled():
        return
    if not (t.requires_grad or any(o.requires_grad for o in others)):
        return
    # C++ is_leaf() reads the grad_fn_ field: checking must not regenerate a view's grad_fn
    # (which would raise the indirect "its base ... has been modified" error instead).
    if t._base is not None:
        handle_view_on_rebase(t)
        if t.requires_grad and t._base._grad_fn is None:
            raise RuntimeError(messages.VIEW_OF_LEAF_INPLACE)
    if t.requires_grad and t._grad_fn is None:
        raise RuntimeError(messages.LEAF_INPLACE)


def internal_overlap(t: Tensor) -> bool:
    """at::has_internal_overlap == Yes: a dim of stride 0 and size > 1 (an expanded tensor,
    such as the grad sum() hands back), where several elements share one memory location.
    A tensor without elements is non-overlapping and dense (torch's first test), whatever
    its strides: NumPy gives an empty array stride 0."""
    if t._data.size == 0:
        return False
    return any(st == 0 and n > 1 for st, n in zip(t._data.strides, t.shape, strict=True))


def _memory_span(a: np.ndarray) -> tuple[int, int] | None:
    """[first byte, end) of a non-overlapping and dense array (torch's condition for judging
    overlap at all); None for any other layout ("too hard" in torch: not checked)."""
    if a.size == 0 or any(st < 0 for st in a.strides):
        return None
    expected = a.itemsize
    for stride, n in sorted(zip(a.strides, a.shape, strict=True)):
        if n == 1:
            continue
        if stride != expected:
            return None
        expected *= n
    start = a.__array_interface__["data"][0]
    return start, start + a.size * a.itemsize


def partial_overlap(out: Tensor, other: Tensor) -> bool:
    """at::get_overlap_status == PARTIAL: the two share memory without being the same span
    with the same strides (that, `a.add_(a)`, is FULL and allowed; `m.add_(m.t())` is not)."""
    a, b = _memory_span(out._data), _memory_span(other._data)
    if a is None or b is None:
        return False
    if a == b:
        return out._data.strides != other._data.strides
    return a[0] < b[1] and b[0] < a[1]


def apply_inplace(self: Tensor, spec: OpSpec, result: Tensor, others: Sequence[Tensor],
                  idempotent: bool = False, **attrs: Any) -> Tensor:
    """Make self hold result's values, as op spec applied to (self, *others) in place.
    `idempotent` ops (zero_, fill_ with a number) may write overlapping memory; every other
    kernel's TensorIterator refuses, before anything is written or counted."""
    check_inplace(self, others)
    if not idempotent and internal_overlap(self):
        raise RuntimeError(messages.INTERNAL_OVERLAP)
    if any(partial_overlap(self, o) for o in others):
        raise RuntimeError(messages.PARTIAL_OVERLAP)
    if not np.can_cast(result.dtype.np, self.dtype.np, casting="same_kind") \
            and result.dtype is not self.dtype:
        raise RuntimeError(messages.cannot_cast(result.dtype.scalar_name, self.dtype.scalar_name))
    track = differentiable([self, *others]) and self.dtype.is_floating_point
    old_edge = engine.gradient_edge(self)
    # A formula that reads `self` needs the value from before the write: torch saves a clone.
    reads_self = any("self" in spec.saves.get(n, ()) for n in spec.inputs)
    original = copying.clone(self) if track and reads_self else self
    # torch's VariableType saves the inputs before the kernel writes: an input that cannot
    # be saved (an inference tensor) fails with self untouched, and an operand sharing self's
    # storage (a.mul_(a), another view of the same base) keeps its grad_fn from before and is
    # saved at its old version, so backward then finds it modified. The result is saved after.
    node = None
    if track:
        edges = [old_edge] + [engine.gradient_edge(o) for o in others]
        node = build_node(spec, edges, [original, *others], self, attrs, with_result=False)
    write(self, dtypes.cast(np.broadcast_to(result._data, self.shape), self.dtype.np))
    self._version_counter.bump()
    if forward_ad.active():   # result, computed out of place, carries the new tangent
        forward_ad.update_inplace(self, forward_ad.fw_grad(result), others)
    if node is not None:
        save_result(node, self)
        rebase_history(self, node)
        saved_result = getattr(node, "saved", {}).get("result")
        if saved_result is not None and self._base is not None:
            # torch saves the output after the rebase, reading the view's new grad_fn
            saved_result.saved_in_place_on_view(self.grad_fn)
    return self


# Called with every tensor about to be written in place, before the write: torch's
# allow_mutation_on_saved_tensors (autograd_graph) clones what was saved of it there, as
# torch's _CloneArgBeforeMutateMode does below autograd, once the inputs are saved.
BEFORE_WRITE: list[Callable[[Tensor], None]] = []


def write(t: Tensor, values: np.ndarray) -> None:
    """Store values into t's memory. numpy hands out some views read-only (diagonal): those
    are written through their positions in the base, which is the same memory."""
    for hook in BEFORE_WRITE:
        hook(t)
    if t._data.flags.writeable or t._base is None or t._view_index is None:
        t._data[...] = values
        return
    t._base._data.put(t._view_index, values)


def rebase_history(t: Tensor, node: Node) -> None:
    if t._base is None:
        t._set_grad_fn(node)
        return
    base = t._base
    assert t._view_index is not None
    copy_slices = CopySlices(engine.gradient_edge(base), base, t._view_index, node)
    base._set_grad_fn(copy_slices)
    # variable.cpp rebase_history ends with `self.grad_fn()`: the view's grad_fn is
    # regenerated now, onto the CopySlices (an AsStridedBackward0 made before later nodes).
    views.regenerate_view_grad_fn(t)


class CopySlices(Node):
    """Base's grad_fn after an in-place op on one of its views: grads for the untouched
    elements pass through, the view's elements go through the wrapped op's node."""

    def __init__(self, base_edge: Edge, base: Tensor, index: np.ndarray, fn: Node) -> None:
        super().__init__([base_edge, *fn.next_edges[1:]])
        self.index = index
        self.fn: Node | None = fn
        self.input_metadata = [base._meta()]

    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        g = grads[0]
        if g is None:
            return [None] * len(self.next_edges)
        if self.fn is None:
            # torch drops the wrapped node when the graph is freed (release_variables), so a
            # second pass fails here even when that node saved nothing
            raise RuntimeError(messages.BACKWARD_TWICE)
        # torch's CopySlices::apply_impl, op for op, so that under create_graph the grad's
        # graph is torch's: result.copy_(grad) (CopyBackwards), the view's slice of it
        # (AsStridedBackward0), fn applied to a clone of the slice, written back into the
        # slice in place (CopySlices over result).
        meta = self.input_metadata[0]
        result = copy_(Tensor(np.empty(meta.shape, g.dtype.np), g.dtype, g.device), g)
        grad_slice = views.as_strided_view(result, self.index)
        # torch adds the wrapped node's first next node (the view's old history, which the
        # backward may not reach) to the running task, so that the node computes that grad.
        wanted = TASK_NODES[-1]
        if wanted is not None and self.fn.next_edges[0][0] is not None:
            wanted.add(self.fn.next_edges[0][0])
        res = self.fn.apply([copying.clone(grad_slice)])
        if res[0] is None:
            return [None, *res[1:]]
        copy_(grad_slice, res[0])
        return [result, *res[1:]]

    def release_variables(self) -> None:
        self.fn = None


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


def clamp_(self: Tensor, min: float | None = None, max: float | None = None) -> Tensor:
    with no_grad():
        r = ops.clamp(self, min, max)
    return apply_inplace(self, ops.CLAMP, r, [], min=min, max=max)


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
    from .ops import indexing
    with no_grad():
        r = indexing.masked_fill(self, mask, value)
    if isinstance(value, Tensor):
        return apply_inplace(self, indexing.MASKED_FILL_TENSOR, r, [value], mask=mask)
    return apply_inplace(self, indexing.MASKED_FILL, r, [], mask=mask)


ZERO = OpSpec("ZeroBackward0", ("self",), backward=lambda c, g: [common.zeros_like(g)])
FILL = OpSpec("FillBackward2", ("self",), backward=lambda c, g: [common.zeros_like(g)])
COPY = OpSpec("CopyBackwards", ("self", "src"),
              backward=lambda c, g: c.grads(lambda: common.zeros_like(g),
                                            lambda: copying.to(g, c.src_device, c.src_dtype)))


def _copy_backwards_name(self: Node) -> str:
    return "torch::autograd::CopyBackwards"   # a hand-written C++ node: named in full


node_class(COPY.grad_fn, OpNode).name = _copy_backwards_name


def zero_(self: Tensor) -> Tensor:
    return apply_inplace(self, ZERO, common.zeros_like(self), [], idempotent=True)


def fill_(self: Tensor, value: Any) -> Tensor:
    # fill_(Tensor) checks overlap; fill_(Scalar) does not (writing one value twice is fine).
    value_t = common.new(np.full(self.shape, value), self.dtype, self.device)
    return apply_inplace(self, FILL, value_t,
                         [], idempotent=not isinstance(value, Tensor))


def copy_(self: Tensor, other: Any) -> Tensor:
    other = common.wrap(other)
    common.broadcast_shape(tuple(self.shape), tuple(other.shape))
    values = common.new(np.broadcast_to(other._data, self.shape), self.dtype, self.device)
    other_t = forward_ad.fw_grad(other)
    if other_t is not None:   # copy_'s jvp: self_t.copy_(src_t), src_t broadcast to self
        with forward_ad.suspended():
            forward_ad.set_fw_grad(values, copying.clone(views.expand(other_t, self.shape)))
    # ATen's copy_impl returns before its TensorIterator when the source is self's very data (same
    # start, sizes, strides, dtype): `g.copy_(g)` on an expanded g passes the overlap checks
    return apply_inplace(self, COPY, values, [other], idempotent=_same_data(self, other),
                         src_device=other.device, src_dtype=other.dtype)


def _same_data(a: Tensor, b: Tensor) -> bool:
    x, y = a._data, b._data
    return (x.__array_interface__["data"][0] == y.__array_interface__["data"][0]
            and x.shape == y.shape and x.strides == y.strides and a.dtype is b.dtype)


def squeeze_(self: Tensor, dim: int) -> Tensor:
    """In-place squeeze of one dim (SqueezeBackward4), as Tensor.squeeze_(dim) and ATen's
    matmul use it: a metadata change like the other in-place view ops (views_inplace.restride_)."""
    sizes = tuple(self.shape)
    d = common.wrap_dim(dim, self.ndim)
    keep = self.shape[d] != 1
    return views_inplace.restride_(self, lambda a: a if keep else np.squeeze(a, d), SQUEEZE4,
                           dim=(d,), self_sym_sizes=sizes)


SQUEEZE4 = OpSpec("SqueezeBackward4", ("self",),
                  backward=lambda c, g: [views.unsqueeze_to(g, c.dim, c.self_sym_sizes)])


# ---- __setitem__ -------------------------------------------------------------------------

def setitem(self: Tensor, index: Any, value: Any) -> None:
    """Basic index: copy_ into the view (CopySlices on the base). Advanced index: index_put_
    on the tensor, or on the view its basic items make (IndexPutBackward0, under a
    CopySlices for a view); the value's leading 1-dims are viewed away first, as
    THPVariable_setitem does (a ViewBackward0 under IndexPutBackward0)."""
    value_t = common.wrap(value)
    target, positions = views_indexing.advanced_target(self, index)
    if positions is None:
        _copy_to(target, value_t)
        return
    value_t = _without_leading_ones(value_t)
    try:
        np.broadcast_shapes(tuple(value_t.shape), positions.shape)
    except ValueError:
        raise RuntimeError(messages.index_put_shape_mismatch(
            messages.sizes(value_t.shape), messages.sizes(positions.shape))) from None
    with no_grad():
        r = common.index_put(target, positions, copying.to(value_t, target.dtype))
    apply_inplace(target, common.INDEX_PUT, r, [value_t], index=positions)


def _without_leading_ones(t: Tensor, always: bool = False) -> Tensor:
    """at::indexing::slicePrefix1sSize: a view without the leading size-1 dims. setitem's
    index_put_ path views only when there are some; copy_to views `always`."""
    sizes = list(t.shape)
    while sizes and sizes[0] == 1:
        sizes.pop(0)
    return t if len(sizes) == t.ndim and not always else views.view(t, tuple(sizes))


def _copy_to(dst: Tensor, src: Tensor) -> None:
    """torch's setitem copy (python_variable_indexing.cpp copy_to): equal shapes copy; a
    0-dim cpu value fills; otherwise the value's leading 1-dims are viewed away and it is
    expanded to the destination - which shows as ViewBackward0 / ExpandBackward0 nodes."""
    if tuple(dst.shape) == tuple(src.shape):
        copy_(dst, src)
        return
    if src.ndim == 0 and src.device.type == "cpu":
        copy_(dst, src)  # torch's fill_(Tensor): same values, same edges
        return
    src = _without_leading_ones(src, always=True)
    if tuple(src.shape) != tuple(dst.shape):
        common.broadcast_shape(tuple(dst.shape), tuple(src.shape))
        src = views.expand(src, tuple(dst.shape))
    copy_(dst, src)

