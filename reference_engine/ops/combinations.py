"""torch.combinations, as ATen composes it (Itertools.cpp): r views of the vector expanded to
an r-dimensional grid (meshgrid "ij"), each masked_select-ed with the mask of ordered
indices (i < j < ... or, with replacement, i <= j <= ...), stacked; so its graph is
torch's StackBackward0 over MaskedSelectBackward0, ExpandBackward0, ViewBackward0."""

from __future__ import annotations

import itertools

import numpy as np

from .. import dtypes, messages
from ..tensor import Tensor
from . import common, joining
from .basic import reductions, views
from .masked import masked_select


def _triu_mask(n: int, r: int, with_replacement: bool) -> np.ndarray:
    grids = np.meshgrid(*([np.arange(n)] * r), indexing="ij")
    mask = np.ones((n,) * r, bool)
    for a, b in itertools.pairwise(grids):
        mask &= (a <= b) if with_replacement else (a < b)
    return mask


def combinations(self: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """torch.combinations: the length-r combinations of a vector's elements, one a row."""
    if self.ndim != 1:
        raise RuntimeError(messages.combinations_not_vector(list(self.shape)))
    if r < 0:
        raise RuntimeError(messages.combinations_negative(r))
    if r == 0:
        return common.new(np.empty((0,), self.dtype.np), self.dtype, self.device)
    n = self.numel()
    # ATen's mask is full(true) then `mask *= ...` once per neighbouring pair: version r
    mask = common.written_in_place(
        common.new(_triu_mask(n, r, with_replacement), dtypes.bool_, self.device), r)
    grids = []
    for i in range(r):   # meshgrid "ij": the vector along dim i, expanded
        shape = [1] * r
        shape[i] = -1
        grid = reductions.expand(views.view(self, tuple(shape)), (n,) * r)
        grids.append(masked_select(grid, mask))
    return joining.stack(grids, 1)
