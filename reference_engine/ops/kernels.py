"""numpy kernels for the elementwise ops where numpy's own loop gives other bits or other
special values than torch's kernel: complex products (no fused multiply-add), the
reciprocal of a complex zero, sigmoid's rounding, clamp's signed zeros. Arrays in, arrays
out; no tensors."""

from __future__ import annotations

from typing import Any

import numpy as np

Number = int | float | bool


def multiply(a: Any, b: Any) -> Any:
    """a * b of arrays of one dtype. Complex products as torch's kernels compute them,
    (ac - bd) + (ad + bc)i with each product rounded: numpy's complex multiply fuses them
    (an FMA), which changes complex64's last bits."""
    if not np.iscomplexobj(a):
        return np.multiply(a, b)
    a, b = np.asarray(a), np.asarray(b, dtype=np.result_type(a))
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), a.dtype)
    out.real = a.real * b.real - a.imag * b.imag
    out.imag = a.real * b.imag + a.imag * b.real
    return out


def reciprocal(a: np.ndarray) -> np.ndarray:
    """1 / a. A complex zero gives inf + nan j, c10::complex's division by zero (1 / |re|,
    0 / |im|), where numpy gives nan + nan j."""
    out = np.reciprocal(a)
    if np.iscomplexobj(a):
        out = np.where(a == 0, np.asarray(complex(np.inf, np.nan), a.dtype), out)
    return out


def sigmoid(a: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-a)) in a's precision, its exp computed wide and rounded once, as
    torch's is (elementwise.unary_float says why)."""
    wide = np.complex128 if np.iscomplexobj(a) else np.float64
    with np.errstate(all="ignore"):
        e = np.exp(-a.astype(wide)).astype(a.dtype)
    return np.asarray(a.dtype.type(1) / (a.dtype.type(1) + e))


def clamp(a: np.ndarray, lo: Number | None, hi: Number | None) -> np.ndarray:
    """ATen's clamp: x < lo ? lo : x, then x > hi ? hi : x. A bound equal to x (a zero of
    the other sign) leaves x as it is; np.maximum would not."""
    out = a if lo is None else np.where(a < lo, np.asarray(lo, dtype=a.dtype), a)
    return out if hi is None else np.where(out > hi, np.asarray(hi, dtype=a.dtype), out)
