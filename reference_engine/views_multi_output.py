"""Multi-output views (unbind, split, chunk) and the node they share: one node with an output
per view (output_nr i); torch marks each view as created by a multi-output node
(CreationMeta::MULTI_OUTPUT_NODE), so modifying one in place is an error."""

from __future__ import annotations

import builtins
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import messages
from .autograd_meta import OpSpec, differentiable, record_multi_output
from .grad_mode import is_grad_enabled
from .ops import common, creation_meta, joining
from .ops.basic.view_making import ViewFn, flat_positions, inference_alias, set_forward_view
from .tensor import Tensor

# ---- multi-output views: unbind, split, chunk ------------------------------------------------
# One node with an output per view (output_nr i, autograd_meta.MultiOutputNode). torch marks
# each view as created by a multi-output node (CreationMeta::MULTI_OUTPUT_NODE, in
# ops/creation_meta.py with the other creation metas): modifying one in place is an error.


def filled_grads(c: Any, grads: list[Tensor | None]) -> list[Tensor]:
    """Undefined grads of unused outputs become zeros of that output's shape."""
    return [g if g is not None else common.new(np.zeros(meta.shape), meta.dtype, meta.device)
            for g, meta in zip(grads, c._node.input_metadata, strict=True)]


def _make_multi_view(src: Tensor, fns: Sequence[ViewFn], spec: OpSpec,
                     **attrs: Any) -> tuple[Tensor, ...]:
    if src.is_inference():
        return tuple(inference_alias(src, fn) for fn in fns)
    base = src._base if src._base is not None else src
    parent = src._view_index if src._view_index is not None else flat_positions(base)
    outs = []
    for fn in fns:
        out = Tensor(fn(src._data), src.dtype, src.device)
        # a view of a conj (neg) view reads conjugated (negated) too, as in torch
        out._is_conj, out._is_neg = src._is_conj, src._is_neg
        out._base = base
        out._version_counter = base._version_counter
        out._view_index = fn(parent)
        out._view_version = base._version_counter.value
        out._view_differentiable = is_grad_enabled()
        if is_grad_enabled():
            out._view_creation_meta = creation_meta.MULTI_OUTPUT_NODE
        out._view_creation_meta = creation_meta.inference_mode_meta(src, out._view_creation_meta)
        set_forward_view(out, src, fn)
        outs.append(out)
    if src.dtype.is_differentiable and differentiable([src]):
        record_multi_output(spec, src, outs, attrs)
    return tuple(outs)


UNBIND = OpSpec("UnbindBackward0", ("self",),
                backward=lambda c, gs: [joining.stack(filled_grads(c, gs), c.dim)])  # type: ignore[arg-type]
SPLIT = OpSpec("SplitBackward0", ("self",),
               backward=lambda c, gs: [joining.cat(filled_grads(c, gs), c.dim)])  # type: ignore[arg-type]
SPLIT_WITH_SIZES = OpSpec("SplitWithSizesBackward0", ("self",),
                          backward=lambda c, gs: [joining.cat(filled_grads(c, gs), c.dim)])  # type: ignore[arg-type]


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


def split_sizes(self: Tensor, split_size: int, dim: int) -> tuple[int, list[int]]:
    """split's checks in ATen's order (TensorShape.cpp) and its pieces' sizes along the
    wrapped dim: one piece, maybe empty, when split_size exceeds the dim's size."""
    if self.ndim == 0:
        raise RuntimeError(messages.SPLIT_0D)
    if split_size < 0:
        raise RuntimeError(messages.split_size_negative(split_size))
    d = common.wrap_dim(dim, self.ndim)
    n = self.shape[d]
    if split_size == 0 and n != 0:
        raise RuntimeError(messages.split_size_zero(n))
    step = builtins.max(split_size, 1)
    return d, [builtins.min(step, n - s) for s in range(0, n, step)] or [0]


def checked_sizes(self: Tensor, split_sizes: Sequence[int], dim: int) -> tuple[int, list[int]]:
    """split_with_sizes's checks in ATen's order: a negative entry before a wrong sum."""
    if self.ndim == 0:
        raise RuntimeError(messages.SPLIT_0D)
    d = common.wrap_dim(dim, self.ndim)
    sizes = [int(s) for s in split_sizes]
    if builtins.any(s < 0 for s in sizes):
        raise RuntimeError(messages.split_sizes_negative(sizes))
    if builtins.sum(sizes) != self.shape[d]:
        raise RuntimeError(messages.split_sizes_wrong_sum(self.shape[d], d, sizes))
    return d, sizes


def chunk_split(self: Tensor, chunks: int, dim: int) -> tuple[int, int | list[int]]:
    """chunk's checks and what it splits by: split's size ceil(n / chunks), or, when the
    dim is empty, `chunks` empty pieces through split_with_sizes (ATen keeps their count)."""
    if self.ndim == 0:
        raise RuntimeError(messages.CHUNK_0D)
    if chunks <= 0:
        raise RuntimeError(messages.chunk_count(chunks))
    d = common.wrap_dim(dim, self.ndim)
    n = self.shape[d]
    return d, [0] * chunks if n == 0 else -(-n // chunks)


def split(self: Tensor, split_size: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    if not isinstance(split_size, int):
        d, sizes = checked_sizes(self, split_size, dim)
        return _split_at(self, d, sizes, SPLIT_WITH_SIZES, split_sizes=tuple(sizes))
    d, sizes = split_sizes(self, split_size, dim)
    return _split_at(self, d, sizes, SPLIT, split_size=split_size)


def chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """torch.chunk is split(ceil(size / chunks)): SplitBackward0 (of an empty dim,
    split_with_sizes: SplitWithSizesBackward0)."""
    d, by = chunk_split(self, chunks, dim)
    return split(self, by, d)
