"""conformance.run.tensor_summary: statistics computed a chunk at a time equal those of the
whole."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from conformance.run.tensor_summary import CHUNK, summarise


def test_chunked_statistics_equal_the_whole_arrays() -> None:
    rng = np.random.default_rng(0)
    raw = rng.standard_normal(int(2.5 * CHUNK)).astype(np.float32)
    raw[CHUNK + 7] = np.nan  # in the second chunk
    raw[2 * CHUNK + 3] = -np.inf
    raw[5] = np.inf
    raw[2 * CHUNK + 9] = -0.0
    raw[11] = 0.0
    raw[CHUNK + 1] = -1e6  # the minimum, in the second chunk
    s = summarise(raw, raw.size * 3, 3)
    a = raw.astype(np.float64)
    finite = a[np.isfinite(a)]
    assert s.elements == raw.size * 3
    assert (s.nan, s.posinf, s.neginf, s.zeros, s.neg_zeros) == (3, 3, 3, 6, 3)
    assert (s.min, s.max) == (-math.inf, math.inf)
    assert s.sum == pytest.approx(3 * finite.sum(), rel=1e-12)
    assert s.mean_abs == pytest.approx(np.abs(finite).mean(), rel=1e-12)
    whole = hashlib.blake2b(str(raw.shape).encode() + raw.dtype.str.encode() + raw.tobytes(),
                            digest_size=8)
    assert s.checksum == whole.hexdigest()


def test_all_nan_has_no_minimum() -> None:
    s = summarise(np.full(10, np.nan), 10, 1)
    assert math.isnan(s.min) and math.isnan(s.max) and s.nan == 10 and s.mean_abs == 0.0


def test_complex_statistics_count_each_part() -> None:
    raw = np.array([1 + 2j, complex(np.nan, -np.inf), complex(-0.0, 3)], np.complex64)
    s = summarise(raw, 3, 1)
    assert (s.nan, s.neginf, s.zeros, s.neg_zeros) == (1, 1, 1, 1)
    assert (s.sum, s.min, s.max) == (6.0, -np.inf, 3.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_chunks_with_every_element_finite_count_as_the_whole(dtype: type) -> None:
    # the first and last chunks are all finite (summarise's fast path reads them in place),
    # the middle one holds a NaN and infinities; zeros and negative zeros in every chunk
    rng = np.random.default_rng(1)
    raw = (rng.standard_normal(int(2.5 * CHUNK)) * 100).astype(dtype)
    raw[3] = raw[2 * CHUNK + 5] = raw[CHUNK + 2] = 0
    raw[2 * CHUNK + 8] = -123456  # the minimum, in the last chunk
    if np.dtype(dtype).kind == "f":
        raw[9] = raw[2 * CHUNK + 11] = raw[CHUNK + 4] = -0.0
        raw[CHUNK + 1], raw[CHUNK + 6], raw[CHUNK + 7] = np.nan, np.inf, -np.inf
    s = summarise(raw, raw.size * 2, 2)
    a = raw.astype(np.float64)
    finite = a[np.isfinite(a)]
    floating = np.dtype(dtype).kind == "f"
    assert (s.nan, s.posinf, s.neginf) == ((2, 2, 2) if floating else (0, 0, 0))
    assert s.zeros == 2 * int((finite == 0).sum()) and s.zeros >= 6
    assert s.neg_zeros == (6 if floating else 0)
    assert s.min == (-np.inf if floating else -123456.0)
    assert s.max == (np.inf if floating else a.max())
    assert s.sum == pytest.approx(2 * finite.sum(), rel=1e-12)
    assert s.mean_abs == pytest.approx(np.abs(finite).mean(), rel=1e-12)
    whole = hashlib.blake2b(str(raw.shape).encode() + raw.dtype.str.encode() + raw.tobytes(),
                            digest_size=8)
    assert s.checksum == whole.hexdigest()
