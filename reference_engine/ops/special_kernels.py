"""Special functions in numpy, for the elementwise math ops (unary_math.py).

scipy is not a dependency, so the functions numpy lacks are written here, in float64, after
the algorithms torch's CPU kernels use (aten/src/ATen/native/Math.h: calc_digamma,
calc_trigamma, zeta, calc_polygamma), or from Python's math module elementwise (erf, erfc,
lgamma), which is correctly rounded to within an ULP. Scalar loops through np.vectorize
are slow, but OpInfo's samples and the gradcheck samples are small.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

F64 = np.float64


def _vectorized(fn: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    vec = np.vectorize(fn, otypes=[F64])

    def apply(a: np.ndarray) -> np.ndarray:
        a64 = np.asarray(a, dtype=F64)
        return np.asarray(vec(a64), dtype=F64) if a64.size else a64.copy()
    return apply


def _lgamma(x: float) -> float:
    if x <= 0 and x == math.floor(x):   # a pole: torch's lgamma is +inf, math's raises
        return math.inf
    return math.lgamma(x) if math.isfinite(x) else abs(x)   # lgamma(+-inf) = inf, nan stays


erf = _vectorized(math.erf)
erfc = _vectorized(math.erfc)
lgamma = _vectorized(_lgamma)

# Math.h calc_digamma's asymptotic series coefficients, highest power first (polevl).
_PSI_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
          -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
          8.33333333333333333333E-2)
_PSI_10 = 2.25175258906672110764


def _digamma(x: float) -> float:
    """Math.h calc_digamma (double)."""
    if x == 0:
        return math.copysign(math.inf, -x)
    if math.isnan(x):
        return x
    if x < 0:
        if x == math.trunc(x):
            return math.nan
        r = math.modf(x)[0]
        return _digamma(1 - x) - math.pi / math.tan(math.pi * r)
    result = 0.0
    while x < 10:
        result -= 1 / x
        x += 1
    if x == 10:
        return result + _PSI_10
    y = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        p = 0.0
        for c in _PSI_A:
            p = p * z + c
        y = z * p
    return result + math.log(x) - (0.5 / x) - y


def trigamma(a: np.ndarray) -> np.ndarray:
    """Math.h calc_trigamma, vectorized, in a's precision: torch's float32 kernel computes
    sin(pi * x) in float32, whose rounding dominates the result near the poles (x < 0)."""
    dt = a.dtype.type
    x = np.asarray(a)
    with np.errstate(all="ignore"):
        reflect = x < 0.5
        pi_x = dt(np.pi) * x
        s = np.sin(pi_x.astype(F64)).astype(a.dtype)
        result = np.where(reflect, -(dt(np.pi) * dt(np.pi)) / (s * s), dt(0))
        x = np.where(reflect, dt(1) - x, x)
        for _ in range(6):
            result = result + dt(1) / (x * x)
            x = x + dt(1)
        ixx = (dt(1) / (x * x)).astype(F64)
        tail = (1 + (dt(1) / (dt(2) * x)).astype(F64)
                + ixx * (1. / 6 - ixx * (1. / 30 - ixx * (1. / 42)))) / x
        result = (result + tail).astype(a.dtype)
        return np.asarray(np.where(reflect, -result, result))


_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042E-16


def _zeta(x: float, q: float) -> float:
    """Math.h zeta: the Hurwitz zeta function (Cephes, Euler-Maclaurin summation)."""
    if x == 1:
        return math.inf
    if x < 1:
        return math.nan
    if q <= 0:
        if q == math.floor(q):
            return math.inf
        if x != math.floor(x):
            return math.nan
    s = q ** -x
    a, i, b = q, 0, 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a ** -x
        s += b
        if abs(b / s) < _MACHEP:
            return s
    w = a
    s += b * w / (x - 1)
    s -= 0.5 * b
    a, k = 1.0, 0.0
    for coef in _ZETA_A:
        a *= x + k
        b /= w
        t = a * b / coef
        s += t
        if abs(t / s) < _MACHEP:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


digamma = _vectorized(_digamma)


def polygamma(n: int, a: np.ndarray) -> np.ndarray:
    """Math.h calc_polygamma: digamma, trigamma (in a's precision), else
    (-1)^(n+1) n! zeta(n+1, x)."""
    if n == 0:
        return digamma(a)
    if n == 1:
        return trigamma(a)
    factor = (1.0 if n % 2 else -1.0) * math.exp(math.lgamma(n + 1.0))
    return _vectorized(lambda x: factor * _zeta(n + 1.0, x) if not math.isnan(x) else x)(a)


def _erfinv(y: float) -> float:
    """The inverse of math.erf: Giles' single-precision approximation, then Newton steps on
    math.erf (torch's kernel is a rational approximation; both are within an ULP or two)."""
    if math.isnan(y) or abs(y) > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    w = -math.log((1.0 - y) * (1.0 + y))
    if w < 5.0:
        w -= 2.5
        p = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
            p = c + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                  -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
            p = c + p * w
    x = p * y
    for _ in range(3):
        d = 2.0 / math.sqrt(math.pi) * math.exp(-x * x)
        if d == 0:
            break
        x -= (math.erf(x) - y) / d
    return x


erfinv = _vectorized(_erfinv)


def i0(a: np.ndarray) -> np.ndarray:
    return np.asarray(np.i0(np.asarray(a, dtype=F64)), dtype=F64)


def i1(a: np.ndarray) -> np.ndarray:
    """The modified Bessel function I1: (1/pi) * integral over [0, pi] of exp(x cos t) cos t,
    by the trapezoid rule, which converges geometrically for a periodic analytic integrand;
    scaled by exp(|x|) so that no term overflows before the result does."""
    x = np.asarray(a, dtype=F64)
    n = 64 + int(np.nanmax(np.abs(x[np.isfinite(x)]), initial=0.0))
    t = np.linspace(0.0, np.pi, min(n, 4096) + 1)
    ax = np.abs(x)[..., None]
    with np.errstate(all="ignore"):
        f = np.exp(ax * (np.cos(t) - 1.0)) * np.cos(t)
        integral = (f.sum(-1) - 0.5 * (f[..., 0] + f[..., -1])) / (len(t) - 1)
        out = np.sign(x) * np.exp(np.abs(x)) * integral
    return np.where(np.isinf(x), x, out)
