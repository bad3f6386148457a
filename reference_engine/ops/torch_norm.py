"""torch.norm (Tensor.norm), as torch/functional.py's norm dispatches it: a string order
other than 'fro' over at most two dims (its 'nuc') is linalg.matrix_norm over `dim` (every
dim when None; ops/matrix_norms.py), anything else ops/norms.py's norm. A module of its own
(h28ops): matrix_norms builds on norms, so neither can import the other."""

from __future__ import annotations

from typing import Any

from ..dtypes import dtype as _dtype
from ..tensor import Tensor
from . import matrix_norms, norms


def norm(self: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         out: Tensor | None = None, dtype: _dtype | None = None) -> Tensor:
    vector = not isinstance(p, str) or (p == "fro" and (dim is None or isinstance(dim, int)
                                                        or len(dim) <= 2))
    if vector or out is not None:   # out=: norms.norm refuses it, as it is not modelled
        return norms.norm(self, p, dim, keepdim, out, dtype)
    dims = [dim] if isinstance(dim, int) else dim
    return matrix_norms.matrix_norm(self, p, list(range(self.ndim)) if dims is None else dims,
                                    keepdim, dtype=dtype)
