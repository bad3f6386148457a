"""The comparator catches injected divergences and names the statement and field."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from conformance.case.language import parse
from conformance.run.compare import compare, values_differ
from conformance.run.engine import load_engine
from conformance.run.interpreter import run_program
from conformance.run.trace import ERROR, Outcome, TensorSnapshot, Trace
from tests.conformance import wrong_engines as wrong

TORCH = load_engine("torch")

PROGRAM = parse("""\
a = torch.tensor([1.0, 2.0], requires_grad=True)
c = a * 3
b = torch.exp(a)
loss = torch.mean(b)
loss.backward()
""")


def torch_trace(dtype: str = "float32") -> Trace:
    return run_program(TORCH, PROGRAM, dtype=dtype)


def test_torch_agrees_with_itself() -> None:
    result = compare(torch_trace(), torch_trace(), "float32")
    assert result.divergence is None and result.message is None


@pytest.mark.parametrize(
    ("engine", "line", "field"),
    [
        (wrong.WRONG_EXP, 3, "b.values"),
        (wrong.DETACHED_EXP, 3, "b.requires_grad"),
        (wrong.WRONG_MEAN, 4, "loss.grad_fn"),
        (wrong.RAISING_EXP, 3, "outcome.status"),
        (wrong.VERSION_EXP, 3, "b.version"),
        (wrong.WARNING_EXP, 3, "warnings"),
    ],
)
def test_wrong_engine_is_caught_at_the_right_statement(engine: object, line: int,
                                                        field: str) -> None:
    expected = torch_trace()
    actual = run_program(engine, PROGRAM)  # type: ignore[arg-type]
    d = compare(expected, actual, "float32").divergence
    assert d is not None
    assert (d.line, d.field) == (line, field)
    assert not d.strict


def test_grad_divergence_is_found_after_backward() -> None:
    # Values of b are fine if the perturbation only touches grads: scale the upstream grad.
    program = parse("a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                    "b = torch.exp(a)\n"
                    "b.sum().backward()\n")
    expected = run_program(TORCH, program)
    actual = copy.deepcopy(expected)
    snap = actual.steps[2].names["a"]
    assert snap.grad is not None
    object.__setattr__(snap.grad, "values", snap.grad.values * 2)
    d = compare(expected, actual, "float32").divergence
    assert d is not None and (d.line, d.field) == (3, "a.grad.values")


def test_message_text_is_a_separate_strict_field() -> None:
    program = parse("x = torch.ones(2, requires_grad=True)\n"
                    "with raises('leaf_inplace'):\n"
                    "    x.add_(1)\n")
    expected = run_program(TORCH, program)
    actual = copy.deepcopy(expected)
    step = actual.steps[1]
    assert step.outcome.status == ERROR and step.outcome.kind == "leaf_inplace"
    step.outcome = Outcome(ERROR, "leaf_inplace", "RuntimeError", "a leaf Variable that "
                           "requires grad is being used in an in-place operation!")
    result = compare(expected, actual, "float32")
    assert result.divergence is None
    assert result.message is not None and result.message.strict
    assert (result.message.line, result.message.field) == (3, "outcome.text")


def test_error_kind_divergence_is_behavioural() -> None:
    program = parse("x = torch.ones(2, requires_grad=True)\n"
                    "with raises('leaf_inplace'):\n"
                    "    x.add_(1)\n")
    expected = run_program(TORCH, program)
    actual = copy.deepcopy(expected)
    actual.steps[1].outcome = Outcome(ERROR, "backward_twice", "RuntimeError", "other")
    d = compare(expected, actual, "float32").divergence
    assert d is not None and d.field == "outcome.kind" and not d.strict


def test_shorter_trace_diverges() -> None:
    expected = torch_trace()
    actual = copy.deepcopy(expected)
    actual.steps.pop()
    d = compare(expected, actual, "float32").divergence
    assert d is not None and d.field == "steps" and d.line == 5


@pytest.mark.parametrize(
    ("a", "b", "dtype", "why"),
    [
        ([1.0, 2.0], [1.0, 2.0 + 1e-6], "torch.float32", None),
        ([1.0, 2.0], [1.0, 2.0 + 1e-4], "torch.float32", "values"),
        ([1.0, 2.0], [1.0, 2.0 + 1e-6], "torch.float64", "values"),
        ([0.0, 1.0], [-0.0, 1.0], "torch.float32", "signed_zero"),
        ([0.0, np.nan], [-0.0, np.nan], "torch.float32", "signed_zero"),
        # beside a rounding-level difference, a zero's sign is rounding too
        ([0.0, 0.0], [-0.0, -3.5e-15], "torch.float32", None),
        ([0.0, 1.0], [-0.0, 1.0 + 1e-7], "torch.float32", None),
        ([np.nan, 1.0], [np.nan, 1.0], "torch.float32", None),
        ([np.nan, 1.0], [0.0, 1.0], "torch.float32", "values"),
        ([1, 2], [1, 3], "torch.int64", "values"),
        # complex: each part by the tolerances of the part's dtype, NaN and zeros' signs too
        ([1 + 2j], [1 + (2 + 1e-6) * 1j], "torch.complex64", None),
        ([1 + 2j], [1 + (2 + 1e-4) * 1j], "torch.complex64", "values"),
        ([1 + 2j], [1 + (2 + 1e-6) * 1j], "torch.complex128", "values"),
        ([complex(np.nan, 1)], [complex(np.nan, 1)], "torch.complex64", None),
        ([complex(np.nan, 1)], [complex(1, np.nan)], "torch.complex64", "values"),
        ([complex(1, np.inf)], [complex(1, np.inf)], "torch.complex64", None),
        ([complex(1, np.inf)], [complex(1, -np.inf)], "torch.complex64", "values"),
        ([complex(0.0, 1)], [complex(-0.0, 1)], "torch.complex64", "signed_zero"),
        ([1 + 0j], [1.0], "torch.complex64", None),   # a real and a complex array
    ],
)
def test_value_tolerances(a: list[float], b: list[float], dtype: str, why: str | None) -> None:
    assert values_differ(np.array(a), np.array(b), dtype) == why


def test_engine_made_tensors_skip_kernel_artefact_fields() -> None:
    program = parse("x = torch.ones(2, requires_grad=True)\n"
                    "g, = torch.autograd.grad((x * x).sum(), [x])\n")
    expected = run_program(TORCH, program)
    actual = copy.deepcopy(expected)
    snap = actual.steps[1].names["g"]
    assert isinstance(snap, TensorSnapshot) and snap.engine_made
    object.__setattr__(snap, "is_view", not snap.is_view)
    object.__setattr__(snap, "version", snap.version + 1)
    assert compare(expected, actual, "float32").divergence is None
    object.__setattr__(snap, "grad_fn", "MulBackward0")
    d = compare(expected, actual, "float32").divergence
    assert d is not None and d.field == "g.grad_fn"


BATCHED_ARGUMENT = parse("""\
x = torch.tensor([1.0, 2.0])
def g(t):
    return t * 2
def f(a):
    g(fwAD.unpack_dual(a).tangent)
    return a * 2
j = torch.autograd.functional.jacobian(f, x, strategy="forward-mode", vectorize=True)
""")


def test_unreadable_values_are_observed_as_the_error_reading_them_raised() -> None:
    # a batched tangent given to a program's function (an event's argument): torch's detach
    # has no batching rule, so the harness's copy of its values raises; the program goes on
    # and the event records the error's kind and text in place of the values
    trace = run_program(TORCH, BATCHED_ARGUMENT, dtype="float64")
    assert trace.failure is None
    received = [e.received["arg0"] for e in trace.steps[-1].events if e.source.startswith("g@")]
    assert received, "g's call was recorded"
    values = received[0].values  # type: ignore[union-attr]
    assert isinstance(values, str) and values.startswith("raises vmap_no_batching_rule: ")
    assert "aten::detach" in values
    # the comparator: equal texts agree; a text against values, or another text, differs
    assert values_differ(values, values, "torch.float64") is None
    assert values_differ(values, np.array([1.0, 2.0]), "torch.float64") == "values"
    assert values_differ(np.array([1.0, 2.0]), "raises other: x", "torch.float64") == "values"
