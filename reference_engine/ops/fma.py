"""A fused multiply-add, a * b + c rounded once, in NumPy (which has none).

torch's CPU lerp computes `fma(coeff, end - self, base)` in its SIMD code (vec::fmadd) and
its scalar code alike (the compiler contracts `self + weight * (end - self)` there): one
rounding where `a * b + c` in NumPy rounds twice, and a quarter of float32 lerps differ by an
ULP. Here the product is made exact and the sum rounded once:

- float32: the product of two float32 values (24-bit significands) is exact in float64;
- float64: Dekker's product splits it into p + e exactly (Veltkamp's split into 26-bit
  halves);
- the sum: Boldo and Melquiond's rounding to odd ("Emulation of FMA and correctly rounded
  sums: proved algorithms using rounding to odd", IEEE Trans. Computers 57(4), 2008): a sum
  rounded to odd in a format at least two bits wider than the target, then rounded to
  nearest in the target, is the exact sum rounded to nearest once.

Where it is correctly rounded (tests/reference_engine/test_lerp_fma.py checks it against
exact rational arithmetic): float32, all finite inputs; float64, finite inputs with |a| and
|b| below 2**995 (the split overflows above), a or b zero or |a * b| at least 2**-969 (below,
the product's error is not a float64), and a finite unfused result. Elsewhere (infinities,
NaN, float64 outside that range) it is the unfused `a * b + c`: IEEE's answer for
non-finite inputs, and rounded twice for the rest.
"""

import numpy as np

_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's splitter for 53-bit significands


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s = a + b rounded, and its error exactly: a + b == s + e (Knuth)."""
    s = a + b
    b_virtual = s - a
    return s, (a - (s - b_virtual)) + (b - b_virtual)


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p = a * b rounded, and its error exactly: a * b == p + e (Dekker), float64."""
    def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        scaled = x * _SPLIT
        high = scaled - (scaled - x)
        return high, x - high

    p = a * b
    a_high, a_low = split(a)
    b_high, b_low = split(b)
    return p, ((a_high * b_high - p) + a_high * b_low + a_low * b_high) + a_low * b_low


def _add_rounded_to_odd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b (float64) rounded to odd: exact if representable, else the neighbour of the
    exact sum whose last significand bit is 1."""
    s, e = _two_sum(a, b)
    even = (s.view(np.int64) & 1) == 0
    towards_e = np.nextafter(s, np.where(e > 0, np.inf, -np.inf))
    return np.where((e != 0) & even, towards_e, s)


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once, elementwise, for float32 or float64 arrays of one dtype
    (broadcast); other dtypes are computed unfused."""
    with np.errstate(all="ignore"):   # values outside the exact range are dropped below
        return _fma(*np.broadcast_arrays(a, b, c))


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    unfused = a * b + c
    if unfused.dtype == np.float32:
        wide = [x.astype(np.float64) for x in (a, b, c)]
        fused = _add_rounded_to_odd(wide[0] * wide[1], wide[2]).astype(np.float32)
        exact = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    elif unfused.dtype == np.float64:
        p, p_error = _two_product(a, b)
        high, low = _two_sum(c, p)
        fused = high + _add_rounded_to_odd(low, p_error)
        exact = (np.isfinite(c) & np.isfinite(unfused)
                 & (np.abs(a) < 2.0 ** 995) & (np.abs(b) < 2.0 ** 995)
                 & ((a == 0) | (b == 0) | (np.abs(p) >= 2.0 ** -969)))
    else:
        return unfused
    return np.where(exact, fused, unfused)


def lerp(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """ATen's lerp of real floating arrays (Lerp.h, cpu/LerpKernel.cpp's lerp_vec):
    fma(weight, end - self, self) where |weight| < 0.5, else fma(weight - 1, end - self, end),
    the end nearer the weight as the base for better numerics at either end. Complex arrays:
    self + weight * (end - self), or end - (end - self) * (1 - weight), unfused."""
    a, b, w = np.broadcast_arrays(a, b, w)
    one = w.dtype.type(1)
    small = np.abs(w) < 0.5
    diff = b - a
    if diff.dtype.kind == "c":
        return np.where(small, a + w * diff, b - diff * (one - w))
    return fma(np.where(small, w, w - one), diff, np.where(small, a, b))
