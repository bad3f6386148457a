"""Joining tensors: cat and stack (their backward slices or selects the grad apart)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from .common import _promotes, common_device, new, wrap_dim

CAT = OpSpec("CatBackward0", ("tensors",),
             backward=lambda c, g: [views.slice(g, c.dim, start, start + size)
                                    for start, size in c.pieces],
             jvp=lambda c: cat(c.tangents, c.dim))   # cat_jvp
STACK = OpSpec("StackBackward0", ("tensors",),
               backward=lambda c, g: [views.select(g, c.dim, i) for i in range(c.count)],
               jvp=lambda c: stack(c.tangents, c.dim))   # stack_jvp


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    ts = list(tensors)
    d = wrap_dim(dim, ts[0].ndim)
    for i, t in enumerate(ts[1:], start=1):
        for k in range(ts[0].ndim):
            if k != d and t.shape[k] != ts[0].shape[k]:
                raise RuntimeError(messages.cat_sizes(d, ts[0].shape[k], t.shape[k], i))
    dt = _promotes(ts)
    out = new(np.concatenate([t._data.astype(dt.np) for t in ts], axis=d), dt, common_device(ts))
    starts = np.cumsum([0] + [t.shape[d] for t in ts])
    pieces = [(int(s), t.shape[d]) for s, t in zip(starts, ts, strict=False)]
    return record(CAT, out, ts, dim=d, pieces=pieces)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    ts = list(tensors)
    d = wrap_dim(dim, ts[0].ndim + 1)
    dt = _promotes(ts)
    out = new(np.stack([t._data.astype(dt.np) for t in ts], axis=d), dt, common_device(ts))
    return record(STACK, out, ts, dim=d, count=len(ts))


# They import this module; used at call time.
from .. import views  # noqa: E402
