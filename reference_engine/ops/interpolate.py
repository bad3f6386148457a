"""F.interpolate and its deprecated spellings F.upsample_nearest and F.upsample_bilinear:
torch/nn/functional.py's Python code (its checks, in its order, and which ATen op each mode
and rank calls), over the upsampling ops of ops/upsampling.py and,
for mode 'area', the adaptive average pooling of ops/pooling.py.

The ATen ops take (output_size, scale_factors), exactly one given (upsample::
compute_output_size): a size is used as it is; scale factors give the size
int(input size * factor) and are passed on to the kernel, which then steps by 1 / factor
(recompute_scale_factor=True computes the size in Python instead and passes no scale)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import messages
from ..tensor import Tensor
from . import pooling, upsampling

# mode -> (the kernel's kind, the spatial rank it needs; None: 1, 2 or 3)
_MODES: dict[str, tuple[str, int | None]] = {
    "nearest": ("nearest", None), "nearest-exact": ("nearest_exact", None),
    "linear": ("linear", 1), "bilinear": ("linear", 2), "trilinear": ("linear", 3),
    "bicubic": ("cubic", 2)}
_RANK_NAMES = {1: "linear", 2: "bilinear", 3: "trilinear"}


def _is_integer(x: Any) -> bool:
    """F._is_integer: an int (or NumPy integer), or a tensor of integers."""
    if isinstance(x, (int, np.integer)):
        return True
    return isinstance(x, Tensor) and not x.is_floating_point()


def _aten_upsample(input: Tensor, kind: str, output_size: Sequence[int] | None,
                   scale_factors: Sequence[float] | None, align_corners: bool) -> Tensor:
    """The .vec overload: upsample::compute_output_size, then the op's checks
    (upsample_{1,2,3}d_common_check)."""
    k = input.ndim - 2
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError(messages.UPSAMPLE_SIZE_OR_SCALE)
    if output_size is not None:
        if len(output_size) != k:
            raise RuntimeError(messages.upsample_expected("output_size", k, len(output_size)))
        sizes, scales = [int(s) for s in output_size], None
    else:
        assert scale_factors is not None
        if len(scale_factors) != k:
            raise RuntimeError(messages.upsample_expected("scale_factors", k,
                                                          len(scale_factors)))
        sizes = [int(n * s) for n, s in zip(input.shape[2:], scale_factors, strict=True)]
        scales = tuple(float(s) for s in scale_factors)
    spatial = list(input.shape[2:])
    if min(spatial + sizes) <= 0:
        raise RuntimeError(messages.upsample_sizes(spatial, sizes))
    if input.numel() == 0:
        raise RuntimeError(messages.upsample_empty(k, list(input.shape)))
    up = upsampling.Upsample(kind, tuple(sizes), align_corners, scales or ())
    return upsampling.upsample(input, up)


def _area(input: Tensor, output_size: list[int]) -> Tensor:
    pools = {3: pooling.adaptive_avg_pool1d, 4: pooling.adaptive_avg_pool2d,
             5: pooling.adaptive_avg_pool3d}
    return pools[input.ndim](input, output_size)


def _sizes(input: Tensor, size: Any, scale_factor: Any, dim: int
           ) -> tuple[list[int] | None, list[float] | None]:
    """(output_size, scale_factors), as F.interpolate reads its size and scale_factor."""
    if size is not None and scale_factor is not None:
        raise ValueError(messages.INTERPOLATE_SIZE_AND_SCALE)
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(messages.interpolate_size_dims(list(input.shape[2:]), size))
            if not all(_is_integer(x) for x in size):
                raise TypeError(messages.interpolate_size_types([type(x) for x in size]))
            return [int(x) for x in size], None
        return [size] * dim, None
    if scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(messages.interpolate_scale_dims(list(input.shape[2:]),
                                                                 scale_factor))
            return None, list(scale_factor)
        return None, [scale_factor] * dim
    raise ValueError(messages.INTERPOLATE_SIZE_OR_SCALE)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(messages.INTERPOLATE_ALIGN_CORNERS)
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    output_size, scale_factors = _sizes(input, size, scale_factor, dim)
    if recompute_scale_factor and size is not None:
        raise ValueError(messages.INTERPOLATE_RECOMPUTE_WITH_SIZE)
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        assert scale_factors is not None
        # _sym_int: int() of the product, towards zero
        output_size = [math.trunc(input.shape[i + 2] * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError(messages.INTERPOLATE_ANTIALIAS)
    if antialias or mode == "lanczos":
        raise NotImplementedError(messages.interpolate_not_modelled(mode, antialias))
    if mode == "area" and input.ndim in (3, 4, 5):
        assert output_size is not None
        return _area(input, output_size)
    kind, rank = _MODES.get(mode, ("", 0))
    if kind and input.ndim in (3, 4, 5) and rank in (None, dim):
        return _aten_upsample(input, kind, output_size, scale_factors, bool(align_corners))
    if mode in ("linear", "bilinear", "trilinear") and input.ndim in (3, 4, 5):
        assert rank is not None
        raise NotImplementedError(messages.interpolate_rank(input.ndim, mode, rank + 2))
    raise NotImplementedError(messages.interpolate_input(input.ndim, mode))


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    warnings.warn(messages.upsample_deprecated("upsample_nearest"), stacklevel=3)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    warnings.warn(messages.upsample_deprecated("upsample_bilinear"), stacklevel=3)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
