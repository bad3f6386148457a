"""lerp rounded as torch's CPU kernel rounds it: one fused multiply-add (reference_engine/ops/
fma.py). The emulated fma is checked against exact rational arithmetic on random and
adversarial inputs (products cancelled by c, sums a hair from a rounding midpoint, subnormal
results), and lerp and quantile against torch bit for bit: quantile's interpolation amplified
lerp's double rounding past float32's tolerance in the generator's programs."""

from fractions import Fraction

import numpy as np
import pytest
import torch

import reference_engine as engine
from reference_engine.ops.fma import fma

DTYPES = (np.float32, np.float64)


def _round(x: Fraction, dt: type) -> np.floating:
    """x correctly rounded to nearest (ties to even) in dt, by exact comparison with the
    neighbours of a near value."""
    near = dt(float(x))
    candidates = [near, np.nextafter(near, dt(np.inf)), np.nextafter(near, dt(-np.inf))]
    def key(c: np.floating) -> tuple[Fraction, int]:
        return abs(Fraction(float(c)) - x), int(np.asarray(c).view(f"i{np.dtype(dt).itemsize}")) & 1
    return min(candidates, key=key)


def _exact_fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    dt = a.dtype.type
    return np.array([_round(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)), dt)
                     for x, y, z in zip(a, b, c, strict=True)], dtype=a.dtype)


def _inputs(dt: type, seed: int, n: int = 3000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A third random (spread over magnitudes), a third with c = -round(a * b) (the result is
    the product's rounding error), a third with c putting a * b + c within a few ULPs of a
    midpoint between two values of dt (double rounding's worst case)."""
    rng = np.random.default_rng(seed)
    scale = 2.0 ** rng.integers(-30, 30, (3, n))
    a, b, c = (rng.standard_normal((3, n)) * scale).astype(dt)
    k = n // 3
    c[k:2 * k] = -(a[k:2 * k] * b[k:2 * k])
    for i in range(2 * k, n):
        p = Fraction(float(a[i])) * Fraction(float(b[i]))
        target = _round(p + Fraction(float(c[i])), dt)
        midpoint = (Fraction(float(target)) + Fraction(float(np.nextafter(target, dt(np.inf))))) / 2
        c[i] = _round(midpoint - p, dt)
    return a, b, c


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("seed", [0, 1])
def test_fma_is_correctly_rounded(dt: type, seed: int) -> None:
    a, b, c = _inputs(dt, seed)
    expected = _exact_fma(a, b, c)
    got = fma(a, b, c)
    assert np.array_equal(got, expected), np.flatnonzero(got != expected)[:10]
    unfused = a * b + c   # the test can fail: the unfused sum differs on these inputs
    assert not np.array_equal(unfused, expected)


def test_fma_of_float32_subnormal_results() -> None:
    rng = np.random.default_rng(2)
    a = (rng.standard_normal(2000) * 2.0 ** -70).astype(np.float32)
    b = (rng.standard_normal(2000) * 2.0 ** -70).astype(np.float32)
    c = (rng.standard_normal(2000) * 2.0 ** -140).astype(np.float32)
    assert np.array_equal(fma(a, b, c), _exact_fma(a, b, c))


def test_fma_of_non_finite_inputs_is_ieee() -> None:
    inf, nan = np.inf, np.nan
    for dt in DTYPES:
        a = np.array([inf, 1.0, nan, 0.0, -inf], dt)
        b = np.array([2.0, inf, 1.0, inf, 1.0], dt)
        c = np.array([1.0, -inf, 0.0, 1.0, inf], dt)
        with np.errstate(invalid="ignore"):
            unfused = a * b + c
        assert np.array_equal(fma(a, b, c), unfused, equal_nan=True)


def _lerp_inputs(dt: type, n: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(dt)
    b = (rng.standard_normal(n) * rng.choice([1e-3, 1.0, 1e3], n)).astype(dt)
    w = rng.uniform(-1.5, 2.5, n).astype(dt)
    w[: n // 4] = rng.choice([0.0, 0.5, 1.0, -0.5, 0.49999997, 0.50000006], n // 4)
    return a, b, w


# 1 and 7 elements: torch's scalar loop; 64 and 1001: its SIMD loop and a scalar tail
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("n", [1, 7, 64, 1001])
def test_lerp_is_torchs_bit_for_bit(dt: type, n: int) -> None:
    a, b, w = _lerp_inputs(dt, n, seed=n)
    expected = torch.lerp(*map(torch.from_numpy, (a, b, w))).numpy()
    got = engine.lerp(*map(engine.tensor, (a, b, w))).numpy()
    assert np.array_equal(got, expected), np.flatnonzero(got != expected)[:10]
    for weight in (0.3, 0.7, -0.25, 1.75):
        expected = torch.lerp(torch.from_numpy(a), torch.from_numpy(b), weight).numpy()
        got = engine.lerp(engine.tensor(a), engine.tensor(b), weight).numpy()
        assert np.array_equal(got, expected), (weight, np.flatnonzero(got != expected)[:10])


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile_is_torchs_bit_for_bit(dt: type, fn: str) -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((6, 37)) * 100).astype(dt)
    x[0, 3] = np.nan
    q = rng.uniform(0, 1, 9).astype(dt)
    for dim in (None, 0, 1):
        expected = getattr(torch, fn)(torch.from_numpy(x), torch.from_numpy(q), dim=dim)
        got = getattr(engine, fn)(engine.tensor(x), engine.tensor(q), dim=dim)
        assert np.array_equal(got.numpy(), expected.numpy(), equal_nan=True), dim
