"""The OpInfo check's sign gauge (conformance/opinfo/gauge.py): singular vectors and
eigenvectors are compared up to the sign of each vector, and nothing else is: a wrong
singular value, a wrong vector entry or a wrong gradient is still a divergence."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("expecttest", reason="OpInfo needs the dev extra's expecttest")

import reference_engine
from conformance.gen.fault_injection import WrongSign, engine_copy
from conformance.opinfo import database, entry_check, gauge
from conformance.run.engine import Engine, load_engine
from conformance.run.trace import TensorSnapshot
from conformance.run.verdicts import Verdict
from reference_engine.ops import spectral

REFERENCE = Engine("reference_engine", reference_engine)
PASS, DIVERGES = Verdict.PASS.value, Verdict.DIVERGES.value


@pytest.fixture(scope="module")
def torch_engine() -> Engine:
    return load_engine("torch")


def _plan(key: str, samples: slice, higher: bool = True) -> entry_check.Plan:
    """A few of the entry's float64 samples (the check of all of them takes seconds);
    without their gradgrad and jvp steps unless `higher`."""
    op = database.autograd_entries()[key]
    full = entry_check.plan(op, key, "float64")
    return dataclasses.replace(full, samples=full.samples[samples], errors=[],
                               gradgrad=full.gradgrad and higher,
                               forward_ad=full.forward_ad and higher)


def _verdicts(key: str, plan: entry_check.Plan, engine: Engine, torch_engine: Engine) -> set[str]:
    op = database.autograd_entries()[key]
    return {p.verdict for p in entry_check.check(op, plan, engine, torch_engine).parts}


def test_canonical_form_is_the_same_for_every_sign_and_differs_otherwise() -> None:
    rng = np.random.default_rng(0)
    u = np.linalg.qr(rng.standard_normal((2, 4, 3)))[0]
    flipped = u * np.array([1.0, -1.0, -1.0])
    assert np.array_equal(gauge.canonical(u, gauge.COLUMNS),
                          gauge.canonical(flipped, gauge.COLUMNS))
    assert np.array_equal(gauge.canonical(u.swapaxes(-1, -2), gauge.ROWS),
                          gauge.canonical(flipped.swapaxes(-1, -2), gauge.ROWS))
    wrong = u.copy()
    wrong[0, 1, 2] += 1e-3
    assert not np.allclose(gauge.canonical(u, gauge.COLUMNS),
                           gauge.canonical(wrong, gauge.COLUMNS))
    # each vector's largest-magnitude entry is positive
    c = gauge.canonical(flipped, gauge.COLUMNS)
    assert (np.take_along_axis(c, np.abs(c).argmax(-2)[..., None, :], -2) > 0).all()


def test_only_the_named_vectors_are_canonicalised() -> None:
    def snap(values: list[list[float]]) -> TensorSnapshot:
        return TensorSnapshot("Tensor", (2, 2), "float64", "cpu", np.array(values), True,
                              False, "LinalgSvdBackward0", None, False, 0, False, None)

    m = [[-1.0, 0.5], [0.25, -2.0]]
    observed = {"out[0]": snap(m), "out[1]": snap(m), "saved[1]": snap(m), "grads[0]": snap(m)}
    got = gauge.Gauge({0: gauge.COLUMNS}, {1: gauge.ROWS}).apply(observed)
    assert got["out[0]"].values.tolist() == [[1.0, -0.5], [-0.25, 2.0]]
    assert got["saved[1]"].values.tolist() == [[1.0, -0.5], [-0.25, 2.0]]
    assert got["out[1]"] is observed["out[1]"] and got["grads[0]"] is observed["grads[0]"]
    assert gauge.of("mul", entry_check.Call(None, (), {})) is None
    assert gauge.of("linalg.matrix_norm", entry_check.Call(None, ("fro",), {})) is None


def test_flipped_vectors_agree_and_only_through_the_gauge(torch_engine, monkeypatch):
    """An engine whose singular vectors have other signs (each pair of U's column and Vh's
    row flipped together: a right SVD) agrees; without the gauge its vectors diverge."""
    # a 3 x 3 matrix and a 3 x 5 one, whose full Vh has a complement of two rows (the
    # vectors' gauge touches the forward and saved steps only)
    plan = _plan("linalg.svd", slice(32, 42, 9), higher=False)
    factor = spectral._factor

    def flipped(a, full_matrices):
        u, s, vh = factor(a, full_matrices)
        k = s.shape[-1]
        signs = np.where(np.arange(k) % 2 == 0, -1.0, 1.0).astype(a.dtype)
        u, vh = u.copy(), vh.copy()
        u[..., :k] *= signs
        vh[..., :k, :] *= signs[:, None]
        return u, s, vh

    monkeypatch.setattr(spectral, "_factor", flipped)
    assert _verdicts("linalg.svd", plan, REFERENCE, torch_engine) == {PASS}
    monkeypatch.setitem(gauge.GAUGES, "linalg.svd", lambda call: None)
    assert DIVERGES in _verdicts("linalg.svd", plan, REFERENCE, torch_engine)


def test_a_wrong_singular_value_diverges(torch_engine, monkeypatch):
    plan = _plan("linalg.svdvals", slice(0, 4))
    factor = spectral._factor

    def wrong(a, full_matrices):
        u, s, vh = factor(a, full_matrices)
        return u, s * (1 + 1e-4), vh

    monkeypatch.setattr(spectral, "_factor", wrong)
    op = database.autograd_entries()["linalg.svdvals"]
    parts = entry_check.check(op, plan, REFERENCE, torch_engine).parts
    assert any(p.verdict == DIVERGES and p.short.startswith("forward: out.values")
               for p in parts), [p.short for p in parts]


def test_a_wrong_gradient_of_eigh_diverges(torch_engine):
    module = engine_copy("gauge_faulted_engine")
    fault = WrongSign(module)
    faulted = Engine("gauge_faulted_engine", module)
    plan = _plan("linalg.eigh", slice(0, 2))
    fault.targets = frozenset({"LinalgEighBackward0"})
    try:
        op = database.autograd_entries()["linalg.eigh"]
        parts = entry_check.check(op, plan, faulted, torch_engine).parts
    finally:
        fault.targets = frozenset()
    assert any(p.verdict == DIVERGES and p.short.startswith("grads: grads[")
               for p in parts), [p.short for p in parts]
