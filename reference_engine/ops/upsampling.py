"""Upsampling: ATen's upsample_nearest{1,2,3}d, _upsample_nearest_exact{1,2,3}d,
upsample_linear1d, upsample_bilinear2d, upsample_bicubic2d and upsample_trilinear3d (F.interpolate's
kernels, ops/interpolate.py), each with its backward op, so a create_graph grad's node is
torch's UpsampleBilinear2DBackwardBackward0 and the like.

Every mode is separable: per spatial axis an (out, in) matrix of weights (which input
positions each output position reads, and with what weight), applied axis by axis; the
backward applies the transposed matrices. The weights follow ATen's CPU kernels
(UpSampleKernel.cpp's compute_indices_weights, UpSample.h): computed in the input's
accumulation type (float for float32), a nearest index in float, so the indices are torch's
to the bit. Both ops are linear, so each one's jvp is itself, and neither saves a tensor
(torch's nodes keep the sizes and scales only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common

# (kind, spatial rank) -> the mode's name in torch's node names
NAMES = {("nearest", 1): "Nearest1D", ("nearest", 2): "Nearest2D", ("nearest", 3): "Nearest3D",
         ("nearest_exact", 1): "NearestExact1D", ("nearest_exact", 2): "NearestExact2D",
         ("nearest_exact", 3): "NearestExact3D", ("linear", 1): "Linear1D",
         ("linear", 2): "Bilinear2D", ("linear", 3): "Trilinear3D", ("cubic", 2): "Bicubic2D"}


@dataclass(frozen=True)
class Upsample:
    """One upsampling: its kind (nearest, nearest_exact, linear, cubic), the output's
    spatial sizes, align_corners (the interpolating kinds), and the scales given (None:
    computed from the sizes), as ATen's ops take them."""
    kind: str
    output_size: tuple[int, ...]
    align_corners: bool = False
    scales: tuple[float | None, ...] = ()

    def scale(self, axis: int) -> float | None:
        return self.scales[axis] if self.scales else None


# ---- the weights of one axis (UpSample.h, UpSampleKernel.cpp) ----------------------------

def _scale(n_in: int, n_out: int, align_corners: bool, scale: float | None,
           acc: type[np.floating]) -> np.floating:
    """area_pixel_compute_scale<acc>: the source step per output position (aligned: 0 for
    one output position)."""
    if align_corners:
        return acc(n_in - 1) / acc(n_out - 1) if n_out > 1 else acc(0)
    if scale is not None and scale > 0:   # compute_scales_value: the given scale's inverse
        return acc(1.0 / scale)
    return acc(n_in) / acc(n_out)


def _source(s: np.floating, n_out: int, align_corners: bool, cubic: bool,
            acc: type[np.floating]) -> np.ndarray:
    """area_pixel_compute_source_index<acc> of every output position: s * i aligned, else
    s * (i + 0.5) - 0.5 (in double, then rounded to acc), clamped at 0 but for cubic."""
    i = np.arange(n_out)
    if align_corners:
        return (s * i.astype(acc)).astype(acc)
    src = (np.float64(s) * (i + 0.5) - 0.5).astype(acc)
    return src if cubic else np.maximum(src, acc(0))


def _guard(src: np.ndarray, n_in: int) -> tuple[np.ndarray, np.ndarray]:
    """guard_index_and_lambda: the index below (floorf, at most n_in - 1) and the fraction
    past it, clamped to [0, 1]."""
    index = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)
    frac = np.clip(src - index.astype(src.dtype), 0, 1).astype(src.dtype)
    return index, frac


def _nearest_axis(n_in: int, n_out: int, scale: float | None, exact: bool) -> np.ndarray:
    """nearest_idx / nearest_exact_idx (UpSample.h): the source index in float,
    floorf(s * i) (nearest) or floorf((i + 0.5) * s) (nearest-exact), at most n_in - 1."""
    f32 = np.float32
    # compute_scales_value<float>: for these kinds also where n_out is 1
    s = f32(1.0 / scale) if scale is not None and scale > 0 else f32(n_in) / f32(n_out)
    if exact:   # (i + 0.5) in double, times s, rounded to float
        index = np.floor((np.float64(s) * (np.arange(n_out) + 0.5)).astype(f32))
    else:
        index = np.floor(s * np.arange(n_out).astype(f32))
    index = np.minimum(index.astype(np.int64), n_in - 1)
    m = np.zeros((n_out, n_in))
    m[np.arange(n_out), index] = 1
    return m


def _linear_axis(n_in: int, n_out: int, align_corners: bool, scale: float | None,
                 acc: type[np.floating]) -> np.ndarray:
    """compute_source_index_and_lambda: two neighbours, weights 1 - lambda and lambda (a
    copy where the sizes are equal)."""
    if n_in == n_out:
        return np.eye(n_out, dtype=acc)
    s = _scale(n_in, n_out, align_corners, scale, acc)
    index, frac = _guard(_source(s, n_out, align_corners, False, acc), n_in)
    after = index + (index < n_in - 1)
    m = np.zeros((n_out, n_in), acc)
    rows = np.arange(n_out)
    np.add.at(m, (rows, index), acc(1) - frac)
    np.add.at(m, (rows, after), frac)
    return m


def _cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    """get_cubic_upsample_coefficients, A = -0.75."""
    a = t.dtype.type(-0.75)
    one = t.dtype.type(1)

    def conv1(x: np.ndarray) -> np.ndarray:
        return ((a + 2) * x - (a + 3)) * x * x + one

    def conv2(x: np.ndarray) -> np.ndarray:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [conv2(t + one), conv1(t), conv1(one - t), conv2(one - t + one)]


def _cubic_axis(n_in: int, n_out: int, align_corners: bool, scale: float | None,
                acc: type[np.floating]) -> np.ndarray:
    """HelperInterpCubic: four neighbours from the index below minus one, each clamped into
    the input (a border reads its edge value several times)."""
    s = _scale(n_in, n_out, align_corners, scale, acc)
    index, frac = _guard(_source(s, n_out, align_corners, True, acc), n_in)
    m = np.zeros((n_out, n_in), acc)
    rows = np.arange(n_out)
    for j, w in enumerate(_cubic_weights(frac)):
        np.add.at(m, (rows, np.clip(index - 1 + j, 0, n_in - 1)), w)
    return m


def matrices(up: Upsample, spatial: Sequence[int], dt: np.dtype) -> list[np.ndarray]:
    """Each spatial axis's (out, in) weights, in the dtype."""
    acc = np.float32 if dt == np.float32 else np.float64
    out = []
    for axis, (n_in, n_out) in enumerate(zip(spatial, up.output_size, strict=True)):
        scale = up.scale(axis)
        if up.kind in ("nearest", "nearest_exact"):
            m = _nearest_axis(n_in, n_out, scale, up.kind == "nearest_exact")
        elif up.kind == "linear":
            m = _linear_axis(n_in, n_out, up.align_corners, scale, acc)
        else:
            m = _cubic_axis(n_in, n_out, up.align_corners, scale, acc)
        out.append(m.astype(dt))
    return out


# ---- the ops and their backward ops -------------------------------------------------------

def _specs(name: str) -> tuple[OpSpec, OpSpec]:
    forward = OpSpec(f"Upsample{name}Backward0", ("self",), {},
                     lambda c, g: [upsample_backward(g, c.up, c.input_size)],
                     jvp=lambda c: upsample(c.self_t, c.up))
    backward = OpSpec(f"Upsample{name}BackwardBackward0", ("grad_output",), {},
                      lambda c, g: [upsample(g, c.up)],
                      jvp=lambda c: upsample_backward(c.grad_output_t, c.up, c.input_size))
    return forward, backward


SPECS = {key: _specs(name) for key, name in NAMES.items()}


def _apply(a: np.ndarray, mats: Sequence[np.ndarray]) -> np.ndarray:
    """a's last len(mats) axes mapped through the weight matrices (out, in). (pooling.py's
    _apply, which this used, now sums a window's 0/1 elements only: interpolation's weights
    are not 0/1.)"""
    k = len(mats)
    for i, m in enumerate(mats):
        axis = a.ndim - k + i
        a = np.moveaxis(np.tensordot(a, m, axes=([axis], [1])), -1, axis)
    return a


def upsample(self: Tensor, up: Upsample) -> Tensor:
    """The upsampling of self's last len(up.output_size) dims (the checks: interpolate.py)."""
    k = len(up.output_size)
    mats = matrices(up, self.shape[self.ndim - k:], self._data.dtype)
    out = _apply(self._data, mats)
    return record(SPECS[up.kind, k][0], common.new(out, self.dtype, self.device), [self],
                  up=up, input_size=tuple(self.shape))


def upsample_backward(grad_output: Tensor, up: Upsample, input_size: Sequence[int]
                      ) -> Tensor:
    """ATen's upsample_*_backward: the grad summed back through the transposed weights."""
    k = len(up.output_size)
    mats = matrices(up, input_size[len(input_size) - k:], grad_output._data.dtype)
    arr = _apply(grad_output._data, [m.T for m in mats])
    return record(SPECS[up.kind, k][1], common.new(arr, grad_output.dtype, grad_output.device),
                  [grad_output], up=up, input_size=tuple(input_size))
