"""In-place machinery (the ops: ops/inplace_ops.py; copy_ and masked_fill_ here, at the
foot): write into the tensor's memory
(inplace_write.py), bump the shared version counter, and
rebase the tensor's history onto the op's node.

On a view the history goes to the base instead, wrapped in CopySlices, and the
view's own grad_fn is rebuilt lazily (see views_strided.regenerate_view_grad_fn).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import (
    dtypes,
    engine,
    forward_ad,
    messages,
)
from ...autograd_meta import OpNode, OpSpec, build_node, differentiable, save_result
from ...grad_mode import is_grad_enabled, no_grad
from ...graph import TASK_NODES, Edge, Node, node_class
from ...inplace_write import write
from ...saved import short_name
from ...tensor import Tensor
from .. import common
from ..creation_meta import DEFAULT, INFERENCE_MODE, NO_GRAD_MODE, creation_meta
from . import complex_numbers, copying, indexing, reductions, to_copy


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


def check_inplace(t: Tensor, others: Sequence[Tensor | None] = ()) -> None:
    """VariableTypeUtils.h check_inplace: only when grad mode is on and some operand
    requires grad."""
    if not is_grad_enabled():
        return
    if not (t.requires_grad or any(o is not None and o.requires_grad for o in others)):
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


def apply_inplace(self: Tensor, spec: OpSpec, result: Tensor, others: Sequence[Tensor | None],
                  idempotent: bool = False, **attrs: Any) -> Tensor:
    """Make self hold result's values, as op spec applied to (self, *others) in place.
    `idempotent` ops (zero_, fill_ with a number) may write overlapping memory; every other
    kernel's TensorIterator refuses, before anything is written or counted. An absent
    optional operand (clamp_'s bound) is None."""
    check_inplace(self, others)
    root = self._base
    if (root is not None and self._view_fn is not None and not root._data.flags.c_contiguous) or (
            self._view_fn is None and (self._is_conj or self._is_neg)):
        # a view of another dtype, a conj or a neg view is written through its root's
        # memory (write), which must be laid out as its storage
        raise NotImplementedError(messages.COMPLEX_VIEW_INPLACE_NOT_MODELLED)
    if not idempotent and internal_overlap(self):
        raise RuntimeError(messages.INTERNAL_OVERLAP)
    if any(o is not None and partial_overlap(self, o) for o in others):
        raise RuntimeError(messages.PARTIAL_OVERLAP)
    # TensorIterator: the output is not resized in place, so the operands' broadcast shape
    # must be self's (x.add_(y) with y of more dimensions)
    shape = np.broadcast_shapes(self.shape, result.shape)
    if shape != tuple(self.shape):
        raise RuntimeError(messages.output_broadcast(tuple(self.shape), shape))
    if not np.can_cast(result.dtype.np, self.dtype.np, casting="same_kind") \
            and result.dtype is not self.dtype:
        raise RuntimeError(messages.cannot_cast(result.dtype.scalar_name, self.dtype.scalar_name))
    track = differentiable([self, *others]) and self.dtype.is_differentiable
    # A formula that reads `self` needs the value from before the write: torch saves a clone.
    reads_self = any("self" in spec.saves.get(n, ()) for n in spec.inputs)
    original = copying.clone(self) if track and reads_self else self
    # torch's VariableType saves the inputs before the kernel writes: an input that cannot
    # be saved (an inference tensor) fails with self untouched, and an operand sharing self's
    # storage (a.mul_(a), another view of the same base) keeps its grad_fn from before and is
    # saved at its old version, so backward then finds it modified. The result is saved after.
    node = None
    if track:
        # (read only when recording: a view's grad_fn read regenerates it, which raises for
        # a view made under no_grad whose base changed since; torch reads it only then too)
        edges = [engine.gradient_edge(self)] + [
            (None, 0) if o is None else engine.gradient_edge(o) for o in others]
        node = build_node(spec, edges, [original, *others], self, attrs, with_result=False)
    # torch's in-place forward formulas read `result` as self after the write (self_p, in
    # self's dtype) and `self` as the original: where the out-of-place result was promoted
    # (a float16 self divided by a float64 dual), its tangent is computed again that way
    fw_original = None
    if forward_ad.active() and result.dtype is not self.dtype \
            and forward_ad.fw_grad(result) is not None:
        with no_grad():
            fw_original = copying.clone(self)   # (with self's tangent cloned, if it has one)
    write(self, dtypes.cast(np.broadcast_to(result._data, self.shape), self.dtype.np))
    self._version_counter.bump()
    if forward_ad.active():   # result, computed out of place, carries the new tangent
        # (only the operands whose tangents the formula reads: eq_'s reads self's alone)
        read = [o for name, o in zip(spec.inputs[1:], others, strict=False)
                if o is not None and (spec.jvp_reads is None or name in spec.jvp_reads)]
        new_t = forward_ad.fw_grad(result) if fw_original is None else \
            forward_ad.tangent_of(spec, [fw_original, *others], self, attrs)
        forward_ad.update_inplace(self, new_t, read)
    if node is not None:
        save_result(node, self)
        rebase_history(self, node)
        saved_result = getattr(node, "saved", {}).get("result")
        if saved_result is not None and self._base is not None:
            # torch saves the output after the rebase, reading the view's new grad_fn
            saved_result.saved_in_place_on_view(self.grad_fn)
    return self


def rebase_history(t: Tensor, node: Node) -> None:
    if t._base is None:
        t._set_grad_fn(node)
        return
    base = t._base
    assert t._view_index is not None
    copy_slices = CopySlices(engine.gradient_edge(base), base, t._view_index, node,
                             t._view_fn)
    base._set_grad_fn(copy_slices)
    # variable.cpp rebase_history ends with `self.grad_fn()`: the view's grad_fn is
    # regenerated now, onto the CopySlices (an AsStridedBackward0 made before later nodes).
    views_strided.regenerate_view_grad_fn(t)


class CopySlices(Node):
    """Base's grad_fn after an in-place op on one of its views: grads for the untouched
    elements pass through, the view's elements go through the wrapped op's node."""

    def __init__(self, base_edge: Edge, base: Tensor, index: np.ndarray, fn: Node,
                 view_fn: tuple | None = None) -> None:
        super().__init__([base_edge, *fn.next_edges[1:]])
        self.index = index
        self.view_fn = view_fn   # torch's view_fn, when the view changed dtype
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
        grad_slice = (views_strided.replay(self.view_fn, result) if self.view_fn is not None
                      else views_strided.as_strided_view(result, self.index))
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


# ---- the in-place ops the basic ops' formulas call: copy_ (CopySlices' and as_strided's
# formulas) and masked_fill_ (sgn's); the other in-place ops are above, in ops/inplace_ops.py

def masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
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
        return reductions.expand(c.src_t, tuple(c.self.shape))
    return copying.clone(c.src_t)


COPY = OpSpec("CopyBackwards", ("self", "src"),
              backward=lambda c, g: c.grads(lambda: common.zeros_like(g),
                                            lambda: to_copy.to(_r_to_c(g, c.src_dtype),
                                                               c.src_device, c.src_dtype)),
              jvp=_copy_jvp)


def _r_to_c(g: Tensor, dt: Any) -> Tensor:
    """CopyBackwards' handle_r_to_c: a real source takes the real part of a complex grad."""
    return complex_numbers.real(g) if g.dtype.is_complex and not dt.is_complex else g


def _copy_backwards_name(self: Node) -> str:
    return "torch::autograd::CopyBackwards"   # a hand-written C++ node: named in full


node_class(COPY.grad_fn, OpNode).name = _copy_backwards_name


def copy_(self: Tensor, other: Any) -> Tensor:
    other = common.wrap(other)
    shape = common.broadcast_shape(tuple(self.shape), tuple(other.shape))
    if shape != tuple(self.shape):   # (before NumPy's broadcast_to refuses it in its words)
        raise RuntimeError(messages.output_broadcast(tuple(self.shape), shape))
    src = dtypes.complex_values_into(other._data, self.dtype.np, warn=True)
    values = common.new(np.broadcast_to(src, self.shape), self.dtype, self.device)
    forward_ad.record_tangent(COPY, [self, other], values, {})
    # ATen's copy_impl returns before its TensorIterator when the source is self's very data (same
    # start, sizes, strides, dtype): `g.copy_(g)` on an expanded g passes the overlap checks
    return apply_inplace(self, COPY, values, [other], idempotent=_same_data(self, other),
                         src_device=other.device, src_dtype=other.dtype)


def _same_data(a: Tensor, b: Tensor) -> bool:
    x, y = a._data, b._data
    return (x.__array_interface__["data"][0] == y.__array_interface__["data"][0]
            and x.shape == y.shape and x.strides == y.strides and a.dtype is b.dtype)


# views_strided imports this module (CopySlices replays as_strided views, and as_strided's
# formula copies with copy_: the circle of ops/basic/__init__.py); used at call time.
from . import views_strided  # noqa: E402
