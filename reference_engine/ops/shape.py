"""Shape ops whose results are copies (issue 24): flip, roll, rot90, repeat/tile,
repeat_interleave, narrow_copy, unsafe_split/unsafe_split_with_sizes/unsafe_chunk,
constant_pad_nd, block_diag, sum_to_size, and the joins torch composes of atleast_Nd and
cat (hstack, vstack, dstack, column_stack) or of meshgrid and stack (cartesian_prod).

Formulas from derivatives.yaml and FunctionsManual.cpp, written in engine ops so that
create_graph differentiates them again; the composites are ATen's (TensorShape.cpp), so
their graphs are torch's.
"""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import messages, views_multi_output
from ..autograd_meta import OpSpec, differentiable, record, record_multi_output
from ..tensor import Tensor
from . import common, joining, shape_views
from .basic import copying, reductions, view_making, views
from .basic import indexing as index_ops


def _ints(v: int | Sequence[int]) -> list[int]:
    return [v] if isinstance(v, int) else [int(x) for x in v]


# ---- flip, roll, rot90 --------------------------------------------------------------------

FLIP = OpSpec("FlipBackward0", ("self",), backward=lambda c, g: [flip(g, c.dims)],
              jvp=lambda c: flip(c.self_t, c.dims))   # auto_linear


def flip(self: Tensor, dims: Sequence[int]) -> Tensor:
    ds = tuple(common.wrap_dim(d, self.ndim) for d in _ints(dims))
    out = common.new(np.flip(self._data, ds) if self.ndim else self._data, self.dtype,
                     self.device)
    return record(FLIP, out, [self], dims=ds)


def fliplr(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError(messages.flip_ndim(2))
    return flip(self, [1])


def flipud(self: Tensor) -> Tensor:
    if self.ndim < 1:
        raise RuntimeError(messages.flip_ndim(1))
    return flip(self, [0])


ROLL = OpSpec("RollBackward0", ("self",),
              backward=lambda c, g: [roll(g, [-s for s in c.shifts], c.dims)],
              jvp=lambda c: roll(c.self_t, c.shifts, c.dims))   # auto_linear


def roll(self: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] = ()) -> Tensor:
    """ATen's roll_common: without dims the flattened tensor rolls (still one node)."""
    sh, ds = _ints(shifts), _ints(dims)
    if not sh:
        raise RuntimeError(messages.ROLL_SHIFTS_REQUIRED)
    if not ds and len(sh) == 1:
        data = np.roll(self._data.reshape(-1), sh[0]).reshape(self.shape)
        return record(ROLL, common.new(data, self.dtype, self.device), [self], shifts=sh,
                      dims=ds)
    if len(sh) != len(ds):
        raise RuntimeError(messages.roll_align(len(sh), len(ds)))
    if self.ndim == 0:   # roll wraps its dims with wrap_scalar=false
        raise IndexError(messages.dim_of_0_dim(ds[0]))
    wrapped = [common.wrap_dim(d, self.ndim) for d in ds]
    data = np.roll(self._data, sh, wrapped)
    return record(ROLL, common.new(data, self.dtype, self.device), [self], shifts=sh,
                  dims=wrapped)


ROT90 = OpSpec("Rot90Backward0", ("self",),
               backward=lambda c, g: [rot90(g, -c.k, c.dims)],
               jvp=lambda c: rot90(c.self_t, c.k, c.dims))   # auto_linear


def rot90(self: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    ds = _ints(dims)
    if len(ds) != 2:
        raise RuntimeError(messages.rot90_rotation_dims(len(ds)))
    if self.ndim < 2:
        raise RuntimeError(messages.rot90_total_dims(self.ndim))
    if ds[0] == ds[1] or abs(ds[0] - ds[1]) == self.ndim:
        raise RuntimeError(messages.rot90_same_dims(ds[0], ds[1]))
    axes = (common.wrap_dim(ds[0], self.ndim), common.wrap_dim(ds[1], self.ndim))
    # ATen's rot90: k = 1 and 3 are a flip (a fresh tensor) then transpose_, so the result is
    # a transposed layout (reshaping it copies: CloneBackward0, UnsafeViewBackward0); k = 2
    # a flip of both dims, k = 0 a contiguous clone
    m = k % 4
    if m in (1, 3):
        flipped = np.ascontiguousarray(np.flip(self._data, axes[1] if m == 1 else axes[0]))
        out = common.new(np.swapaxes(flipped, *axes), self.dtype, self.device, order="K")
    else:
        out = common.new(np.rot90(self._data, m, axes), self.dtype, self.device)
    return record(ROT90, out, [self], k=k, dims=ds)


# ---- repeat, tile, repeat_interleave ------------------------------------------------------


def _repeat_backward(c: Any, g: Tensor) -> Tensor:
    """FunctionsManual's repeat_backward: sum the leading new dims, then each repeated dim
    split as (repeat, size) and summed over the repeats; the grad itself where no dim is
    repeated (so a create_graph grad has torch's nodes: no view, and a size-1 dim keeps
    its 1 through the sum)."""
    shape, repeats = c.self_sym_sizes, c.repeats
    if 0 in repeats:
        return common.new(np.zeros(shape), g.dtype, g.device)
    for _ in range(len(repeats) - len(shape)):
        g = reductions.sum(g, 0)
    grad_size: list[int] = []
    sum_dims: list[int] = []
    for size, r in zip(shape, repeats[len(repeats) - len(shape):], strict=True):
        if r != 1:   # split as (repeats, size), summed over the repeats (a size of 1 too)
            sum_dims.append(len(grad_size))
            grad_size.append(r)
        grad_size.append(size)
    if not sum_dims:   # every dim repeated once: torch returns the grad as it is, no view
        return g
    return reductions.sum(views.reshape(g, tuple(grad_size)), sum_dims, keepdim=False)


REPEAT = OpSpec("RepeatBackward0", ("self",), backward=lambda c, g: [_repeat_backward(c, g)],
                jvp=lambda c: repeat(c.self_t, c.repeats))   # auto_linear


def _shape_args(args: tuple[Any, ...]) -> list[int]:
    if len(args) == 1 and isinstance(args[0], list | tuple):
        return [int(a) for a in args[0]]
    return [int(a) for a in args]


def repeat(self: Tensor, *sizes: Any) -> Tensor:
    """Tensor.repeat(*sizes) (or a list of them)."""
    repeats = _shape_args(sizes)
    if len(repeats) < self.ndim:
        raise RuntimeError(messages.REPEAT_DIMS)
    padded = (1,) * (len(repeats) - self.ndim) + tuple(self.shape)
    data = np.tile(self._data.reshape(padded), repeats)
    return record(REPEAT, common.new(data, self.dtype, self.device), [self], repeats=repeats,
                  self_sym_sizes=tuple(self.shape))


def tile(self: Tensor, dims: Sequence[int]) -> Tensor:
    reps = _ints(dims)
    return repeat(self, [1] * (self.ndim - len(reps)) + reps)


def repeat_interleave(self: Tensor, repeats: int | Tensor, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """ATen's repeat_interleave: an int repeat is unsqueeze, expand, clone and flatten; a
    tensor of repeats an index_select of the repeated positions."""
    t = self
    if dim is None:
        t, d = views.flatten(self), 0
    else:
        d = common.wrap_dim(dim, self.ndim)
    if isinstance(repeats, Tensor) and repeats.numel() != 1:
        index = np.repeat(np.arange(t.shape[d]), repeats._data.astype(np.int64))
        return index_ops.index_select(t, d, common.new(index, repeats.dtype, repeats.device))
    r = int(repeats.item()) if isinstance(repeats, Tensor) else repeats
    u = views.unsqueeze(t, d + 1)
    shape = list(u.shape)
    shape[d + 1] = r
    return views.flatten(copying.clone(reductions.expand(u, shape)), d, d + 1)


# ---- narrow_copy, unsafe_split(_with_sizes), unsafe_chunk ------------------------------------

NARROW_COPY = OpSpec("NarrowCopyBackward0", ("self",),
                     backward=lambda c, g: [common.scatter_add(
                         g, c.index, c.self_sym_sizes, "SliceBackwardBackward0", distinct=True,
                         back_name="SliceBackward0")],
                     jvp=lambda c: narrow_copy(c.self_t, c.dim, c.start, c.length))


def narrow_copy(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    """narrow_copy_dense_cpu_out's checks, in its order."""
    if self.ndim == 0:
        raise RuntimeError(messages.NARROW_0_DIM)
    if dim >= 0 and dim >= self.ndim:
        raise RuntimeError(messages.NARROW_COPY_DIM)
    d = common.wrap_dim(dim, self.ndim)
    size = self.shape[d]
    if not -size <= start <= size:
        raise IndexError(messages.narrow_start_out_of_range(size, start))
    s = start + size if start < 0 else start
    if length < 0 or s > size - length:
        raise RuntimeError(messages.narrow_out_of_range(s, length, size))
    key = (builtins.slice(None),) * d + (builtins.slice(s, s + length),)
    out = common.new(self._data[key], self.dtype, self.device)
    index = view_making.flat_positions(self)[key] if differentiable([self]) else None
    return record(NARROW_COPY, out, [self], dim=d, start=s, length=length, index=index,
                  self_sym_sizes=tuple(self.shape))


UNSAFE_SPLIT = OpSpec("UnsafeSplitBackward0", ("self",),
                      backward=lambda c, gs: [joining.cat(
                          views_multi_output.filled_grads(c, gs), c.dim)])  # type: ignore[arg-type]


UNSAFE_SPLIT_WITH_SIZES = OpSpec(
    "UnsafeSplitWithSizesBackward0", ("self",),
    backward=lambda c, gs: [joining.cat(
        views_multi_output.filled_grads(c, gs), c.dim)])  # type: ignore[arg-type]


def unsafe_split(self: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """split's pieces without view tracking: they share self's memory (a write to one shows
    in self) but are no views: each has its own version counter, and one multi-output node
    (UnsafeSplitBackward0) whose outputs may be written in place."""
    d, sizes = views_multi_output.split_sizes(self, split_size, dim)
    outs = _pieces(self, d, sizes)
    if self.dtype.is_differentiable and differentiable([self]):
        record_multi_output(UNSAFE_SPLIT, self, outs,
                            {"dim": d, "split_size": split_size})
    shape_views.set_tangents(self, outs, lambda t: unsafe_split(t, split_size, d))
    return tuple(outs)


def unsafe_split_with_sizes(self: Tensor, split_sizes: Sequence[int], dim: int = 0
                            ) -> tuple[Tensor, ...]:
    """split_with_sizes's pieces without view tracking, as unsafe_split's
    (UnsafeSplitWithSizesBackward0); split_with_sizes's check of the sizes."""
    d, sizes = views_multi_output.checked_sizes(self, split_sizes, dim)
    outs = _pieces(self, d, sizes)
    if self.dtype.is_differentiable and differentiable([self]):
        record_multi_output(UNSAFE_SPLIT_WITH_SIZES, self, outs,
                            {"dim": d, "split_sizes": tuple(sizes)})
    shape_views.set_tangents(self, outs, lambda t: unsafe_split_with_sizes(t, sizes, d))
    return tuple(outs)


def _pieces(self: Tensor, d: int, sizes: list[int]) -> list[Tensor]:
    """Tensors sharing self's memory, `sizes` along dim d in turn (no views)."""
    starts = np.cumsum([0, *sizes]).tolist()
    return [Tensor(self._data[(builtins.slice(None),) * d + (builtins.slice(a, b),)],
                   self.dtype, self.device) for a, b in itertools.pairwise(starts)]


def unsafe_chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """chunk's checks; an empty dim's `chunks` empty pieces through unsafe_split_with_sizes."""
    d, by = views_multi_output.chunk_split(self, chunks, dim)
    if isinstance(by, list):
        return unsafe_split_with_sizes(self, by, d)
    return unsafe_split(self, by, d)


# ---- constant_pad_nd ----------------------------------------------------------------------

PAD = OpSpec("ConstantPadNdBackward0", ("self",),
             backward=lambda c, g: [constant_pad_nd(g, [-p for p in c.pad])],
             jvp=lambda c: constant_pad_nd(c.self_t, c.pad, 0))


def constant_pad_nd(self: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    """Pairs (left, right) from the last dim backwards; a negative pad crops."""
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError(messages.pad_length(len(pad)))
    if len(pad) // 2 > self.ndim:
        raise RuntimeError(messages.constant_pad_too_long(len(pad), self.ndim))
    shape = list(self.shape)
    src: list[builtins.slice] = [builtins.slice(None)] * self.ndim
    dst: list[builtins.slice] = [builtins.slice(None)] * self.ndim
    for i in range(len(pad) // 2):
        d = self.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        n = shape[d]
        shape[d] = n + left + right
        src[d] = builtins.slice(builtins.max(-left, 0), n - builtins.max(-right, 0))
        dst[d] = builtins.slice(builtins.max(left, 0), builtins.max(left, 0)
                                + builtins.max(n - builtins.max(-left, 0)
                                               - builtins.max(-right, 0), 0))
    data = np.full(shape, value, dtype=self.dtype.np)
    data[tuple(dst)] = self._data[tuple(src)]
    return record(PAD, common.new(data, self.dtype, self.device), [self], pad=pad)


# ---- block_diag ---------------------------------------------------------------------------


def _block_diag_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """block_diag_backward: each input's block sliced out; a 1-d input's block squeezed at
    -1 (a no-op node) and summed to its shape, a 0-d one's squeezed twice (the graph torch
    2.13 builds under create_graph)."""
    grads: list[Tensor | None] = []
    row = col = 0
    for shape in c.shapes:
        r, k = (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else shape
        piece = views.slice(views.slice(g, 0, row, row + r), 1, col, col + k)
        if len(shape) == 1:
            piece = reductions.sum_to(views.squeeze(piece, -1), shape)
        elif len(shape) == 0:
            piece = views.squeeze(views.squeeze(piece, -1), -1)
        grads.append(piece)
        row, col = row + r, col + k
    return grads


BLOCK_DIAG = OpSpec("BlockDiagBackward0", ("tensors",), backward=_block_diag_backward,
                    jvp=lambda c: block_diag(*c.tangents))   # auto_linear


def block_diag(*tensors: Tensor) -> Tensor:
    ts = list(tensors)
    for i, t in enumerate(ts):
        if t.ndim > 2:
            raise RuntimeError(messages.block_diag_dims(i, t.ndim))
    dims = [(1, 1) if t.ndim == 0 else (1, t.shape[0]) if t.ndim == 1 else tuple(t.shape)
            for t in ts]
    dt = common.result_dtype(ts) if ts else None
    data = np.zeros((builtins.sum(r for r, _ in dims), builtins.sum(k for _, k in dims)),
                    dtype=dt.np if dt is not None else np.float32)
    row = col = 0
    for t, (r, k) in zip(ts, dims, strict=True):
        data[row:row + r, col:col + k] = t._data.reshape(r, k)
        row, col = row + r, col + k
    if dt is None:
        return Tensor(data, common.dtypes.float32, common.dtypes.CPU)
    return record(BLOCK_DIAG, common.new(data, dt, common.common_device(ts)), ts,
                  shapes=[tuple(t.shape) for t in ts])


# ---- sum_to_size --------------------------------------------------------------------------


def sum_to_size(self: Tensor, *size: Any) -> Tensor:
    shape = tuple(_shape_args(size))
    lead = self.ndim - len(shape)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(shape, self.shape[lead:],
                                                           strict=True)):
        raise RuntimeError(messages.not_expandable(messages.sizes(shape),
                                                   messages.sizes(self.shape)))
    if shape and tuple(self.shape) == shape:   # at::sum_to: to () it always sums
        return self
    return reductions.sum_to(self, shape)


# ---- joins composed of atleast_Nd and cat --------------------------------------------------


def _nonempty(name: str, tensors: Sequence[Tensor]) -> list[Tensor]:
    ts = list(tensors)
    if not ts:
        raise RuntimeError(messages.stack_empty(name))
    return ts


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    ts = [shape_views.at1(t) for t in _nonempty("hstack", tensors)]
    return joining.cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    return joining.cat([shape_views.at2(t) for t in _nonempty("vstack", tensors)], 0)


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    return joining.cat([shape_views.at3(t) for t in _nonempty("dstack", tensors)], 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    ts = _nonempty("column_stack", tensors)
    return hstack([views.reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in ts])


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """ATen's cartesian_prod: one tensor is returned as is; more are meshgrid'ed ('ij'),
    each grid flattened, and stacked as columns. Every tensor must be 1-d, even a lone one."""
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(messages.cartesian_prod_not_1d(messages.sizes(t.shape)))
    if len(tensors) == 1:
        return tensors[0]
    grids = shape_views.meshgrid(*tensors, indexing="ij")
    return joining.stack([views.flatten(g) for g in grids], 1)
