"""View ops: results share memory and the version counter with their base.

A view remembers where its elements sit in its root base as flat indices
(``_view_index``). That one array is enough to write a view's in-place update
back into the base's graph (CopySlices) and to rebuild the view's own grad_fn
(AsStridedBackward0) after its base changed in place, as torch does lazily.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import messages
from .autograd_meta import OpSpec, build_node
from .autograd_meta import record as _record
from .grad_mode import is_grad_enabled
from .tensor import Tensor

ViewFn = Callable[[np.ndarray], np.ndarray]


def _make_view(src: Tensor, fn: ViewFn, spec: OpSpec, **attrs: Any) -> Tensor:
    base = src._base if src._base is not None else src
    out = Tensor(fn(src._data), src.dtype, src.device)
    out._base = base
    out._version_counter = base._version_counter
    parent = src._view_index if src._view_index is not None else _positions(base)
    out._view_index = fn(parent)
    out._view_version = base._version_counter.value
    out._view_differentiable = is_grad_enabled()
    return _record(spec, out, [src], **attrs)


def _positions(t: Tensor) -> np.ndarray:
    return np.arange(t.numel()).reshape(t.shape)


AS_STRIDED = OpSpec("AsStridedBackward0", ("self",),
                    backward=lambda c, g: [ops.scatter_add(g, c.index, c.base_shape,
                                                           "AsStridedScatterBackward0")])


def regenerate_view_grad_fn(view: Tensor) -> None:
    """torch's VariableHooks::grad_fn: a view whose storage changed since its grad_fn was
    made gets a fresh AsStridedBackward0 pointing at the base's current history."""
    from .engine import gradient_edge
    base = view._base
    assert base is not None and view._view_index is not None
    node = build_node(AS_STRIDED, [gradient_edge(base)], [base], view,
                      {"index": view._view_index, "base_shape": tuple(base.shape)})
    view._set_grad_fn(node)


def _sizes(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _infer_shape(t: Tensor, shape: Sequence[int]) -> tuple[int, ...]:
    shape = tuple(shape)
    known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
    if shape.count(-1) == 1 and known != 0 and t.numel() % known == 0:
        return tuple(t.numel() // known if s == -1 else s for s in shape)
    if -1 in shape or known != t.numel():
        raise RuntimeError(messages.invalid_shape(_sizes(shape), t.numel()))
    return shape


def _viewable(t: Tensor, shape: tuple[int, ...]) -> bool:
    try:
        np.reshape(t._data, shape, copy=False)
    except ValueError:
        return False
    return True


VIEW = OpSpec("ViewBackward0", ("self",),
              backward=lambda c, g: [reshape(g, c.self_sym_sizes)])
UNSAFE_VIEW = OpSpec("UnsafeViewBackward0", ("self",),
                     backward=lambda c, g: [reshape(g, c.self_sym_sizes)])


def view(self: Tensor, shape: Sequence[int]) -> Tensor:
    new_shape = _infer_shape(self, shape)
    if not _viewable(self, new_shape):
        raise RuntimeError(messages.VIEW_NOT_COMPATIBLE)
    return _make_view(self, lambda a: np.reshape(a, new_shape, copy=False), VIEW,
                      self_sym_sizes=tuple(self.shape))


def reshape(self: Tensor, shape: Sequence[int]) -> Tensor:
    new_shape = _infer_shape(self, shape)
    if _viewable(self, new_shape):
        return view(self, new_shape)
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
    d0, d1 = ops.wrap_dim(dim0, self.ndim), ops.wrap_dim(dim1, self.ndim)
    return _make_view(self, lambda a: np.swapaxes(a, d0, d1), TRANSPOSE, dim0=d0, dim1=d1)


def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    ds = tuple(ops.wrap_dim(d, self.ndim) for d in dims)
    return _make_view(self, lambda a: np.transpose(a, ds), PERMUTE, dims=ds)


SQUEEZE0 = OpSpec("SqueezeBackward0", ("self",),
                  backward=lambda c, g: [reshape(g, c.self_sym_sizes)])
SQUEEZE1 = OpSpec("SqueezeBackward1", ("self",),
                  backward=lambda c, g: [reshape(g, c.self_sym_sizes)])
UNSQUEEZE = OpSpec("UnsqueezeBackward0", ("self",), backward=lambda c, g: [squeeze(g, c.dim)])
EXPAND = OpSpec("ExpandBackward0", ("self",),
                backward=lambda c, g: [ops.sum_to(g, c.self_sym_sizes)])


def squeeze(self: Tensor, dim: int | None = None) -> Tensor:
    sizes = tuple(self.shape)
    if dim is None:
        return _make_view(self, np.squeeze, SQUEEZE0, self_sym_sizes=sizes)
    d = ops.wrap_dim(dim, self.ndim)
    if self.ndim == 0 or self.shape[d] != 1:
        return _make_view(self, lambda a: a[...], SQUEEZE1, dim=d, self_sym_sizes=sizes)
    return _make_view(self, lambda a: np.squeeze(a, d), SQUEEZE1, dim=d, self_sym_sizes=sizes)


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    d = ops.wrap_dim(dim, self.ndim + 1)
    return _make_view(self, lambda a: np.expand_dims(a, d), UNSQUEEZE, dim=d)


def expand(self: Tensor, sizes: Sequence[int]) -> Tensor:
    sizes = tuple(sizes)
    lead = len(sizes) - self.ndim
    target = []
    for i, s in enumerate(sizes):
        old = self.shape[i - lead] if i >= lead else 1
        new = old if s == -1 else s
        if i >= lead and old != 1 and old != new:
            raise RuntimeError(messages.expand_size(new, old, i, _sizes(sizes),
                                                    _sizes(self.shape)))
        target.append(new)
    shape = tuple(target)
    return _make_view(self, lambda a: np.broadcast_to(a, shape), EXPAND,
                      self_sym_sizes=tuple(self.shape))


# ---- indexing ----------------------------------------------------------------------------

def _scatter_back(name: str) -> Callable[[Any, Tensor], list[Tensor | None]]:
    return lambda c, g: [ops.scatter_add(g, c.index, c.self_sym_sizes, name)]


SELECT = OpSpec("SelectBackward0", ("self",), backward=_scatter_back("SelectBackwardBackward0"))
SLICE = OpSpec("SliceBackward0", ("self",), backward=_scatter_back("SliceBackwardBackward0"))


def select(self: Tensor, dim: int, index: int) -> Tensor:
    d = ops.wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if not -size <= index < size:
        raise IndexError(messages.index_out_of_range(index, d, size))
    i = index % size
    key: tuple[Any, ...] = (builtins.slice(None),) * d + (i, Ellipsis)  # 0-d stays a view

    def fn(a: np.ndarray) -> np.ndarray:
        return a[key]
    return _make_view(self, fn, SELECT, index=fn(_positions(self)), dim=d,
                      self_sym_sizes=tuple(self.shape))


def slice(self: Tensor, dim: int, start: int | None, end: int | None,
          step: int | None = 1) -> Tensor:
    d = ops.wrap_dim(dim, self.ndim)
    key: tuple[Any, ...] = (builtins.slice(None),) * d + (builtins.slice(start, end, step),)

    def fn(a: np.ndarray) -> np.ndarray:
        return a[key]
    return _make_view(self, fn, SLICE, index=fn(_positions(self)), dim=d,
                      self_sym_sizes=tuple(self.shape))


def _is_advanced(item: Any) -> bool:
    return isinstance(item, Tensor | list | np.ndarray)


def advanced_positions(self: Tensor, index: Any) -> np.ndarray:
    """Flat positions picked by an advanced (tensor/list/mask) index, as numpy picks them."""
    key = index._data if isinstance(index, Tensor) else np.asarray(index)
    return np.asarray(_positions(self)[key])


def getitem(self: Tensor, index: Any) -> Tensor:
    """Basic indexing decomposes into select/slice/unsqueeze steps, one node each, as in
    torch's python_variable_indexing; an advanced index makes a copy (IndexBackward0)."""
    if _is_advanced(index):
        return ops.gather(self, advanced_positions(self, index), "IndexBackward0")
    items = index if isinstance(index, tuple) else (index,)
    if any(_is_advanced(i) for i in items):
        raise NotImplementedError("mixing advanced and basic indexing is not modelled")
    lone_slice = len(items) == 1 and isinstance(items[0], builtins.slice)
    consumed = builtins.sum(1 for i in items if i is not None and i is not Ellipsis)
    out, dim = self, 0
    for item in items:
        if item is None:
            out, dim = unsqueeze(out, dim), dim + 1
        elif item is Ellipsis:
            dim += self.ndim - consumed
        elif isinstance(item, builtins.slice):
            full = item == builtins.slice(None)
            if not full or lone_slice:   # torch skips a full slice inside a tuple index
                out = slice(out, dim, item.start, item.stop, item.step)
            dim += 1
        else:
            out = select(out, dim, int(item))
    return out


from . import ops  # noqa: E402  (ops imports this module; used at call time)
