"""View ops: results share memory and the version counter with their base.

A view remembers where its elements sit in its root base as flat indices
(``_view_index``). That one array is enough to write a view's in-place update
back into the base's graph (CopySlices) and to rebuild the view's own grad_fn
(AsStridedBackward0) after its base changed in place, as torch does lazily.
"""

from __future__ import annotations

import builtins
import itertools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import dtypes, messages
from .autograd_meta import Ctx, OpNode, OpSpec, build_node, differentiable
from .autograd_meta import record as _record
from .grad_mode import is_grad_enabled
from .graph import node_class
from .tensor import Tensor

ViewFn = Callable[[np.ndarray], np.ndarray]


def _make_view(src: Tensor, fn: ViewFn, spec: OpSpec, forward_view: bool = True,
               **attrs: Any) -> Tensor:
    """A view of src through fn; a `forward_view` (every view op's) reads its tangent as the
    same view of its forward base's tangent (forward_ad.py)."""
    if src.is_inference():
        return _inference_alias(src, fn)
    base = src._base if src._base is not None else src
    out = Tensor(fn(src._data), src.dtype, src.device)
    out._base = base
    out._version_counter = base._version_counter
    parent = src._view_index if src._view_index is not None else _positions(base)
    out._view_index = fn(parent)
    out._view_version = base._version_counter.value
    out._view_differentiable = is_grad_enabled()
    if src._base is not None and is_grad_enabled():   # torch's propagate_creation_meta
        out._view_creation_meta = inplace.creation_meta(src)
    out._view_creation_meta = inplace.inference_mode_meta(src, out._view_creation_meta)
    if forward_view:
        _forward_view(out, src, fn)
    return _record(spec, out, [src], **attrs)


def _forward_view(out: Tensor, src: Tensor, fn: ViewFn) -> None:
    """Make out, fn's view of src, a forward view: its tangent is read from its forward base
    (forward_ad.fw_grad) at its positions there."""
    parent = src._fw_index if src._fw_base is not None else None
    out._fw_base = src._fw_base if src._fw_base is not None else src
    out._fw_index = fn(parent if parent is not None else _positions(src))


IDENTITY = OpSpec("Identity", ("self",))
# a C++ node without Python bindings of its own: a CppFunction named torch::autograd::Identity
node_class(IDENTITY.grad_fn, OpNode).name = lambda self: "torch::autograd::Identity"
node_class(IDENTITY.grad_fn, OpNode).__name__ = "CppFunction"


def make_dual_view(t: Tensor, primal: bool = False) -> Tensor:
    """The alias make_dual returns (ViewBackward0), or unpack_dual's primal (an Identity
    node): views of t in backward mode, not forward views, with no tangent of their own."""
    with forward_ad.suspended():
        if primal:
            return _make_view(t, lambda a: a.view(), IDENTITY, forward_view=False)
        return _make_view(t, lambda a: a.view(), VIEW, forward_view=False,
                          self_sym_sizes=tuple(t.shape))


def _inference_alias(src: Tensor, fn: ViewFn) -> Tensor:
    """An inference tensor has no autograd metadata, so torch tracks no view of it (in or
    out of inference mode): the result shares its memory but is a plain inference tensor,
    a leaf without _base that does not require grad."""
    data = fn(src._data)
    if not data.flags.writeable and src._data.flags.writeable:
        # numpy hands out diagonal() and broadcast_to() read-only; with no _base to write
        # through, the alias writes its memory directly. An expanded alias is written only
        # by the ops that may write overlapping memory (zero_, fill_): every other in-place
        # op refuses it first (inplace.apply_inplace), as torch's TensorIterator does.
        data.flags.writeable = True
    out = Tensor(data, src.dtype, src.device)
    out._version_counter = src._version_counter
    return out


def _positions(t: Tensor) -> np.ndarray:
    return np.arange(t._data.size).reshape(t._data.shape)


AS_STRIDED = OpSpec("AsStridedBackward0", ("self",),
                    backward=lambda c, g: [as_strided_backward(g, c.index, c.base_shape)])


def regenerate_view_grad_fn(view: Tensor) -> None:
    """torch's VariableHooks::grad_fn: a view whose storage changed since its grad_fn was
    made gets a fresh AsStridedBackward0 pointing at the base's current history."""
    base = view._base
    assert base is not None and view._view_index is not None
    node = build_node(AS_STRIDED, [engine.gradient_edge(base)], [base], view,
                      {"index": view._view_index, "base_shape": tuple(base.shape)})
    view._set_grad_fn(node)


def _infer_shape(t: Tensor, shape: Sequence[int]) -> tuple[int, ...]:
    """ATen's infer_size (InferSize.h), its errors in its order."""
    shape = tuple(shape)
    if shape.count(-1) > 1:
        raise RuntimeError(messages.INFER_ONE_DIM)
    known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
    numel = t.numel()
    if numel == known or (-1 in shape and known > 0 and numel % known == 0):
        if -1 not in shape:
            return shape
        if known == 0:
            raise RuntimeError(messages.infer_zero_elements(messages.sizes(shape)))
        return tuple(numel // known if s == -1 else s for s in shape)
    raise RuntimeError(messages.invalid_shape(messages.sizes(shape), numel))


def _viewable(t: Tensor, shape: tuple[int, ...]) -> bool:
    try:
        np.reshape(t._data, shape, copy=False)
    except ValueError:
        return False
    return True


VIEW = OpSpec("ViewBackward0", ("self",),
              backward=lambda c, g: [reshape(g, c.self_sym_sizes)])
UNSAFE_VIEW = OpSpec("UnsafeViewBackward0", ("self",),
                     backward=lambda c, g: [reshape(g, c.self_sym_sizes)],
                     jvp=lambda c: reshape(c.self_t, tuple(c.result.shape)))


def view(self: Tensor, shape: Sequence[int]) -> Tensor:
    new_shape = _infer_shape(self, shape)
    if not _viewable(self, new_shape):
        raise RuntimeError(messages.VIEW_NOT_COMPATIBLE)
    return _make_view(self, lambda a: np.reshape(a, new_shape, copy=False), VIEW,
                      self_sym_sizes=tuple(self.shape))


ALIAS = OpSpec("AliasBackward0", ("self",))

RESHAPE_ALIAS = OpSpec("ReshapeAliasBackward0", ("self",),
                      backward=lambda c, g: [reshape(g, c.self_sym_sizes)])


def reshape(self: Tensor, shape: Sequence[int]) -> Tensor:
    """ATen's reshape: a contiguous tensor is view()ed; another one whose layout still
    allows a view (an expanded tensor) goes through _reshape_alias (its own node name);
    anything else is cloned and _unsafe_view()ed."""
    new_shape = _infer_shape(self, shape)
    if self._data.flags.c_contiguous:
        return view(self, new_shape)
    if _viewable(self, new_shape):
        return _make_view(self, lambda a: np.reshape(a, new_shape, copy=False), RESHAPE_ALIAS,
                          self_sym_sizes=tuple(self.shape))
    # ATen: clone to contiguous, then _unsafe_view (a fresh tensor, not a view).
    copied = ops.clone(self)
    out = Tensor(copied._data.reshape(new_shape), self.dtype, self.device)
    return _record(UNSAFE_VIEW, out, [copied], self_sym_sizes=tuple(self.shape))


T = OpSpec("TBackward0", ("self",), backward=lambda c, g: [t(g)])
TRANSPOSE = OpSpec("TransposeBackward0", ("self",),
                   backward=lambda c, g: [transpose(g, c.dim0, c.dim1)])
PERMUTE = OpSpec("PermuteBackward0", ("self",),
                 backward=lambda c, g: [permute(g, tuple(np.argsort(c.dims)))])


def t(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise RuntimeError(messages.t_dims(self.ndim))
    return _make_view(self, np.transpose, T)


def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    d0, d1 = common.wrap_dim(dim0, self.ndim), common.wrap_dim(dim1, self.ndim)
    # a 0-d tensor's transpose(0, 0) is an alias with torch's node (numpy has no axis 0)
    return _make_view(self, lambda a: np.swapaxes(a, d0, d1) if a.ndim else a[...], TRANSPOSE,
                      dim0=d0, dim1=d1)


def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    ds = tuple(common.wrap_dim(d, self.ndim) for d in dims)
    return _make_view(self, lambda a: np.transpose(a, ds), PERMUTE, dims=ds)


def unsqueeze_to(g: Tensor, dims: Sequence[int], sizes: Sequence[int]) -> Tensor:
    """torch's unsqueeze_to / unsqueeze_multiple: one unsqueeze per squeezed dim."""
    for d in sorted(dims):
        if len(sizes) > 0 and sizes[d] == 1:   # a 0-d input's dim 0 is squeezed by no one
            g = unsqueeze(g, d)
    return g


SQUEEZE0 = OpSpec("SqueezeBackward0", ("self",),
                  backward=lambda c, g: [unsqueeze_to(g, range(len(c.self_sym_sizes)),
                                                      c.self_sym_sizes)])
SQUEEZE1 = OpSpec("SqueezeBackward1", ("self",),
                  backward=lambda c, g: [unsqueeze_to(g, (c.dim,), c.self_sym_sizes)])
SQUEEZE2 = OpSpec("SqueezeBackward2", ("self",),
                  backward=lambda c, g: [unsqueeze_to(g, c.dim, c.self_sym_sizes)])
UNSQUEEZE = OpSpec("UnsqueezeBackward0", ("self",), backward=lambda c, g: [squeeze(g, c.dim)])
EXPAND = OpSpec("ExpandBackward0", ("self",),
                backward=lambda c, g: [reductions.sum_to(g, c.self_sym_sizes)])


def squeeze(self: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    sizes = tuple(self.shape)
    if not isinstance(dim, int) and dim is not None:
        ds = tuple(common.wrap_dim(d, self.ndim) for d in dim)
        # a 0-d tensor's dim 0 (wrap_dim takes it) has no size to squeeze
        drop = tuple(d for d in ds if self.ndim and self.shape[d] == 1)
        return _make_view(self, lambda a: np.squeeze(a, drop) if drop else a[...], SQUEEZE2,
                          dim=ds, self_sym_sizes=sizes)
    if dim is None:
        return _make_view(self, np.squeeze, SQUEEZE0, self_sym_sizes=sizes)
    d = common.wrap_dim(dim, self.ndim)
    if self.ndim == 0 or self.shape[d] != 1:
        return _make_view(self, lambda a: a[...], SQUEEZE1, dim=d, self_sym_sizes=sizes)
    return _make_view(self, lambda a: np.squeeze(a, d), SQUEEZE1, dim=d, self_sym_sizes=sizes)


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    d = common.wrap_dim(dim, self.ndim + 1)
    return _make_view(self, lambda a: np.expand_dims(a, d), UNSQUEEZE, dim=d)


def expand(self: Tensor, sizes: Sequence[int]) -> Tensor:
    sizes = tuple(sizes)
    lead = len(sizes) - self.ndim
    target = []
    for i, s in enumerate(sizes):
        old = self._data.shape[i - lead] if i >= lead else 1
        new = old if s == -1 else s
        if i >= lead and old != 1 and old != new:
            raise RuntimeError(messages.expand_size(new, old, i, messages.sizes(sizes),
                                                    messages.sizes(self.shape)))
        target.append(new)
    shape = tuple(target)
    return _make_view(self, lambda a: _expand_array(a, shape), EXPAND,
                      self_sym_sizes=self._data.shape)


def _expand_array(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """torch's expand strides: 0 for new leading dims and for size-1 dims that grow; a dim
    that keeps its size keeps its stride (np.broadcast_to zeroes every size-1 dim, which
    changes what matmul's should_fold sees)."""
    lead = len(shape) - a.ndim
    kept = [0 if old == 1 and new != 1 else st
            for old, new, st in zip(a.shape, shape[lead:], a.strides, strict=True)]
    strides = (0,) * lead + tuple(kept)
    if not a.flags.c_contiguous:
        return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=False)
    # the same read-only view of a's memory, made directly on a's buffer (as_strided goes
    # through __array_interface__ in Python: the cost of an expand)
    out = np.ndarray(shape, a.dtype, buffer=a, strides=strides)
    out.flags.writeable = False
    return out


# ---- indexing ----------------------------------------------------------------------------

def _scatter_back(name: str) -> Callable[[Any, Tensor], list[Tensor | None]]:
    # the backward of SliceBackwardBackward0 is the slice again (SliceBackward0), and so on
    view_name = name.replace("BackwardBackward0", "Backward0")
    return lambda c, g: [common.scatter_add(g, c.index, c.self_sym_sizes, name, distinct=True,
                                            back_name=view_name)]


SELECT = OpSpec("SelectBackward0", ("self",), backward=_scatter_back("SelectBackwardBackward0"))
SLICE = OpSpec("SliceBackward0", ("self",), backward=_scatter_back("SliceBackwardBackward0"))


def select(self: Tensor, dim: int, index: int) -> Tensor:
    d = common.wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if not -size <= index < size:
        raise IndexError(messages.index_out_of_range(index, d, size))
    i = index % size
    key: tuple[Any, ...] = (builtins.slice(None),) * d + (i, Ellipsis)  # 0-d stays a view

    def fn(a: np.ndarray) -> np.ndarray:
        return a[key]
    # positions only for the backward: numbering every element of a large (expanded) tensor
    # is what indexing it without grad must not cost
    return _make_view(self, fn, SELECT, dim=d, self_sym_sizes=tuple(self.shape),
                      index=fn(_positions(self)) if differentiable([self]) else None)


def slice(self: Tensor, dim: int, start: int | None, end: int | None,
          step: int | None = 1) -> Tensor:
    d = common.wrap_dim(dim, self.ndim)
    key: tuple[Any, ...] = (builtins.slice(None),) * d + (builtins.slice(start, end, step),)

    def fn(a: np.ndarray) -> np.ndarray:
        return a[key]
    return _make_view(self, fn, SLICE, dim=d, self_sym_sizes=tuple(self.shape),
                      index=fn(_positions(self)) if differentiable([self]) else None)


def _is_advanced(item: Any) -> bool:
    """An index that copies (IndexBackward0): a list, an array, a tensor other than a 0-d
    integer one (which torch takes as a plain integer)."""
    if isinstance(item, Tensor):
        return not (item.ndim == 0 and item.dtype.category == 1)
    return isinstance(item, list | np.ndarray)


def _as_items(index: Any) -> tuple[Any, ...] | None:
    """torch's treatSequenceAsTuple: a tuple, or (numpy's old heuristic) a short list holding
    a sequence, tensor, slice, None or Ellipsis, is a tuple of indices; None otherwise."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and len(index) < 32 and any(
            isinstance(i, Tensor | list | tuple | builtins.slice) or i is None or i is Ellipsis
            for i in index):
        warnings.warn(messages.NON_TUPLE_SEQUENCE_INDEX, UserWarning, stacklevel=4)
        return tuple(index)
    return None


def _index_array(item: Any) -> np.ndarray:
    return item._data if isinstance(item, Tensor) else np.asarray(item)


def advanced_positions(self: Tensor, index: Any) -> np.ndarray:
    """Flat positions picked by an advanced (tensor/list/mask) index, as numpy picks them."""
    if _dims_of(index) > self.ndim:
        raise IndexError(messages.too_many_indices(self.ndim))
    return _pick(self, (_index_array(index),))


def _pick(t: Tensor, key: tuple[Any, ...]) -> np.ndarray:
    """Flat positions of t that numpy's key picks, after ATen's index checks (with its
    texts): mask shapes, index shapes that broadcast, indices in bounds."""
    dim, arrays = 0, []
    for item in key:
        if isinstance(item, np.ndarray) and item.dtype == np.bool_:
            for j in range(item.ndim):
                if dim + j >= t.ndim or item.shape[j] != t.shape[dim + j]:
                    raise IndexError(messages.mask_shape_mismatch(
                        messages.sizes(item.shape), j, messages.sizes(t.shape), dim + j))
            arrays.append((dim, item))
            dim += item.ndim
        elif isinstance(item, np.ndarray):
            arrays.append((dim, item))
            dim += 1
        else:
            dim += 1
    shapes = [a.shape for _, a in arrays if a.dtype != np.bool_]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(messages.index_shapes_mismatch(
            ", ".join(messages.sizes(s) for s in shapes))) from None
    k = 0  # ATen names the k-th index tensor's position, not the tensor's dim
    for d, a in arrays:
        if a.dtype == np.bool_:
            k += a.ndim  # a mask is expanded into one index tensor per dim (nonzero)
            continue
        if d < t.ndim:
            bad = a[(a < -t.shape[d]) | (a >= t.shape[d])]
            if bad.size:
                raise IndexError(messages.index_out_of_bounds(int(bad.reshape(-1)[0]), k,
                                                              t.shape[d]))
        k += 1
    return np.asarray(_positions(t)[key])


def _dims_of(item: Any) -> int:
    """How many dims of the indexed tensor an index item consumes."""
    if item is None or item is Ellipsis:
        return 0
    if _is_advanced(item):
        key = _index_array(item)
        return key.ndim if key.dtype == np.bool_ else 1
    return 1


def _apply_basic(self: Tensor, items: tuple[Any, ...], lone: bool
                 ) -> tuple[Tensor, tuple[Any, ...] | None]:
    """torch's applySlicing: the basic items become select/slice/unsqueeze steps, one view
    node each (a full slice inside a tuple is skipped); the advanced items are returned as
    the numpy key that picks from that view (None when there are none), which numpy places
    as torch's index() does once the integers are gone."""
    if lone and self.ndim == 0:
        # torch's fast paths for a lone int (applySelect) and a lone slice check the 0-dim case
        if isinstance(items[0], builtins.slice):
            raise IndexError(messages.SLICE_OF_0_DIM)
        if type(items[0]) is int:
            raise IndexError(messages.INDEX_OF_0_DIM if items[0] == 0
                             else messages.index_out_of_range(items[0], 0, 0))
    consumed = builtins.sum(_dims_of(i) for i in items)
    if consumed > self.ndim:
        raise IndexError(messages.too_many_indices(self.ndim))
    out, dim = self, 0
    key: list[Any] = []
    advanced = False
    for item in items:
        if item is None:
            out, dim = unsqueeze(out, dim), dim + 1
            key.append(builtins.slice(None))
        elif item is Ellipsis:
            n = self.ndim - consumed
            dim += n
            key.extend([builtins.slice(None)] * n)
        elif isinstance(item, builtins.slice):
            if item != builtins.slice(None) or lone:
                out = slice(out, dim, item.start, item.stop, item.step)
            dim += 1
            key.append(builtins.slice(None))
        elif _is_advanced(item):
            key.append(_index_array(item))
            dim += _dims_of(item)
            advanced = True
        else:
            out = select(out, dim, int(item))
    return out, (tuple(key) if advanced else None)


def getitem(self: Tensor, index: Any) -> Tensor:
    """Basic indexing decomposes into select/slice/unsqueeze steps, one node each, as in
    torch's python_variable_indexing; advanced items then make a copy (IndexBackward0) of
    that view."""
    items = _as_items(index)
    if items is None and _is_advanced(index):
        return common.gather(self, advanced_positions(self, index), "IndexBackward0")
    out, key = _apply_basic(self, (index,) if items is None else items, lone=items is None)
    if key is None:
        # ATen's get_item: an index that selects nothing (x[...], x[:, ...]) still returns a
        # new tensor, an alias view of self
        return _make_view(self, lambda a: a[...], ALIAS) if out is self else out
    return common.gather(out, _pick(out, key), "IndexBackward0")


def advanced_target(self: Tensor, index: Any) -> tuple[Tensor, np.ndarray | None]:
    """For setitem: the tensor an index writes into (self, or the view its basic items
    make) and, for an advanced index, the flat positions in it (None for a basic index)."""
    items = _as_items(index)
    if items is None and _is_advanced(index):
        return self, advanced_positions(self, index)
    out, key = _apply_basic(self, (index,) if items is None else items, lone=items is None)
    return out, None if key is None else _pick(out, key)


# ---- more single-output views -------------------------------------------------------------

def narrow(self: Tensor, dim: int, start: int | Tensor, length: int) -> Tensor:
    """torch.narrow is slice(dim, start, start + length): a SliceBackward0 view (ATen's
    narrow_symint, its checks in its order; a Tensor start is a 0-d integer one)."""
    if isinstance(start, Tensor):
        if start.ndim != 0 or start.dtype.category != 1:
            raise RuntimeError(messages.NARROW_START_TENSOR)
        start = int(start.item())
    if self.ndim == 0:
        raise RuntimeError(messages.NARROW_0_DIM)
    if length < 0:
        raise RuntimeError(messages.NARROW_NEGATIVE_LENGTH)
    d = common.wrap_dim(dim, self.ndim)
    return slice(self, d, *narrow_bounds(self.shape[d], start, length))


def narrow_bounds(size: int, start: int, length: int) -> tuple[int, int]:
    """narrow's start and end after its bound checks (shared with narrow_copy)."""
    if not -size <= start <= size:
        raise IndexError(messages.narrow_start_out_of_range(size, start))
    s = start + size if start < 0 else start
    if s > size - length:
        raise RuntimeError(messages.narrow_out_of_range(s, length, size))
    return s, s + length


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if self.ndim == 0:
        return reshape(self, (1,))
    s, e = common.wrap_dim(start_dim, self.ndim), common.wrap_dim(end_dim, self.ndim)
    if s == e:
        return self
    shape = (*self.shape[:s], int(np.prod(self.shape[s:e + 1], dtype=np.int64)),
             *self.shape[e + 1:])
    return reshape(self, shape)


DIAGONAL = OpSpec("DiagonalBackward0", ("self",),
                  backward=_scatter_back("DiagonalBackwardBackward0"))


def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    d1, d2 = common.wrap_dim(dim1, self.ndim), common.wrap_dim(dim2, self.ndim)
    if d1 == d2:
        raise RuntimeError(messages.diagonal_dims_identical(dim1, dim2))

    def fn(a: np.ndarray) -> np.ndarray:
        return np.diagonal(a, offset, d1, d2)
    return _make_view(self, fn, DIAGONAL, index=fn(_positions(self)), offset=offset,
                      dim1=d1, dim2=d2, self_sym_sizes=tuple(self.shape))


# ---- multi-output views: unbind, split, chunk ------------------------------------------------
# One node with an output per view (output_nr i). torch marks each view as created by a
# multi-output node (CreationMeta::MULTI_OUTPUT_NODE): modifying one in place is an error.
MULTI_OUTPUT_NODE = "MULTI_OUTPUT_NODE"   # inplace.MULTI_OUTPUT_NODE is this one


class MultiOutputNode(OpNode):
    """An OpNode whose formula receives the grads of all its outputs (None for unused)."""

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        if all(g is None for g in grads):
            return [None] * len(self.next_edges)
        return list(self.spec.backward(Ctx(self), grads))  # type: ignore[arg-type]


def _filled(c: Any, grads: list[Tensor | None]) -> list[Tensor]:
    """Undefined grads of unused outputs become zeros of that output's shape."""
    return [g if g is not None else common.new(np.zeros(meta.shape), meta.dtype, meta.device)
            for g, meta in zip(grads, c._node.input_metadata, strict=True)]


def _make_multi_view(src: Tensor, fns: Sequence[ViewFn], spec: OpSpec,
                     **attrs: Any) -> tuple[Tensor, ...]:
    if src.is_inference():
        return tuple(_inference_alias(src, fn) for fn in fns)
    base = src._base if src._base is not None else src
    parent = src._view_index if src._view_index is not None else _positions(base)
    outs = []
    for fn in fns:
        out = Tensor(fn(src._data), src.dtype, src.device)
        out._base = base
        out._version_counter = base._version_counter
        out._view_index = fn(parent)
        out._view_version = base._version_counter.value
        out._view_differentiable = is_grad_enabled()
        if is_grad_enabled():
            out._view_creation_meta = MULTI_OUTPUT_NODE
        out._view_creation_meta = inplace.inference_mode_meta(src, out._view_creation_meta)
        _forward_view(out, src, fn)
        outs.append(out)
    if src.dtype.is_floating_point and differentiable([src]):
        record_multi_output(spec, src, outs, attrs)
    return tuple(outs)


def record_multi_output(spec: OpSpec, src: Tensor, outs: Sequence[Tensor],
                        attrs: dict[str, Any]) -> None:
    """One node of `spec` over src whose outputs are all of `outs` (unbind, var_mean)."""
    node = build_node(spec, [engine.gradient_edge(src)], [src], outs[0], attrs)
    multi = node_class(spec.grad_fn, MultiOutputNode)(spec, node.next_edges, node.attrs)
    multi.saved = node.saved
    multi.input_metadata = [o._meta() for o in outs]
    for i, out in enumerate(outs):
        out._set_grad_fn(multi, i)


UNBIND = OpSpec("UnbindBackward0", ("self",),
                backward=lambda c, gs: [joining.stack(_filled(c, gs), c.dim)])  # type: ignore[arg-type]
SPLIT = OpSpec("SplitBackward0", ("self",),
               backward=lambda c, gs: [joining.cat(_filled(c, gs), c.dim)])  # type: ignore[arg-type]
SPLIT_WITH_SIZES = OpSpec("SplitWithSizesBackward0", ("self",),
                          backward=lambda c, gs: [joining.cat(_filled(c, gs), c.dim)])  # type: ignore[arg-type]


def _picker(key: tuple[Any, ...]) -> ViewFn:
    return lambda a: a[key]


def unbind(self: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    if self.ndim == 0:   # unbind wraps its dim with wrap_scalar=false
        raise IndexError(messages.dim_of_0_dim(dim))
    d = common.wrap_dim(dim, self.ndim)
    fns = [_picker((builtins.slice(None),) * d + (i, Ellipsis)) for i in range(self.shape[d])]
    return _make_multi_view(self, fns, UNBIND, dim=d)


def _split_at(self: Tensor, d: int, sizes: Sequence[int], spec: OpSpec,
              **attrs: Any) -> tuple[Tensor, ...]:
    starts = np.cumsum([0, *sizes])
    fns = [_picker((builtins.slice(None),) * d + (builtins.slice(int(a), int(b)),))
           for a, b in itertools.pairwise(starts)]
    return _make_multi_view(self, fns, spec, dim=d, self_sym_sizes=tuple(self.shape), **attrs)


def split(self: Tensor, split_size: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    d = common.wrap_dim(dim, self.ndim)
    n = self.shape[d]
    if not isinstance(split_size, int):
        sizes = [int(s) for s in split_size]
        if builtins.sum(sizes) != n:
            raise RuntimeError(messages.split_sizes_wrong_sum(n, d, list(sizes)))
        return _split_at(self, d, sizes, SPLIT_WITH_SIZES, split_sizes=tuple(sizes))
    step = builtins.max(split_size, 1)
    sizes = [builtins.min(step, n - s) for s in range(0, n, step)] or [0]
    return _split_at(self, d, sizes, SPLIT, split_size=split_size)


def chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """torch.chunk is split(ceil(size / chunks)): SplitBackward0."""
    d = common.wrap_dim(dim, self.ndim)
    size = -(-self.shape[d] // chunks)
    return split(self, size, d)



# ---- metadata-only in-place views of a plain tensor: t_, transpose_, squeeze_, unsqueeze_ ----

T1 = OpSpec("TBackward1", ("self",), backward=lambda c, g: [t(g)])
TRANSPOSE1 = OpSpec("TransposeBackward1", ("self",),
                    backward=lambda c, g: [transpose(g, c.dim0, c.dim1)])
SQUEEZE3 = OpSpec("SqueezeBackward3", ("self",),
                  backward=lambda c, g: [unsqueeze_to(g, range(len(c.self_sym_sizes)),
                                                      c.self_sym_sizes)])
SQUEEZE5 = OpSpec("SqueezeBackward5", ("self",),
                  backward=lambda c, g: [unsqueeze_to(g, c.dim, c.self_sym_sizes)])
UNSQUEEZE1 = OpSpec("UnsqueezeBackward1", ("self",), backward=lambda c, g: [squeeze(g, c.dim)])


def restride_(self: Tensor, fn: ViewFn, spec: OpSpec, **attrs: Any) -> Tensor:
    """Change self's shape/strides in place: version bump, history rebased onto spec.

    On a view (torch's inplace-view ops re-view the base): the view keeps its base and its
    creation meta, only its geometry changes, and it is checked like any in-place op on a
    view (views made under no_grad, by a multi-output op or in a custom Function refuse)."""
    inplace.check_inplace(self)
    edge = engine.gradient_edge(self)
    old = Tensor(self._data, self.dtype, self.device)
    self._data = fn(self._data)
    if self._view_index is not None:
        self._view_index = fn(self._view_index)
    # the tangent is restrided with it: a forward view's positions in its base, or its own
    if self._fw_index is not None:
        self._fw_index, self._fw_view_of = fn(self._fw_index), None
    elif self._fw is not None:
        level, tangent = self._fw
        self._fw = (level, _make_view(tangent, fn, ALIAS))
    self._version_counter.bump()
    if edge[0] is not None and is_grad_enabled():
        node = build_node(spec, [edge], [old], self, attrs)
        self._set_grad_fn(node)
    return self


def t_(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise RuntimeError(messages.t_dims(self.ndim))
    return restride_(self, np.transpose, T1)


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    d0, d1 = common.wrap_dim(dim0, self.ndim), common.wrap_dim(dim1, self.ndim)
    return restride_(self, lambda a: np.swapaxes(a, d0, d1), TRANSPOSE1, dim0=d0, dim1=d1)


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    d = common.wrap_dim(dim, self.ndim + 1)
    return restride_(self, lambda a: np.expand_dims(a, d), UNSQUEEZE1, dim=d)


def squeeze_(self: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    sizes = tuple(self.shape)
    if dim is None:
        return restride_(self, np.squeeze, SQUEEZE3, self_sym_sizes=sizes)
    if isinstance(dim, int):
        return inplace.squeeze_(self, dim)
    ds = tuple(common.wrap_dim(d, self.ndim) for d in dim)
    drop = tuple(d for d in ds if sizes[d] == 1)
    return restride_(self, lambda a: np.squeeze(a, drop) if drop else a, SQUEEZE5, dim=ds,
                      self_sym_sizes=sizes)


# ---- as_strided: the views torch's backward formulas take of a fresh buffer ------------

def _strided(index: np.ndarray) -> ViewFn:
    """The NumPy view of a contiguous array at flat positions `index`. Every view's index is
    affine in its coordinates (offset + sum of coordinate * stride), so its strides can be
    read off the index."""
    offset = int(index.flat[0]) if index.size else 0
    # a view without elements has no stride to read, and needs none
    strides = tuple(int(np.take(index, 1, axis=d).flat[0]) - offset if n > 1 and index.size
                    else 0 for d, n in enumerate(index.shape))

    def pick(a: np.ndarray) -> np.ndarray:
        assert a.flags.c_contiguous, "as_strided of a non-contiguous array"
        return np.lib.stride_tricks.as_strided(a.reshape(-1)[offset:], index.shape,
                                               tuple(s * a.itemsize for s in strides))
    positions = np.arange(int(index.max()) + 1 if index.size else 0)
    assert np.array_equal(pick(positions), index), "a view index that is not affine"
    return pick


def as_strided_view(t: Tensor, index: np.ndarray) -> Tensor:
    """t.as_strided(...) at the flat positions `index` of contiguous t (AsStridedBackward0)."""
    return _make_view(t, _strided(index), AS_STRIDED, index=index, base_shape=tuple(t.shape))


def as_strided_backward(g: Tensor, index: np.ndarray, base_shape: tuple[int, ...]) -> Tensor:
    """torch's as_strided_backward for a contiguous input geometry (FunctionsManual.cpp), so
    that its graph under create_graph is torch's: squeeze the grad's size-1 dims
    (SqueezeBackward1), sum its stride-0 dims (SumBackward1), copy it into a zero storage
    through the output geometry (CopySlices) and return the storage viewed with the input
    geometry (AsStridedBackward0)."""
    n = int(np.prod(base_shape, dtype=np.int64))
    if index.size == 0:
        return Tensor(np.zeros(base_shape, g.dtype.np), g.dtype, g.device)
    for d in reversed(range(index.ndim)):
        if index.shape[d] == 1:
            g, index = squeeze(g, d), np.squeeze(index, d)
        elif np.take(index, 1, axis=d).flat[0] == index.flat[0]:   # stride 0: an expand
            g, index = reductions.sum(g, d), np.take(index, 0, axis=d)
    if np.unique(index).size != index.size:
        # an overlapping output geometry (as_strided with overlapping strides): torch
        # index_add_s the flattened grad into the zero storage (IndexAddBackward0)
        storage = Tensor(np.zeros(n, g.dtype.np), g.dtype, g.device)
        positions = common.new(index.reshape(-1), dtypes.int64, g.device)
        storage = indexing.index_add(storage, 0, positions, reshape(g, (-1,)))
        return as_strided_view(storage, np.arange(n).reshape(base_shape))
    storage = Tensor(np.zeros(n, g.dtype.np), g.dtype, g.device)
    inplace.copy_(as_strided_view(storage, index), g)
    return as_strided_view(storage, np.arange(n).reshape(base_shape))


# They import this module; used at call time.
from . import engine, forward_ad, inplace  # noqa: E402
from .ops import common, indexing, joining, reductions  # noqa: E402
from .ops import elementwise as ops  # noqa: E402
