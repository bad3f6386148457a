"""The interpreter on real torch: a case's expectation blocks (raises, warns, no_warnings),
at top level and inside a Function's methods: what they absorb, record and fail on."""

from __future__ import annotations

import pytest

from conformance.case.language import parse
from conformance.run.compare import compare
from conformance.run.engine import load_engine
from conformance.run.evaluate import _check_warnings
from conformance.run.interpreter import run_program
from conformance.run.sandbox import CaseFailure, Expectation
from conformance.run.trace import ASSERTION, ERROR, Trace

TORCH = load_engine("torch")


def run(source: str, **kwargs: object) -> Trace:
    return run_program(TORCH, parse(source), **kwargs)  # type: ignore[arg-type]


def test_raises_absorbs_the_expected_kind_only() -> None:
    ok = run("x = torch.ones(2, requires_grad=True)\nwith raises('leaf_inplace'):\n"
             "    x.add_(1)\n    y = 1\nz = 2\n")
    assert ok.failure is None
    assert [s.line for s in ok.steps] == [1, 3, 2, 5]  # the body stops at the error
    assert ok.steps[1].outcome.status == ERROR and ok.steps[1].outcome.kind == "leaf_inplace"
    wrong = run("x = torch.ones(2, requires_grad=True)\nwith raises('backward_twice'):\n"
                "    x.add_(1)\n")
    assert wrong.failure is not None and wrong.failure.outcome.status == ASSERTION
    assert "got RuntimeError [leaf_inplace]" in str(wrong.failure.outcome.text)
    silent = run("with raises('backward_twice'):\n    x = 1\n")
    assert silent.failure is not None and "ran without error" in str(
        silent.failure.outcome.text)



def test_warns_and_the_recorded_warning() -> None:
    trace = run("x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
                "with warns('nonleaf_grad_access'):\n    g = y.grad\n")
    assert trace.failure is None
    (w,) = trace.steps[2].warnings
    assert (w.kind, w.category) == ("nonleaf_grad_access", "UserWarning")
    assert "Triggered internally" not in w.text
    missing = run("x = torch.ones(2, requires_grad=True)\nwith warns('nonleaf_grad_access'):\n"
                  "    g = x.grad\n")
    assert missing.failure is not None and missing.failure.outcome.status == ASSERTION



def test_no_warnings_fails_on_any_warning_of_its_block() -> None:
    quiet = run("x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
                "with no_warnings():\n    g = x.grad\n    z = y + 1\n")
    assert quiet.failure is None
    loud = run("x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
               "with no_warnings():\n    z = y + 1\n    g = y.grad\n")
    assert loud.failure is not None and loud.failure.outcome.status == ASSERTION
    assert "expected no warning; saw ['nonleaf_grad_access']" in str(loud.failure.outcome.text)
    in_method = run("""\
class Loud(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with torch.enable_grad():
            with no_warnings():
                g = (x * 2).grad
        return x * 1
    @staticmethod
    def backward(ctx, g):
        return g
x = torch.ones(1, requires_grad=True)
y = Loud.apply(x)
""")
    assert in_method.failure is not None and in_method.failure.line == 12
    assert "expected no warning" in str(in_method.failure.outcome.text)



def test_warns_with_a_count_fails_on_more_or_other_warnings() -> None:
    # torch's tests' `len(w) == N`: exactly N warnings, each of the kind
    prefix = "x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
    once = run(prefix + "with warns('nonleaf_grad_access', count=1):\n    g = y.grad\n")
    assert once.failure is None
    twice = run(prefix + "with warns('nonleaf_grad_access', count=1):\n    g = y.grad\n"
                "    h = y.grad\n")
    assert twice.failure is not None and twice.failure.outcome.status == ASSERTION
    assert "expected exactly 1 warning(s)" in str(twice.failure.outcome.text)
    assert run(prefix + "with warns('nonleaf_grad_access', count=2):\n    g = y.grad\n"
               "    h = y.grad\n").failure is None
    other = Expectation(True, "nonleaf_grad_access", None, 1)
    with pytest.raises(CaseFailure, match="expected exactly 1"):
        _check_warnings(other, ["nonleaf_grad_access", "mark_dirty_not_input"],
                        warn_always=True)



def test_warns_of_a_once_per_process_kind() -> None:
    # under warn-always (every run on torch) it is given, and checked, at every call
    program = ("b = torch.ones(2, requires_grad=True)\nc = b * b\n"
               "with warns('create_graph_reference_cycle'):\n"
               "    c.backward(torch.ones_like(c), create_graph=True)\n")
    assert run(program).failure is None and run(program).failure is None
    # an engine run without warn-always gives it once per process: not checked there
    once = Expectation(True, "create_graph_reference_cycle")
    _check_warnings(once, [], warn_always=False)
    with pytest.raises(CaseFailure, match="expected a warning of kind"):
        _check_warnings(once, [], warn_always=True)



def test_raises_and_warns_inside_a_method() -> None:
    program = """\
class Checked(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with raises("{kind}"):
            x.reshape(3)
        with torch.enable_grad():
            with warns("nonleaf_grad_access"):
                g = (x * 2).grad
        return x * 1
    @staticmethod
    def backward(ctx, g):
        return g
x = torch.ones(1, requires_grad=True)
y = Checked.apply(x)
"""
    trace = run(program.format(kind="shape_mismatch"))
    assert trace.failure is None, trace.failure
    # the warning the method gave is its calling statement's
    assert [w.kind for w in trace.steps[2].warnings] == ["nonleaf_grad_access"]
    wrong = run(program.format(kind="backward_twice"))
    assert wrong.failure is not None and wrong.failure.line == 14
    assert wrong.failure.outcome.status == ASSERTION
    assert "expected an error of kind 'backward_twice'; got RuntimeError [shape_mismatch]" in \
        str(wrong.failure.outcome.text)



def test_raises_with_a_type_checks_the_error_class_and_its_bases() -> None:
    """`raises(kind, type="Name")`: the kind, and the error's class or a base named Name;
    torch's gradcheck failure is a GradcheckError, a RuntimeError."""
    program = """\
fn = lambda x: (lambda y: (y.register_hook(lambda g: g + 1e-2), y)[1])(x.clone())
x = torch.ones(2, 2, requires_grad=True)
with raises("gradcheck_jacobian_mismatch", type="{name}"):
    torch.autograd.gradcheck(fn, (x,), fast_mode=False)
class Checked(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with raises("shape_mismatch", type="{inner}"):
            x.reshape(3)
        return x * 1
    @staticmethod
    def backward(ctx, g):
        return g
y = Checked.apply(x)
"""
    for name in ("GradcheckError", "RuntimeError", "Exception"):
        trace = run(program.format(name=name, inner="RuntimeError"))
        assert trace.failure is None, trace.failure
    wrong = run(program.format(name="ValueError", inner="RuntimeError"))
    assert wrong.failure is not None and wrong.failure.line == 3
    assert wrong.failure.outcome.status == ASSERTION
    # (the outcome names the error by its builtin class, as the trace compares it)
    assert ("expected an error of kind 'gradcheck_jacobian_mismatch' of type ValueError; "
            "got RuntimeError [gradcheck_jacobian_mismatch]") in str(wrong.failure.outcome.text)
    in_method = run(program.format(name="GradcheckError", inner="GradcheckError"))
    assert in_method.failure is not None and in_method.failure.line == 14
    assert "of type GradcheckError; got RuntimeError [shape_mismatch]" in \
        str(in_method.failure.outcome.text)



def test_a_resource_warning_is_not_a_statements_warning() -> None:
    # The garbage collector warns of an unclosed file of anything in the process at whatever
    # statement it runs: recording it made a verdict depend on the items run before.
    program = parse("a = torch.tensor([1.0])\nb = torch.exp(a)\nc = torch.tensor([1.0]) * 2\n")
    leaky = run_program(load_engine("tests.conformance.engine_leaks_resource"), program)
    assert [s.warnings for s in leaky.steps] == [[], [], []]
    assert compare(run_program(TORCH, program), leaky, "float32").divergence is None
