"""Shape ops whose results are views (issue 24): broadcast_to/broadcast_tensors, reshape_as,
ravel, unflatten, movedim, atleast_Nd, unfold, split_with_sizes, tensor_split and
h/v/dsplit, meshgrid; and the `*_copy` forms of the view ops, which are copies.

Each is written as torch's ATen composite (TensorShape.cpp) writes it, on the view ops of
views.py, so the graph it builds (ravel of a transposed tensor: CloneBackward0 then
ViewBackward0) is torch's. The view machinery (version counter, `_base`, view+in-place
rules) is views.py's.
"""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import forward_ad, messages, views_multi_output
from ..autograd_meta import OpNode, OpSpec, record, record_multi_output
from ..autograd_meta import differentiable as tracked
from ..grad_mode import enable_grad
from ..tensor import Tensor
from ..warn import warn_once
from . import common
from .basic import copying, reductions, view_making, views, views_strided

# ---- views composed of views.py's ---------------------------------------------------------


# contiguous, a clone where one is needed, is copying.py's (complex_numbers calls it); its
# row names it here
contiguous = copying.contiguous


# Tensor.view_as is tensor.py's (the engine's own modules call it); its row names it here
view_as = Tensor.view_as


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    return reductions.expand(self, tuple(other.shape))


def broadcast_to(self: Tensor, size: Sequence[int]) -> Tensor:
    return reductions.expand(self, size)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """ATen's expand_outplace: a tensor already of the broadcast shape is returned as is."""
    ts = list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], list | tuple) \
        else list(tensors)
    shape = common.broadcast_shapes(*(tuple(t.shape) for t in ts))
    return tuple(t if tuple(t.shape) == shape else reductions.expand(t, shape) for t in ts)


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return views.reshape(self, tuple(other.shape))


def ravel(self: Tensor) -> Tensor:
    """ATen's ravel is contiguous().view(-1): a copy (CloneBackward0) first if needed."""
    return views.view(self if self.is_contiguous() else copying.clone(self), (-1,))


def unflatten(self: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    d = common.wrap_dim(dim, self.ndim)
    inner = tuple(sizes)
    if -1 in inner:   # infer_size against the unflattened dim's size
        known = int(np.prod([s for s in inner if s != -1], dtype=np.int64))
        inner = tuple(self.shape[d] // known if s == -1 else s for s in inner)
    return views.view(self, (*self.shape[:d], *inner, *self.shape[d + 1:]))


def _as_list(dims: int | Sequence[int]) -> list[int]:
    return [dims] if isinstance(dims, int) else [int(d) for d in dims]


def movedim(self: Tensor, source: int | Sequence[int],
            destination: int | Sequence[int]) -> Tensor:
    if isinstance(source, int) != isinstance(destination, int):
        raise TypeError(messages.movedim_mixed(source, destination))
    src, dst = _as_list(source), _as_list(destination)
    if len(src) != len(dst):
        raise RuntimeError(messages.movedim_lengths(messages.sizes(src), messages.sizes(dst)))
    s = [common.wrap_dim(d, self.ndim) for d in src]
    t = [common.wrap_dim(d, self.ndim) for d in dst]
    for which, given, wrapped in (("source", src, s), ("destination", dst, t)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(messages.movedim_repeated(which, messages.sizes(given)))
    if self.ndim == 0:
        return view_making.make_view(self, lambda a: a[...], views.ALIAS)
    order = [-1] * self.ndim
    for a, b in zip(s, t, strict=True):
        order[b] = a
    rest = iter(d for d in range(self.ndim) if d not in s)
    order = [next(rest) if o == -1 else o for o in order]
    return views.permute(self, order)


def moveaxis(self: Tensor, source: int | Sequence[int],
             destination: int | Sequence[int]) -> Tensor:
    return movedim(self, source, destination)


def _atleast(n: int, one: Callable[[Tensor], Tensor],
             tensors: tuple[Any, ...]) -> Tensor | tuple[Tensor, ...]:
    """torch.atleast_Nd(*tensors): one tensor gives one result, a list or several a tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return one(tensors[0])
    ts = tensors[0] if len(tensors) == 1 else tensors
    return tuple(one(t) for t in ts)


def at1(t: Tensor) -> Tensor:
    return views.reshape(t, (1,)) if t.ndim == 0 else t


def at2(t: Tensor) -> Tensor:
    if t.ndim == 0:
        return views.reshape(t, (1, 1))
    return views.unsqueeze(t, 0) if t.ndim == 1 else t


def at3(t: Tensor) -> Tensor:
    if t.ndim == 0:
        return views.reshape(t, (1, 1, 1))
    if t.ndim == 1:
        return views.unsqueeze(views.unsqueeze(t, 0), -1)
    return views.unsqueeze(t, -1) if t.ndim == 2 else t


def atleast_1d(*tensors: Any) -> Tensor | tuple[Tensor, ...]:
    return _atleast(1, at1, tensors)


def atleast_2d(*tensors: Any) -> Tensor | tuple[Tensor, ...]:
    return _atleast(2, at2, tensors)


def atleast_3d(*tensors: Any) -> Tensor | tuple[Tensor, ...]:
    return _atleast(3, at3, tensors)


# ---- unfold: overlapping windows, a view ----------------------------------------------------

UNFOLD = OpSpec("UnfoldBackward0", ("self",),
                # unfold_backward adds each window back (windows overlap: no `distinct`); its
                # own backward takes the windows again
                backward=lambda c, g: [common.scatter_add(g, c.index, c.self_sym_sizes,
                                                          "UnfoldBackwardBackward0")])


def _unfold_fn(ndim: int, d: int, size: int, step: int) -> view_making.ViewFn:
    def fn(a: np.ndarray) -> np.ndarray:
        if ndim == 0:
            return np.reshape(a, (1,))
        w = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
        return w[(builtins.slice(None),) * d + (builtins.slice(None, None, step),)]
    return fn


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    d = common.wrap_dim(dimension, self.ndim)
    fn = _unfold_fn(self.ndim, d, size, step)
    return view_making.make_view(self, fn, UNFOLD, dimension=d, size=size, step=step,
                                 self_sym_sizes=tuple(self.shape),
                                 index=fn(view_making.flat_positions(self)))


# ---- as_strided: a view of the storage itself -------------------------------------------------


def as_strided(self: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """A view at offset + sum(coordinate * stride) of self's storage (AsStridedBackward0);
    modelled where self's elements are its whole storage in order (contiguous, and no view
    or a view of all of its base, such as make_dual's alias)."""
    index = strided_positions(self, size, stride, storage_offset)
    offset, steps = int(storage_offset or 0), tuple(int(s) for s in stride)

    def fn(a: np.ndarray) -> np.ndarray:
        # the strides asked for, also where the index cannot show them (a dim of size 0 or 1)
        return np.lib.stride_tricks.as_strided(a.reshape(-1)[offset:], index.shape,
                                               tuple(s * a.itemsize for s in steps))
    return views_strided.as_strided_view(self, index, fn)


def strided_positions(self: Tensor, size: Sequence[int], stride: Sequence[int],
                      storage_offset: int | None = None) -> np.ndarray:
    """as_strided's flat positions in self (as_strided_ restrides to them too)."""
    base = self._base
    whole = self._view_index is None or (base is not None and np.array_equal(
        self._view_index.reshape(-1), np.arange(base.numel())))
    if not (whole and self._data.flags.c_contiguous):
        raise NotImplementedError(messages.AS_STRIDED_OF_VIEW)
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    offset = 0 if storage_offset is None else int(storage_offset)
    span = 0 if 0 in size else 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride,
                                                                            strict=True))
    itemsize = self.dtype.bits // 8   # torch's element size (bfloat16: 2, in float32 storage)
    if span and (offset + span) > self.numel():
        raise RuntimeError(messages.as_strided_out_of_bounds(
            messages.sizes(size), messages.sizes(stride), offset, itemsize,
            (offset + span) * itemsize, self.numel() * itemsize))
    index = offset + builtins.sum((np.arange(n).reshape((-1,) + (1,) * (len(size) - 1 - d))
                                   * s for d, (n, s) in enumerate(zip(size, stride,
                                                                      strict=True))),
                                  np.zeros(size, dtype=np.int64))
    return np.asarray(index, dtype=np.int64)


# ---- splits ----------------------------------------------------------------------------------


def split_with_sizes(self: Tensor, split_sizes: Sequence[int], dim: int = 0
                     ) -> tuple[Tensor, ...]:
    return views_multi_output.split(self, list(split_sizes), dim)


def tensor_split(self: Tensor, indices_or_sections: int | Sequence[int] | Tensor,
                 dim: int = 0) -> tuple[Tensor, ...]:
    """One slice (SliceBackward0) per piece, as ATen's tensor_split."""
    if self.ndim == 0:
        raise RuntimeError(messages.tensor_split_dims(self.ndim))
    d = common.wrap_dim(dim, self.ndim)
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        arg = int(arg.item()) if arg.ndim == 0 else [int(i) for i in arg.tolist()]
    if isinstance(arg, int):
        if arg <= 0:
            raise RuntimeError(messages.tensor_split_sections(arg))
        n = self.shape[d]
        small, extra = divmod(n, arg)
        sizes = [small + 1] * extra + [small] * (arg - extra)
        bounds = list(itertools.pairwise(np.cumsum([0, *sizes]).tolist()))
    else:
        cuts = [0, *(int(i) for i in arg), None]
        bounds = list(itertools.pairwise(cuts))
    return tuple(views.slice(self, d, a, b) for a, b in bounds)


def _dim_split(name: str, least: int, self: Tensor, arg: Any, dim: int) -> tuple[Tensor, ...]:
    if self.ndim < least:
        raise RuntimeError(messages.split_min_dims(name, least, self.ndim))
    if isinstance(arg, int):
        if arg == 0 or self.shape[dim] % arg != 0:
            raise RuntimeError(messages.split_not_divisible(name, dim, self.shape[dim], arg))
    elif not isinstance(arg, list | tuple):
        raise TypeError(messages.split_sections_type(name, type(arg).__name__))
    return tensor_split(self, arg, dim)


def hsplit(self: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    return _dim_split("hsplit", 1, self, indices_or_sections, 0 if self.ndim == 1 else 1)


def vsplit(self: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    return _dim_split("vsplit", 2, self, indices_or_sections, 0)


def dsplit(self: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    return _dim_split("dsplit", 3, self, indices_or_sections, 2)


# ---- meshgrid ------------------------------------------------------------------------------


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """ATen's meshgrid: each tensor viewed along its own dim, then expanded ('xy' swaps the
    first two)."""
    ts = list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], list | tuple) \
        else list(tensors)
    if not ts:
        raise RuntimeError(messages.MESHGRID_EMPTY)
    if indexing is None:
        warn_once(messages.MESHGRID_INDEXING)
        indexing = "ij"
    for a, b in itertools.pairwise(ts):   # (TensorShape.cpp meshgrid: before the dims)
        if a.dtype != b.dtype:
            raise RuntimeError(messages.MESHGRID_DTYPES)
        if a.device != b.device:
            raise RuntimeError(messages.MESHGRID_DEVICES)
    for t in ts:
        if t.ndim > 1:
            raise RuntimeError(messages.MESHGRID_DIMS)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    grids = [reductions.expand(views.view(t, tuple(-1 if j == i else 1 for j in range(len(ts)))),
                          shape) for i, t in enumerate(ts)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# ---- the *_copy forms: the view op's values and backward, as a copy --------------------------
# torch's generated `<view>_copy` ops: the same derivatives as the view (its node named
# `<ViewNode>_copy`), a fresh tensor. Each is derived from its view op: the view is taken of
# a stand-in leaf, and its node's formula and attributes are reused for the copy's node.
# Its forward formula is the view op's too (gen_variable_type's copy ops reuse the view's
# `result: auto_linear`): the view of the input's tangent, which set_fw_grad keeps where it
# has the result's layout (a view of that tangent, sharing its version: view_copy of a
# contiguous input) and copies where not (version 1: expand_copy, t_copy, diagonal_copy);
# alias's formula is `self_t` itself (derivatives.yaml: `result: self_t`).

def _copy_spec(spec: OpSpec) -> OpSpec:
    return OpSpec(spec.grad_fn + "_copy", spec.inputs, spec.saves, spec.backward,
                  jvp=lambda c: c.view_call(c.self_t))


_COPY_SPECS: dict[str, OpSpec] = {}


def _copied(view_op: Callable[..., Any], *, contiguous: bool = False) -> Callable[..., Any]:
    """`view_op`'s *_copy. `contiguous`: the view is taken of a contiguous stand-in, as
    view_copy reshapes where the view's strides cannot be computed (a transposed self)."""
    def copy(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        data = np.ascontiguousarray(self._data) if contiguous else self._data
        stand_in = Tensor(data, self.dtype, self.device)
        # a node (or a tangent) is made only where the view would make one
        differentiable = self.dtype.is_differentiable and (
            tracked([self]) or (forward_ad.active() and forward_ad.fw_grad(self) is not None))
        if differentiable:
            stand_in.requires_grad_()
        with enable_grad():
            view = view_op(stand_in, *args, **kwargs)
        outs = [view] if isinstance(view, Tensor) else list(view)
        datas = [common.new(o._data, o.dtype, o.device) for o in outs]
        if not differentiable:
            return datas[0] if isinstance(view, Tensor) else tuple(datas)
        node = outs[0].grad_fn
        assert isinstance(node, OpNode), "a view op of a tensor that requires grad"
        spec = _COPY_SPECS.setdefault(node.spec.grad_fn, _copy_spec(node.spec))
        attrs = dict(node.attrs, view_call=(lambda t: t) if view_op is _alias
                     else lambda t: view_op(t, *args, **kwargs))
        if isinstance(view, Tensor):
            return record(spec, datas[0], [self], **attrs)
        # a multi-output view (unbind, split_with_sizes): one node for every output
        if tracked([self]) and self.dtype.is_differentiable:
            record_multi_output(spec, self, datas, attrs)
        set_tangents(self, datas, attrs["view_call"])
        return tuple(datas)
    copy.__name__ = view_op.__name__ + "_copy"
    return copy


def set_tangents(src: Tensor, outs: Sequence[Tensor],
                 op: Callable[[Tensor], Sequence[Tensor]]) -> None:
    """Forward mode through a multi-output op that is linear (auto_linear): each output's
    tangent is the op's output of src's tangent, set as an op result's (set_fw_grad's
    layout rule)."""
    tangent = forward_ad.fw_grad(src) if forward_ad.active() else None
    if tangent is not None:
        with forward_ad.suspended():
            pieces = op(tangent)
        for out, piece in zip(outs, pieces, strict=True):
            forward_ad.set_result_tangent(out, piece)


# Tensor's matrix properties, as the rows name them (tensor.py writes the properties)
def T(self: Tensor) -> Tensor:
    return self.T


def mT(self: Tensor) -> Tensor:
    return self.mT


def H(self: Tensor) -> Tensor:
    return self.H


def mH(self: Tensor) -> Tensor:
    return self.mH


expand_copy = _copied(reductions.expand)
view_copy = _copied(views.view, contiguous=True)
permute_copy = _copied(views.permute)
squeeze_copy = _copied(views.squeeze)
unsqueeze_copy = _copied(views.unsqueeze)
transpose_copy = _copied(views.transpose)
t_copy = _copied(views.t)
unbind_copy = _copied(views_multi_output.unbind)
diagonal_copy = _copied(views.diagonal)
unfold_copy = _copied(unfold)
split_with_sizes_copy = _copied(split_with_sizes)
as_strided_copy = _copied(as_strided)


def _alias(self: Tensor) -> Tensor:
    return view_making.make_view(self, lambda a: a[...], views.ALIAS)


alias_copy = _copied(_alias)
alias_copy.__name__ = "alias_copy"
