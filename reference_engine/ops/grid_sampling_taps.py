"""The arithmetic of grid sampling (ATen's GridSampler.h and the CPU kernels of
grid_sampler_2d and grid_sampler_3d), in NumPy, for ops/grid_sampling.py.

Each output point reads a few input points ("taps"): one for nearest, 2**K for (bi/tri)linear,
16 for bicubic. A tap has a flat spatial index into the input, a mask (in bounds), a weight,
and the weight's first and second derivatives with respect to the output point's grid
coordinates. The forward, both first-order grads and every second-order term are sums over
the taps of those:

  out[n, c, q]       = sum_t w_t input[n, c, i_t]
  grad_input[n, c, i] = sum over the taps reading i of w_t grad_output[n, c, q]
  grad_grid[n, q, k] = sum_t dw_t/dg_k sum_c grad_output[n, c, q] input[n, c, i_t]

The source coordinate of grid value g along an axis of size s is ATen's
grid_sampler_compute_source_index_set_grad: unnormalize (align_corners: (g + 1) / 2 (s - 1),
else ((g + 1) s - 1) / 2), then the padding (border: clipped to [0, s - 1], its derivative 0
outside; reflection: reflected about the borders, then clipped, its derivative +-1), computed
in the input's dtype as torch does (floor and rounding decide which points are read). For
bicubic the coordinate is only unnormalized, and each tap's integer position is padded
(get_value_bounded). Weights and sums are in float64, rounded once to the dtype by the caller.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
ZEROS, BORDER, REFLECTION = 0, 1, 2
_A = -0.75   # the cubic convolution's A (UpSample.h, get_cubic_upsample_coefficients)


@dataclass(frozen=True)
class Taps:
    """The taps of every output point: T taps over (N, Q) points, K grid coordinates."""
    index: np.ndarray   # (T, N, Q) int64: the flat spatial index read (0 where masked)
    valid: np.ndarray   # (T, N, Q) bool: in bounds (a masked tap reads and receives 0)
    w: np.ndarray       # (T, N, Q)
    dw: np.ndarray      # (T, N, Q, K): d w / d grid[..., k]
    d2w: np.ndarray     # (T, N, Q, K, K)
    # (N, Q, K): d source coordinate / d grid[..., k] (0 where border or reflection clips);
    # dw is this times dw_source, and the kernels multiply a grid grad by it last, so a
    # clipped coordinate's grad is 0 times the sum: -0.0 where the sum is negative
    mult: np.ndarray
    dw_source: np.ndarray   # (T, N, Q, K): d w / d source coordinate k


def _unnormalize(g: np.ndarray, size: int, align_corners: bool, vectorized: bool
                 ) -> tuple[np.ndarray, float]:
    """The coordinate and its derivative; the 2-d kernel (GridSamplerKernel.cpp's
    ComputeLocationBase) rounds (g + 1) * scale - 0.5, the 3-d one GridSampler.h's formula."""
    t = g.dtype.type
    scale = (size - 1) / 2 if align_corners else size / 2
    if vectorized:
        x = (g + t(1)) * t(scale)
        return (x if align_corners else x - t(0.5)), scale
    if align_corners:
        return (g + t(1)) / t(2) * t(size - 1), scale
    return ((g + t(1)) * t(size) - t(1)) / t(2), scale


def _clip(x: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """clip_coordinates_set_grad: the derivative is 0 at and beyond the borders."""
    top = x.dtype.type(size - 1)
    inside = (x > 0) & (x < top)
    return np.where(x <= 0, x.dtype.type(0), np.minimum(x, top)), inside.astype(np.float64)


def _reflect(x: np.ndarray, twice_low: int, twice_high: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """reflect_coordinates_set_grad."""
    if twice_low == twice_high:
        return np.zeros_like(x), np.zeros(x.shape)
    t = x.dtype.type
    low, span = t(twice_low) / t(2), t(twice_high - twice_low) / t(2)
    x = x - low
    sign = np.where(x < 0, -1.0, 1.0)
    x = np.abs(x)
    extra = np.fmod(x, span)
    even = np.floor(x / span).astype(np.int64) % 2 == 0
    return np.where(even, extra + low, span - extra + low), np.where(even, sign, -sign)


def _pad(x: np.ndarray, size: int, padding: int, align_corners: bool
         ) -> tuple[np.ndarray, np.ndarray]:
    """compute_coordinates, with the derivative of the padded coordinate."""
    if padding == BORDER:
        return _clip(x, size)
    if padding == REFLECTION:
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        x, d_reflect = _reflect(x, low, high)
        x, d_clip = _clip(x, size)
        return x, d_reflect * d_clip
    return x, np.ones(x.shape)


def _source(g: np.ndarray, size: int, padding: int, align_corners: bool, vectorized: bool
            ) -> tuple[np.ndarray, np.ndarray]:
    """grid_sampler_compute_source_index_set_grad: the coordinate and its derivative."""
    x, scale = _unnormalize(g, size, align_corners, vectorized)
    x, d = _pad(x, size, padding, align_corners)
    return x, d * scale


def _products(factors: list[np.ndarray], d: list[np.ndarray]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The weight prod_k a_k, its gradient and Hessian for factors a_k of coordinate k alone,
    given each factor's first derivative d[k] and second d[K + k] (a list of 2K arrays)."""
    k_count = len(factors)
    w = np.prod(factors, axis=0)
    dw = np.stack([np.prod([d[k] if j == k else factors[j] for j in range(k_count)], axis=0)
                   for k in range(k_count)], axis=-1)
    d2w = np.empty((*w.shape, k_count, k_count))
    for k, m in itertools.product(range(k_count), repeat=2):
        terms = [(d[k_count + k] if k == m else d[k]) if j == k else
                 d[m] if j == m else factors[j] for j in range(k_count)]
        d2w[..., k, m] = np.prod(terms, axis=0)
    return w, dw, d2w


def _linear_taps(xs: list[np.ndarray], ds: list[np.ndarray], sizes: list[int]) -> Taps:
    """(Bi/tri)linear: the 2**K corners of the cell holding the point."""
    lows = [np.floor(x) for x in xs]
    fracs = [(x - lo).astype(np.float64) for x, lo in zip(xs, lows, strict=True)]
    taps = []
    for corner in itertools.product((0, 1), repeat=len(xs)):
        factors = [f if b else 1 - f for f, b in zip(fracs, corner, strict=True)]
        firsts = [np.full(f.shape, 1.0 if b else -1.0) for f, b in zip(fracs, corner,
                                                                     strict=True)]
        w, dw, d2w = _products(factors, firsts + [np.zeros_like(f) for f in factors])
        positions = [lo.astype(np.int64) + b for lo, b in zip(lows, corner, strict=True)]
        taps.append((positions, w, dw, d2w))
    return _stack(taps, sizes, np.stack(ds, axis=-1))


def _nearest_taps(xs: list[np.ndarray], sizes: list[int]) -> Taps:
    positions = [np.rint(x).astype(np.int64) for x in xs]
    shape = xs[0].shape
    k = len(xs)
    return _stack([(positions, np.ones(shape), np.zeros((*shape, k)),
                    np.zeros((*shape, k, k)))], sizes, np.zeros((*shape, k)))


def _cubic(t: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """get_cubic_upsample_coefficients at t (A = -0.75), their first and second derivatives
    in t."""
    a = _A

    def conv1(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:   # |x| <= 1
        return (((a + 2) * x - (a + 3)) * x * x + 1, (3 * (a + 2) * x - 2 * (a + 3)) * x,
                6 * (a + 2) * x - 2 * (a + 3))

    def conv2(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:   # 1 < |x| < 2
        return (((a * x - 5 * a) * x + 8 * a) * x - 4 * a, (3 * a * x - 10 * a) * x + 8 * a,
                6 * a * x - 10 * a)

    parts = [conv2(t + 1), conv1(t), conv1(1 - t), conv2(2 - t)]
    signs = [1, 1, -1, -1]   # d/dt of a function of (1 - t), (2 - t)
    return ([p[0] for p in parts], [s * p[1] for s, p in zip(signs, parts, strict=True)],
            [p[2] for p in parts])


def _bicubic_taps(xs: list[np.ndarray], ms: list[float], sizes: list[int], padding: int,
                  align_corners: bool) -> Taps:
    """Bicubic (2-d only): the 4 x 4 points around it, each position padded on its own."""
    lows = [np.floor(x) for x in xs]
    coeffs = [_cubic((x - lo).astype(np.float64)) for x, lo in zip(xs, lows, strict=True)]
    taps = []
    for offsets in itertools.product(range(4), repeat=len(xs)):
        factors = [c[0][i] for c, i in zip(coeffs, offsets, strict=True)]
        firsts = [c[1][i] for c, i in zip(coeffs, offsets, strict=True)]
        seconds = [c[2][i] for c, i in zip(coeffs, offsets, strict=True)]
        w, dw, d2w = _products(factors, firsts + seconds)
        positions = []
        for lo, i, size in zip(lows, offsets, sizes, strict=True):
            p, _ = _pad(lo - lo.dtype.type(1) + lo.dtype.type(i), size, padding, align_corners)
            positions.append(np.trunc(p).astype(np.int64))   # static_cast<int64_t>
        taps.append((positions, w, dw, d2w))
    shape = xs[0].shape
    return _stack(taps, sizes, np.stack([np.full(shape, m) for m in ms], axis=-1))


def _stack(taps: list[tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]],
           sizes: list[int], mult: np.ndarray) -> Taps:
    """Taps from per-coordinate positions (grid order: x, y, z, i.e. the last spatial axis
    first) to flat indices of the input's spatial dims; each tap's derivatives are given in
    the source coordinates, scaled here by `mult` (N, Q, K)."""
    index, valid = [], []
    for positions, *_ in taps:
        ok = np.ones(positions[0].shape, bool)
        flat = np.zeros(positions[0].shape, np.int64)
        stride = 1
        for p, size in zip(positions, sizes, strict=True):
            ok &= (p >= 0) & (p < size)
            flat += np.clip(p, 0, size - 1) * stride
            stride *= size
        index.append(np.where(ok, flat, 0))
        valid.append(ok)
    dw_source = np.stack([t[2] for t in taps])
    d2w = np.stack([t[3] for t in taps]) * mult[..., :, None] * mult[..., None, :]
    return Taps(np.stack(index), np.stack(valid), np.stack([t[1] for t in taps]),
                dw_source * mult, d2w, mult, dw_source)


def taps(grid: np.ndarray, spatial: tuple[int, ...], mode: int, padding: int,
         align_corners: bool) -> Taps:
    """The taps of grid (N, Q, K) in its dtype over an input of spatial sizes `spatial`."""
    sizes = list(reversed(spatial))   # grid coordinate k indexes spatial axis K - 1 - k
    coords = [grid[..., k] for k in range(len(sizes))]
    vectorized = len(sizes) == 2
    if mode == BICUBIC:
        pairs = [_unnormalize(g, s, align_corners, vectorized)
                 for g, s in zip(coords, sizes, strict=True)]
        return _bicubic_taps([p[0] for p in pairs], [p[1] for p in pairs], sizes, padding,
                             align_corners)
    sources = [_source(g, s, padding, align_corners, vectorized)
               for g, s in zip(coords, sizes, strict=True)]
    xs = [s[0] for s in sources]
    if mode == NEAREST:
        return _nearest_taps(xs, sizes)
    return _linear_taps(xs, [s[1] for s in sources], sizes)


def _read(values: np.ndarray, t: Taps, i: int) -> np.ndarray:
    """(N, C, P) values at tap i: (N, C, Q), 0 where it is masked."""
    n, c, _ = values.shape
    idx = np.broadcast_to(t.index[i][:, None, :], (n, c, t.index.shape[2]))
    return np.take_along_axis(values, idx, axis=2) * t.valid[i][:, None, :]


def apply(values: np.ndarray, t: Taps, coef: np.ndarray) -> np.ndarray:
    """sum_t coef_t values[i_t]: (N, C, Q) from (N, C, P) and coef (T, N, Q)."""
    n, c, _ = values.shape
    out = np.zeros((n, c, t.index.shape[2]))
    for i in range(t.index.shape[0]):   # tap by tap: the big 3-d samples stay small
        out += _read(values, t, i) * coef[i][:, None, :]
    return out


def spread(grad: np.ndarray, t: Taps, coef: np.ndarray, points: int) -> np.ndarray:
    """The adjoint of `apply`: (N, C, P) from grad (N, C, Q)."""
    n, c, _ = grad.shape
    base = (np.arange(n)[:, None] * c + np.arange(c)[None, :])[:, :, None] * points
    out = np.zeros(n * c * points)
    for i in range(t.index.shape[0]):
        flat = base + t.index[i][:, None, :]
        contrib = grad * (coef[i] * t.valid[i])[:, None, :]
        out += np.bincount(flat.ravel(), contrib.ravel(), minlength=n * c * points)
    return out.reshape(n, c, points)


def grid_term(grad: np.ndarray, values: np.ndarray, t: Taps, dcoef: np.ndarray | None = None
              ) -> np.ndarray:
    """sum_t dcoef_t[..., k] sum_c grad[n, c, q] values[n, c, i_t]: (N, Q, K) from dcoef
    (T, N, Q, K); without dcoef, the grid grad: the sum over dw_source times mult, last."""
    coef = t.dw_source if dcoef is None else dcoef
    out = np.zeros(coef.shape[1:])
    for i in range(t.index.shape[0]):
        out += np.einsum("ncq,ncq->nq", _read(values, t, i), grad)[..., None] * coef[i]
    return out * t.mult if dcoef is None else out
