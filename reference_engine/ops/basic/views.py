"""View ops: results share memory and the version counter with their base (each made by
view_making.make_view). expand is in reductions.py, beside sum (each is the other's backward).

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

from ... import forward_ad, messages
from ...autograd_meta import OpNode, OpSpec, differentiable
from ...autograd_meta import record as _record
from ...graph import node_class
from ...tensor import Tensor
from .. import common
from . import copying
from .view_making import flat_positions, make_view

IDENTITY = OpSpec("Identity", ("self",))
# a C++ node without Python bindings of its own: a CppFunction named torch::autograd::Identity
node_class(IDENTITY.grad_fn, OpNode).name = lambda self: "torch::autograd::Identity"
node_class(IDENTITY.grad_fn, OpNode).__name__ = "CppFunction"


def make_dual_view(t: Tensor, primal: bool = False) -> Tensor:
    """The alias make_dual returns (ViewBackward0), or unpack_dual's primal (an Identity
    node): views of t in backward mode, not forward views, with no tangent of their own."""
    with forward_ad.suspended():
        if primal:
            return make_view(t, lambda a: a.view(), IDENTITY, forward_view=False)
        return make_view(t, lambda a: a.view(), VIEW, forward_view=False,
                         self_sym_sizes=tuple(t.shape))


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


def viewable(t: Tensor, shape: tuple[int, ...]) -> bool:
    try:
        np.reshape(t._data, shape, copy=False)
    except ValueError:
        return False
    return True


VIEW = OpSpec("ViewBackward0", ("self",),
              backward=lambda c, g: [reshape(g, c.self_sym_sizes)])
# auto_linear in derivatives.yaml: the tangent is _unsafe_view of the input's, no view
UNSAFE_VIEW = OpSpec("UnsafeViewBackward0", ("self",),
                     backward=lambda c, g: [reshape(g, c.self_sym_sizes)],
                     jvp=lambda c: unsafe_view(c.self_t, tuple(c.result.shape)))


def unsafe_view(self: Tensor, shape: tuple[int, ...]) -> Tensor:
    """ATen's _unsafe_view: self's memory with another shape, not tracked as a view (no
    _base, its own version counter)."""
    out = Tensor(self._data.reshape(shape), self.dtype, self.device)
    return _record(UNSAFE_VIEW, out, [self], self_sym_sizes=tuple(self.shape))


def view(self: Tensor, shape: Sequence[int]) -> Tensor:
    new_shape = _infer_shape(self, shape)
    if not viewable(self, new_shape):
        raise RuntimeError(messages.VIEW_NOT_COMPATIBLE)
    return make_view(self, lambda a: np.reshape(a, new_shape, copy=False), VIEW,
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
    if viewable(self, new_shape):
        return make_view(self, lambda a: np.reshape(a, new_shape, copy=False), RESHAPE_ALIAS,
                         self_sym_sizes=tuple(self.shape))
    # ATen: clone to contiguous, then _unsafe_view (a fresh tensor, not a view).
    return unsafe_view(copying.clone(self), new_shape)


T = OpSpec("TBackward0", ("self",), backward=lambda c, g: [t(g)])
TRANSPOSE = OpSpec("TransposeBackward0", ("self",),
                   backward=lambda c, g: [transpose(g, c.dim0, c.dim1)])
PERMUTE = OpSpec("PermuteBackward0", ("self",),
                 backward=lambda c, g: [permute(g, tuple(np.argsort(c.dims)))])


def t(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise RuntimeError(messages.t_dims(self.ndim))
    return make_view(self, np.transpose, T)


def transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    d0, d1 = common.wrap_dim(dim0, self.ndim), common.wrap_dim(dim1, self.ndim)
    # a 0-d tensor's transpose(0, 0) is an alias with torch's node (numpy has no axis 0)
    return make_view(self, lambda a: np.swapaxes(a, d0, d1) if a.ndim else a[...], TRANSPOSE,
                     dim0=d0, dim1=d1)


def permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    ds = tuple(common.wrap_dim(d, self.ndim) for d in dims)
    return make_view(self, lambda a: np.transpose(a, ds), PERMUTE, dims=ds)


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


def squeeze(self: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    sizes = tuple(self.shape)
    if not isinstance(dim, int) and dim is not None:
        ds = tuple(common.wrap_dim(d, self.ndim) for d in dim)
        # a 0-d tensor's dim 0 (wrap_dim takes it) has no size to squeeze
        drop = tuple(d for d in ds if self.ndim and self.shape[d] == 1)
        return make_view(self, lambda a: np.squeeze(a, drop) if drop else a[...], SQUEEZE2,
                         dim=ds, self_sym_sizes=sizes)
    if dim is None:
        return make_view(self, np.squeeze, SQUEEZE0, self_sym_sizes=sizes)
    d = common.wrap_dim(dim, self.ndim)
    if self.ndim == 0 or self.shape[d] != 1:
        return make_view(self, lambda a: a[...], SQUEEZE1, dim=d, self_sym_sizes=sizes)
    return make_view(self, lambda a: np.squeeze(a, d), SQUEEZE1, dim=d, self_sym_sizes=sizes)


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    d = common.wrap_dim(dim, self.ndim + 1)
    return make_view(self, lambda a: _unsqueeze_array(a, d), UNSQUEEZE, dim=d)


def _unsqueeze_array(a: np.ndarray, d: int) -> np.ndarray:
    """torch's unsqueeze strides (inferUnsqueezeGeometry): the new dim strides over the dim it
    is put before (its size times its stride, so 0 before a dim of size 0), 1 at the end;
    NumPy's expand_dims agrees wherever there are elements."""
    out = np.expand_dims(a, d)
    if a.size:
        return out
    new = a.shape[d] * a.strides[d] if d < a.ndim else a.itemsize
    return np.lib.stride_tricks.as_strided(out, out.shape, (*a.strides[:d], new, *a.strides[d:]))


# expand: ops/basic/reductions.py, beside sum (each is the other's backward)


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
        raise IndexError(messages.select_out_of_range(index, tuple(self.shape), d))
    i = index % size
    key: tuple[Any, ...] = (builtins.slice(None),) * d + (i, Ellipsis)  # 0-d stays a view

    def fn(a: np.ndarray) -> np.ndarray:
        return a[key]
    # positions only for the backward: numbering every element of a large (expanded) tensor
    # is what indexing it without grad must not cost
    return make_view(self, fn, SELECT, dim=d, self_sym_sizes=tuple(self.shape),
                     index=fn(flat_positions(self)) if differentiable([self]) else None)


def slice(self: Tensor, dim: int, start: int | None, end: int | None,
          step: int | None = 1) -> Tensor:
    d = common.wrap_dim(dim, self.ndim)
    key: tuple[Any, ...] = (builtins.slice(None),) * d + (builtins.slice(start, end, step),)

    def fn(a: np.ndarray) -> np.ndarray:
        out = a[key]
        if out.shape[d] or step in (None, 1):
            return out
        # NumPy gives a slice of no elements step 1; torch's stride is stride * step still
        strides = list(out.strides)
        strides[d] = a.strides[d] * step
        return np.lib.stride_tricks.as_strided(out, out.shape, tuple(strides))
    return make_view(self, fn, SLICE, dim=d, self_sym_sizes=tuple(self.shape),
                     index=fn(flat_positions(self)) if differentiable([self]) else None)



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
    return make_view(self, fn, DIAGONAL, index=fn(flat_positions(self)), offset=offset,
                     dim1=d1, dim2=d2, self_sym_sizes=tuple(self.shape))
