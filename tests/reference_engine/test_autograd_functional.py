"""torch.autograd.functional in the reference engine raises torch's errors, with torch's texts.

The case library (cases/functional/) pins the calls test_functional.py makes; these are the
strict-mode stages no test there reaches (the double-backward trick's, the hessian's), each
run on torch and on the engine, whose exception type and text must be equal, and whose
text must classify as a functional kind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import reference_engine
from conformance.case.classify import classify


def _disconnected(t: Any, a: Any) -> Any:
    """An output that requires grad but does not depend on `a`."""
    return a.detach().requires_grad_() * 1


# Each call takes the engine module; `k` (a tensor requiring grad that is not an input)
# makes a jacobian that requires grad yet does not depend on the inputs.
CALLS: dict[str, Callable[[Any], Any]] = {
    "back_trick": lambda t: t.autograd.functional.jvp(
        lambda a: (a * 2, _disconnected(t, a)), t.ones(3), t.ones(3), strict=True),
    "double_back": lambda t: t.autograd.functional.vhp(
        lambda a, b: (a ** 3).sum() + (b * t.ones(3, requires_grad=True)).sum(),
        (t.ones(3), t.ones(3)), (t.ones(3), t.ones(3)), strict=True),
    "double_back_trick": lambda t: t.autograd.functional.hvp(
        lambda a, b: (a ** 3).sum() + (b * t.ones(3, requires_grad=True)).sum(),
        (t.ones(3), t.ones(3)), (t.ones(3), t.ones(3)), strict=True),
    "create_graph_hessian": lambda t: t.autograd.functional.vhp(
        lambda a: (a * a).sum(), t.ones(3, requires_grad=True), t.ones(3),
        create_graph=True, strict=True),
    "grad_input_none": lambda t: t.autograd.functional.jvp(
        lambda a: _disconnected(t, a), t.ones(3), t.ones(3), strict=True),
    "vhp_tuple_output": lambda t: t.autograd.functional.vhp(
        lambda a: (a.sum(), a.sum()), t.ones(3), t.ones(3)),
    "hvp_tuple_output": lambda t: t.autograd.functional.hvp(
        lambda a: (a.sum(), a.sum()), t.ones(3), t.ones(3)),
    "v_tuple_length": lambda t: t.autograd.functional.jvp(
        lambda a, b: a * b, (t.ones(3), t.ones(3)), (t.ones(3),)),
    "jacobian_forward_output_not_tensor": lambda t: t.autograd.functional.jacobian(
        lambda a: (a * 2, 3), t.ones(2), strategy="forward-mode", vectorize=True),
    "jacobian_strict_forward": lambda t: t.autograd.functional.jacobian(
        lambda a: a, t.ones(3), strict=True, strategy="forward-mode"),
    "hessian_strategy": lambda t: t.autograd.functional.hessian(
        lambda a: a.sum(), t.ones(3), outer_jacobian_strategy="x"),
}


def _error(call: Callable[[Any], Any], engine: Any) -> tuple[str, str]:
    with pytest.raises(Exception) as info:
        call(engine)
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_engine_raises_torchs_error(name: str) -> None:
    expected = _error(CALLS[name], torch)
    assert _error(CALLS[name], reference_engine) == expected
    assert classify(expected[1], warning=False).startswith("functional_")


def test_forward_mode_jacobian_gives_torchs_values() -> None:
    """strategy="forward-mode" (vectorize=True) through the engine's forward AD: each output's
    jacobian per input, as torch computes it."""
    def jac(t: Any) -> Any:
        a = t.tensor([[1.0, 2.0, 3.0], [4.0, -5.0, 6.0]])
        b = t.tensor([0.5, -1.0, 2.0])
        return t.autograd.functional.jacobian(
            lambda x, y: (x * y, (x ** 2).sum(0), y.exp(), y.sum()), (a, b),
            strategy="forward-mode", vectorize=True)
    expected, got = jac(torch), jac(reference_engine)
    assert len(got) == len(expected) == 4
    for got_i, expected_i in zip(got, expected, strict=True):
        for g, e in zip(got_i, expected_i, strict=True):
            assert tuple(g.shape) == tuple(e.shape)
            np.testing.assert_allclose(np.array(g.tolist()), np.array(e.tolist()), rtol=1e-6)


def _calls_and_values(engine: Any, kind: str, no_grad: bool = False) -> tuple[int, list[Any]]:
    """How often the function ran, and the flattened results, of one forward-mode call."""
    calls = []

    def f(x: Any, y: Any) -> Any:
        calls.append(1)
        if kind == "jacobian":
            return (x.cos() * x) @ y.sin(), x.sum()
        return ((x.cos() * x) @ y.sin()).sum()
    t = engine
    x = t.tensor([[1.0, 2.0, 3.0], [4.0, -5.0, 6.0]], dtype=t.float64)
    y = t.tensor([[0.5, -1.0], [2.0, 0.25], [-3.0, 1.5]], dtype=t.float64)
    fn = t.autograd.functional.jacobian if kind == "jacobian" else t.autograd.functional.hessian
    key = "strategy" if kind == "jacobian" else "outer_jacobian_strategy"
    with t.no_grad() if no_grad else t.enable_grad():
        res = fn(f, (x, y), vectorize=True, **{key: "forward-mode"})
    return len(calls), [np.array(r.tolist()) for row in res for r in row]


@pytest.mark.parametrize("kind", ["jacobian", "hessian"])
def test_vectorized_forward_mode_calls_the_function_once(kind: str) -> None:
    """torch vmaps one jvp over the basis: one call of the function (6 + 6 basis columns
    here); the engine replays the recorded tangents' graph instead of calling it again."""
    expected_calls, expected = _calls_and_values(torch, kind)
    calls, got = _calls_and_values(reference_engine, kind)
    assert calls == expected_calls == 1
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def _inplace_jacobian(t: Any, calls: list[int]) -> Any:
    def f(x: Any) -> Any:
        calls.append(1)
        e = x.exp()
        s = e.sin()      # sin's jvp saves e, which mul_ then writes
        e.mul_(2)
        return s + e
    x = t.tensor([[1.0, 2.0, 3.0], [4.0, -5.0, 6.0]], dtype=t.float64)
    return t.autograd.functional.jacobian(f, x, strategy="forward-mode", vectorize=True)


def test_vectorized_forward_mode_replays_through_inplace_ops() -> None:
    """An in-place op on a dual tensor inside the function (its tangent written in place,
    a primal a formula saved written too): still one call, torch's values."""
    torch_calls: list[int] = []
    engine_calls: list[int] = []
    expected = _inplace_jacobian(torch, torch_calls)
    got = _inplace_jacobian(reference_engine, engine_calls)
    assert len(torch_calls) == len(engine_calls) == 1
    np.testing.assert_allclose(np.array(got.tolist()), np.array(expected.tolist()), rtol=1e-10)


def test_vectorized_forward_mode_under_no_grad_calls_once_a_column() -> None:
    """Grad mode off: the tangents' graph cannot be recorded, so the engine calls the
    function once per basis column (12 here; torch: once), with torch's values."""
    expected_calls, expected = _calls_and_values(torch, "jacobian", no_grad=True)
    calls, got = _calls_and_values(reference_engine, "jacobian", no_grad=True)
    assert (expected_calls, calls) == (1, 12)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def _constant_jvp_jacobian(t: Any, calls: list[int]) -> Any:
    """The forward-mode jacobian of a custom Function whose jvp returns a constant (not made
    from the input's tangent by engine ops: outside the recorded graph)."""
    class Constant(t.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x.clone()

        @staticmethod
        def jvp(ctx: Any, x_t: Any) -> Any:
            return t.ones(3)

    def f(x: Any) -> Any:
        calls.append(1)
        return Constant.apply(x)
    return t.autograd.functional.jacobian(f, t.zeros(3), strategy="forward-mode", vectorize=True)


def test_vectorized_forward_mode_checks_its_replay() -> None:
    """A tangent outside the seeds' graph makes the replayed rows miss the call's own
    tangents: the engine then computes the columns one call each (1 + 3 calls; torch: 1)
    and gives torch's values rather than the replay's zeros."""
    torch_calls: list[int] = []
    engine_calls: list[int] = []
    expected = _constant_jvp_jacobian(torch, torch_calls)
    got = _constant_jvp_jacobian(reference_engine, engine_calls)
    assert (len(torch_calls), len(engine_calls)) == (1, 4)
    np.testing.assert_array_equal(np.array(got.tolist()), np.array(expected.tolist()))
    assert np.array(got.tolist()).sum() == 9.0
