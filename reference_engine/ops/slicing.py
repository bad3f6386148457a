"""torch.ops.aten.slice.Tensor: ATen's slice, the view every basic slice `x[a:b:c]` is made
of (views.slice, SliceBackward0), called as the aten op OpInfo's `slice` entry calls, with
its schema's defaults and its checks (TensorShape.cpp, slice): torch has no `torch.slice`,
so this is the row's only API (registry.ATEN_ONLY; the facade binds it to the overload)."""

from __future__ import annotations

from .. import messages
from ..tensor import Tensor
from . import common
from .basic import views


def slice(self: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
          step: int = 1) -> Tensor:
    """aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None,
    SymInt step=1): its checks in ATen's order (0-dim, the dim, the step); out-of-range
    bounds clamp as NumPy's positive-step slices do (start and end wrapped once, then clamped
    to [0, size], an end before the start an empty slice)."""
    if self.ndim == 0:
        raise IndexError(messages.SLICE_OF_0_DIM)
    d = common.wrap_dim(dim, self.ndim)
    if step <= 0:
        raise RuntimeError(messages.SLICE_STEP_NOT_POSITIVE)
    return views.slice(self, d, start, end, step)
