"""torch.fft.fftshift and ifftshift: ATen's SpectralOps.cpp writes each as one roll of
every dim asked (all of them by default) by half its size (fftshift: size // 2, ifftshift:
(size + 1) // 2), so the graph is a RollBackward0."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .common import wrap_dim
from .shape import roll


def _dims(x: Tensor, dim: Any) -> list[int]:
    """default_alldims: every dim, or the ones given, wrapped."""
    if dim is None:
        return list(range(x.ndim))
    return [wrap_dim(d, x.ndim) for d in ((dim,) if isinstance(dim, int) else dim)]


def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    dims = _dims(input, dim)
    return roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    dims = _dims(input, dim)
    return roll(input, [(input.shape[d] + 1) // 2 for d in dims], dims)
