"""Summaries of tensors too large to copy at every step (limits.SUMMARY_THRESHOLD).

The statistics are computed a chunk at a time, so that summarising costs a few megabytes
beyond the copy of the tensor's distinct data, whatever its size.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from conformance.run.trace import TensorSummary

# Elements per chunk: 1 Mi float64 temporaries, 8 MB each.
CHUNK = 1 << 20


def summarise(raw: np.ndarray, elements: int, weight: int) -> TensorSummary:
    """The summary of a tensor of `elements` elements whose distinct data is `raw`, each of
    whose elements stands for `weight` elements (an expanded view repeats them). Complex
    values are summarised over their real and imaginary parts."""
    flat = np.ascontiguousarray(raw).reshape(-1)
    checksum = hashlib.blake2b(str(raw.shape).encode() + raw.dtype.str.encode(), digest_size=8)
    total = total_abs = 0.0
    finite_count = nan = posinf = neginf = zeros = neg_zeros = 0
    low, high = math.inf, -math.inf
    for start in range(0, flat.size, CHUNK):
        part = flat[start:start + CHUNK]
        checksum.update(part.data)  # contiguous: the bytes tobytes() would copy
        # float64 values are read in place (astype would copy them); others as float64
        a = part.astype(np.complex128).view(np.float64) if part.dtype.kind == "c" \
            else part.astype(np.float64, copy=False)
        finite_mask = np.isfinite(a)
        if finite_mask.all():
            # every element finite (nearly always): `a` is the finite and the present
            # elements alike, with no NaN or infinity to count; the same sums, in the same
            # order, as the masked copies below would give
            finite = present = a
        else:
            is_nan = np.isnan(a)
            finite, present = a[finite_mask], a[~is_nan]
            nan += int(is_nan.sum())
            posinf += int(np.isposinf(a).sum())
            neginf += int(np.isneginf(a).sum())
        if present.size:
            low, high = min(low, float(present.min())), max(high, float(present.max()))
        zero = finite == 0
        total += float(finite.sum())
        total_abs += float(np.abs(finite).sum())
        finite_count += finite.size
        zero_count = int(np.count_nonzero(zero))
        zeros += zero_count
        if zero_count:
            neg_zeros += int(np.signbit(finite[zero]).sum())
    some = low <= high  # not every element is NaN
    return TensorSummary(
        elements=elements, sum=total * weight,
        min=low if some else math.nan, max=high if some else math.nan,
        mean_abs=total_abs / finite_count if finite_count else 0.0,
        nan=nan * weight, posinf=posinf * weight, neginf=neginf * weight,
        zeros=zeros * weight, neg_zeros=neg_zeros * weight, checksum=checksum.hexdigest())
