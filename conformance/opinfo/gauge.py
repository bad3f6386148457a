"""The sign gauge of singular vectors and eigenvectors, the one place the OpInfo check
compares values up to a transformation.

An SVD's singular vectors and a symmetric eigendecomposition's eigenvectors are defined up
to the sign of each vector (U diag(s) Vh is unchanged when column j of U and row j of Vh
both flip). Which sign LAPACK returns depends on its implementation: torch's MKL and
NumPy's OpenBLAS disagree on about half of random eigh inputs and on some float32 SVDs, so
any engine's vectors may differ from torch's by a sign per vector while being right.
OpInfo itself never compares them raw: its samples' output processing
(sample_inputs_svd's fn_U/fn_Vh/fn_UVh, sample_inputs_linalg_eigh's out_fn: abs(U),
U @ Vh, abs(V)) makes every differentiated output gauge-invariant, so the check's grads,
second-order grads and tangents need nothing here.

The forward's outputs and the saved tensors are compared raw, though: for the entries in
GAUGES alone, and only at the outputs and saved tensors each names (the vectors; never the
singular values or eigenvalues, never a grad), each vector is put in a canonical form on
both sides before comparing: multiplied by the sign of its largest-magnitude entry (the
first such entry on an exact tie), so that entry is positive. With full_matrices an SVD's
U (V) has more columns than singular values: those span the complement of the others, and
any orthonormal basis of it is right (MKL's and OpenBLAS's always differ there), so they
are compared as the subspace they span (canonical()). Two vectors that differ by a sign
(two complements by a rotation) have the same canonical form; any other difference (a
wrong entry, wrong singular values or eigenvalues, a wrong grad) is still a divergence
(tests/test_opinfo_gauge.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from conformance.opinfo.plan import Call
from conformance.run.trace import Snapshot, TensorSnapshot

COLUMNS, ROWS = "columns", "rows"   # a matrix's vectors are its columns (U, V) or rows (Vh)


@dataclass(frozen=True)
class Gauge:
    """Which values of a sample hold vectors, by index: `out[i]` (an output) and
    `saved[j]` (the j-th saved tensor, in the order torch packs them); and, for an SVD, the
    output and the saved tensor that are S, whose length k counts the singular vectors (the
    vectors after the k-th, full_matrices' complement, are compared as a subspace)."""

    out: dict[int, str] = field(default_factory=dict)
    saved: dict[int, str] = field(default_factory=dict)
    out_count: int | None = None
    saved_count: int | None = None

    def apply(self, observed: dict[str, Snapshot]) -> dict[str, Snapshot]:
        """`observed` with each named vector tensor's values in canonical form."""
        result = dict(observed)
        for prefix, vectors, count in (("out", self.out, self.out_count),
                                       ("saved", self.saved, self.saved_count)):
            counted = None if count is None else observed.get(f"{prefix}[{count}]")
            k = counted.shape[-1] if isinstance(counted, TensorSnapshot) and counted.shape \
                else None
            for index, along in vectors.items():
                snap = observed.get(f"{prefix}[{index}]")
                if isinstance(snap, TensorSnapshot) and isinstance(snap.values, np.ndarray):
                    result[f"{prefix}[{index}]"] = replace(
                        snap, values=canonical(snap.values, along, k))
        return result


def canonical(values: np.ndarray, along: str, k: int | None = None) -> np.ndarray:
    """Each of the first k vectors (columns, or rows with ROWS; None: all) of each matrix of
    `values` times the sign of its largest-magnitude entry, the representative of its class
    under sign flips. The vectors after the k-th (an SVD's full_matrices complement: any
    orthonormal basis of the space the others leave, which LAPACKs choose differently) as
    the subspace they span: replaced by the first columns of its orthogonal projector C C^H,
    the same for every orthonormal basis C of it, and another for any other C."""
    if values.ndim < 2 or values.size == 0:
        return values
    a = values if along == COLUMNS else np.swapaxes(values, -1, -2)
    k = a.shape[-1] if k is None else min(k, a.shape[-1])
    signed, rest = a[..., :k], a[..., k:]
    largest = np.take_along_axis(signed, np.abs(signed).argmax(axis=-2)[..., None, :],
                                 axis=-2)
    signed = signed * np.where(largest < 0, -1, 1).astype(a.dtype)
    if rest.shape[-1]:
        projector = rest @ np.swapaxes(rest, -1, -2).conj()
        rest = projector[..., :rest.shape[-1]]
    out = np.concatenate([signed, rest], axis=-1)
    return out if along == COLUMNS else np.swapaxes(out, -1, -2)


# The saved tensors of torch's nodes: LinalgSvdBackward0 packs S, U, Vh (derivatives.yaml's
# _linalg_svd) and LinalgEighBackward0 eigenvalues, eigenvectors (_linalg_eigh); an entry
# built on svdvals (cond, the 2-norms and nuclear norms) packs its node's first.
SVD_SAVED = {1: COLUMNS, 2: ROWS}
EIGH_SAVED = {1: COLUMNS}


def _argument(call: Call, position: int, name: str, default: Any = None) -> Any:
    return call.args[position] if len(call.args) > position else \
        call.kwargs.get(name, default)


def _singular_norm(ord: Any) -> bool:
    return ord == "nuc" or (not isinstance(ord, str) and ord is not None
                            and abs(float(ord)) == 2.0)


def _matrix_norm(call: Call) -> Gauge | None:
    """linalg.matrix_norm(A, ord='fro', dim, keepdim): ord 2, -2 and 'nuc' are svdvals'."""
    return Gauge(saved=SVD_SAVED, saved_count=0) \
        if _singular_norm(_argument(call, 0, "ord", "fro")) else None


def _norm(call: Call) -> Gauge | None:
    """linalg.norm(A, ord=None, dim=None, keepdim): a matrix norm when ord is given and dim
    names two dims (or A is a matrix and dim is None); then as matrix_norm."""
    ord, dim = _argument(call, 0, "ord"), _argument(call, 1, "dim")
    two_dims = (dim is None and call.input.ndim == 2) or \
        (isinstance(dim, (tuple, list)) and len(dim) == 2)
    return Gauge(saved=SVD_SAVED, saved_count=0) if two_dims and _singular_norm(ord) else None


def _cond(call: Call) -> Gauge | None:
    """linalg.cond(A, p=None): p None, 2 and -2 are svdvals'."""
    p = _argument(call, 0, "p")
    return Gauge(saved=SVD_SAVED, saved_count=0) if p is None or _singular_norm(p) else None


# OpInfo entry -> the gauge of a sample (None: the sample has no vectors to canonicalise).
GAUGES: dict[str, Callable[[Call], Gauge | None]] = {
    "linalg.svd": lambda call: Gauge({0: COLUMNS, 2: ROWS}, SVD_SAVED, 1, 0),
    "svd": lambda call: Gauge({0: COLUMNS, 2: COLUMNS}, SVD_SAVED, 1, 0),   # U, S, V
    "linalg.svdvals": lambda call: Gauge(saved=SVD_SAVED, saved_count=0),
    "linalg.eigh": lambda call: Gauge({1: COLUMNS}, EIGH_SAVED),
    "linalg.eigvalsh": lambda call: Gauge(saved=EIGH_SAVED),
    "linalg.cond": _cond,
    "linalg.matrix_norm": _matrix_norm,
    "linalg.norm": _norm,
    "linalg.norm.subgradients_at_zero": _norm,
    "norm.nuc": lambda call: Gauge(saved=SVD_SAVED, saved_count=0),   # torch.norm(p='nuc')
}


def of(key: str, call: Call) -> Gauge | None:
    """The gauge of a sample of entry `key`, None for every entry not in GAUGES."""
    rule = GAUGES.get(key)
    return None if rule is None else rule(call)
