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
    if x <= 0 and (x == -math.inf or x == math.floor(x)):   # a pole, -inf: +inf (math raises)
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
        if x == -math.inf or x == math.trunc(x):   # C++'s trunc(-inf) is -inf: nan
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


# ---- I0 and its scaled form as torch's CPU kernels evaluate them ------------------------
# Math.h's calc_i0 and calc_i0e (Cephes): a Chebyshev series in the tensor's own dtype,
# coefficients stored highest order first (chebyshev_coefficients_i0e_A over [0, 8],
# _B over the inverted interval (8, inf)).
_I0E_A = (
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1)


def _chbevl(x: np.ndarray, coefficients: tuple[float, ...]) -> np.ndarray:
    """Math.h's chbevl in x's dtype: b0 = x * b1 - b2 + c, which the compiler contracts to
    fma(x, b1, -b2) + c. In float32 the fma is exact through float64 (a product of two
    floats fits a double), which gives torch's float32 i0e bit for bit on 40,000 values
    where evaluating in float64 and rounding once agreed on 41 % (the difference matters at
    erfinv's pole: erfinv(i0e(0)) is 3.83 from torch's 0.99999994, inf from 1.0); float64
    has no exact fma in NumPy and is evaluated without it (82 % bit for bit, within an ULP)."""
    dt = x.dtype.type
    c = np.asarray(coefficients, dtype=dt)
    b0, b1, b2 = np.full_like(x, c[0]), np.zeros_like(x), np.zeros_like(x)
    wide = x.astype(F64) if dt is np.float32 else None
    for a in c[1:]:
        b2, b1 = b1, b0
        b0 = ((wide * b1 - b2).astype(dt) if wide is not None else x * b1 - b2) + a
    return dt(0.5) * (b0 - b2)


def bessel_i0(a: np.ndarray, scaled: bool) -> np.ndarray:
    """calc_i0 (scaled: calc_i0e) of a float32 or float64 array, in its dtype. exp is taken
    in float64 and rounded (std::exp of a float is correctly rounded nearly always; NumPy's
    float32 exp is not: 66 % of torch's i0 bit for bit with it, 99.9 % so)."""
    dt = a.dtype.type
    x = np.abs(a)
    with np.errstate(all="ignore"):
        small = _chbevl(x / dt(2) - dt(2), _I0E_A)
        big = _chbevl(dt(32) / x - dt(2), _I0E_B)
        if not scaled:
            grow = np.exp(x.astype(F64)).astype(dt)
            small, big = grow * small, grow * big
        return np.where(x <= 8, small, big / np.sqrt(x))


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
    return np.where(np.isinf(x), np.nan, out)   # Cephes' I1 is nan at +-inf, as torch's


# ---- the regularized lower incomplete gamma function (igamma) ----------------------------
# Math.h calc_igamma's special values, then Cephes' series (x small against a) or its
# continued fraction for the upper function (igamc), in double.

_MACHEP = 1.11022302462515654042e-16
_BIG, _BIGINV = 4.503599627370496e15, 2.22044604925031308085e-16


def _igam_prefactor(a: float, x: float) -> float:
    ax = a * math.log(x) - x - math.lgamma(a)
    return 0.0 if ax < -709.78271289338399 else math.exp(ax)


def _igam_series(a: float, x: float) -> float:
    ax = _igam_prefactor(a, x)
    r, c, ans = a, 1.0, 1.0
    for _ in range(10000):
        r += 1.0
        c *= x / r
        ans += c
        if c <= _MACHEP * ans:
            break
    return ans * ax / a


def _igamc_fraction(a: float, x: float) -> float:
    ax = _igam_prefactor(a, x)
    y, z, c = 1.0 - a, x + 2.0 - a, 0.0
    pkm2, qkm2, pkm1, qkm1 = 1.0, x, x + 1.0, z * x
    ans = pkm1 / qkm1
    for _ in range(10000):
        c += 1.0
        y += 1.0
        z += 2.0
        yc = y * c
        pk, qk = pkm1 * z - pkm2 * yc, qkm1 * z - qkm2 * yc
        t = 1.0
        if qk != 0:
            r = pk / qk
            t = abs((ans - r) / r)
            ans = r
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        if abs(pk) > _BIG:
            pkm2, pkm1, qkm2, qkm1 = (v * _BIGINV for v in (pkm2, pkm1, qkm2, qkm1))
        if t <= _MACHEP:
            break
    return ans * ax


def _igamma(a: float, x: float) -> float:
    if math.isnan(a) or math.isnan(x) or a < 0 or x < 0:
        return math.nan
    if a == 0:
        return 1.0 if x > 0 else math.nan
    if x == 0:
        return 0.0
    if math.isinf(a):
        return math.nan if math.isinf(x) else 0.0
    if math.isinf(x):
        return 1.0
    if x > 1 and x > a:
        return 1.0 - _igamc_fraction(a, x)
    return _igam_series(a, x)


_igamma_vec = np.vectorize(_igamma, otypes=[F64])


def igamma(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """torch.igamma(a, x), elementwise in double."""
    a64, x64 = np.broadcast_arrays(np.asarray(a, dtype=F64), np.asarray(x, dtype=F64))
    return np.asarray(_igamma_vec(a64, x64), dtype=F64) if a64.size else a64.copy()
