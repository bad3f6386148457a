"""`raise` and `with CONTEXT as NAME` in the case language: what they state, on both engines,
and what they keep out of a program's reach (the caught exception, tracebacks, dunders, a
BaseException that would end the run)."""

from __future__ import annotations

import pytest

from conformance.case import kinds
from conformance.case.diagnostics import CaseError
from conformance.case.language import parse, to_source
from conformance.run.compare import compare
from conformance.run.engine import load_engine
from conformance.run.evaluate import statement_outcome
from conformance.run.interpreter import Interpreter, run_program
from conformance.run.sandbox import CaseFailure
from conformance.run.trace import ASSERTION, ERROR, OK, Trace, ValueSnapshot

TORCH = load_engine("torch")
REFERENCE = load_engine("reference_engine")

PROGRAM = """\
class Boom(RuntimeError):
    pass
class Fails(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()
    @staticmethod
    def backward(ctx, g):
        raise Boom("Simulate error on backward pass")
x = torch.rand(3, requires_grad=True)
y = Fails.apply(x * 2)
with raises("case_raised"):
    y.sum().backward()
with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
    a = torch.rand(3, requires_grad=True)
    b = a.clone()
    c = b * b
    b.sin_()
    n = len(ctx.cloned)
    c.sum().backward()
with fwAD.dual_level() as level:
    assert level == 0
"""


def run(engine: object, source: str) -> Trace:
    return run_program(engine, parse(source))  # type: ignore[arg-type]


def refused(source: str) -> CaseError:
    with pytest.raises(CaseError) as error:
        parse(source)
    return error.value


def last_outcome(source: str) -> tuple[str, str | None, str | None]:
    step = run(TORCH, source).steps[-1]
    return step.outcome.status, step.outcome.kind, step.outcome.text


def test_raise_and_with_as_run_alike_on_both_engines() -> None:
    program = parse(PROGRAM)
    assert parse(to_source(program)) == program
    expected, actual = run(TORCH, PROGRAM), run(REFERENCE, PROGRAM)
    assert expected.failure is None and actual.failure is None
    backward = next(s for s in expected.steps if s.line == 13)
    assert (backward.outcome.kind, backward.outcome.type, backward.outcome.text) == (
        "case_raised", "RuntimeError", "Simulate error on backward pass")
    assert expected.steps[-1].names["n"] == ValueSnapshot("int", 1)
    assert compare(expected, actual, "float32").divergence is None


def test_the_kind_is_given_by_identity_not_by_text() -> None:
    # a program cannot pass its own error off as one of torch's kinds, nor an engine's
    # error (another object with the same text) as the program's
    text = "Trying to backward through the graph a second time"
    assert last_outcome(f'raise RuntimeError("{text}")\n')[:2] == (ERROR, "case_raised")
    status, _, message = last_outcome(
        f'with raises("backward_twice"):\n    raise RuntimeError("{text}")\n')
    assert status == ASSERTION and "case_raised" in str(message)
    assert statement_outcome(RuntimeError("Simulate")).kind == kinds.UNKNOWN
    assert statement_outcome(RuntimeError(text)).kind == "backward_twice"


@pytest.mark.parametrize("source", [
    'with raises("backward_twice") as e:\n    pass\n',
    'with warns("anomaly_enabled") as w:\n    pass\n',
    "with no_warnings() as w:\n    pass\n",
])
def test_the_caught_exception_is_never_bound(source: str) -> None:
    assert "takes no `as`" in refused(source).message


def test_an_expectation_reached_by_name_is_refused_as_well() -> None:
    status, _, message = last_outcome(
        'r = raises("backward_twice")\nwith r as e:\n    pass\n')
    assert status == ASSERTION and "takes no `as`" in str(message)


@pytest.mark.parametrize("source, problem", [
    ("with torch.no_grad() as (a, b):\n    pass\n", "binds one name"),
    ("x = torch.ones(1)\nwith torch.no_grad() as x.grad:\n    pass\n", "binds one name"),
    ("with torch.no_grad() as torch:\n    pass\n", "reserved name"),
    ("with torch.no_grad() as a, torch.enable_grad() as b:\n    pass\n", "one context"),
    # bound to an engine object: no attribute of it may be set
    ("with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:\n"
     "    ctx.data = torch.ones(1)\n", "an engine object"),
    ("with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:\n"
     "    c = ctx.__dict__\n", "dunder"),
    ("with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:\n"
     "    ctx.cloned[1] = 2\n", "cannot assign"),
])
def test_with_as_binds_one_plain_name(source: str, problem: str) -> None:
    assert problem in refused(source).message


@pytest.mark.parametrize("source, problem", [
    ("raise\n", "bare `raise`"),
    ('raise RuntimeError("a") from ValueError("b")\n', "from"),
    ("raise 5\n", "cannot raise"),
    ('raise "text"\n', "cannot raise"),
    ("raise torch.autograd.Function\n", "cannot raise"),
    # Python's BaseExceptions outside Exception are not names of the language
    ("raise SystemExit\n", "unknown name"),
    ("raise KeyboardInterrupt()\n", "unknown name"),
    ("raise GeneratorExit\n", "unknown name"),
    ("raise BaseException\n", "unknown name"),
    ("class E(BaseException):\n    pass\n", "derive from"),
    ("class E(SystemExit):\n    pass\n", "derive from"),
    ("class E(Exception, RuntimeError):\n    pass\n", "derive from"),
    ("class E(RuntimeError):\n    x = 1\n", "holds only `pass`"),
    ("class E(RuntimeError):\n    @staticmethod\n    def forward(ctx):\n        return 1\n",
     "holds only `pass`"),
    # an exception's traceback, frames and other attributes are out of reach
    ('e = RuntimeError("x")\nt = e.__traceback__\n', "dunder"),
    ('e = RuntimeError("x")\nt = e.with_traceback(None)\n', "not in the supported API"),
    ('e = RuntimeError("x")\nt = e.args\n', "not in the supported API"),
    ("class Exception(RuntimeError):\n    pass\n", "reserved name"),
])
def test_raise_is_refused_at_load_time(source: str, problem: str) -> None:
    assert problem in refused(source).message


@pytest.mark.parametrize("value", ["torch.ones(1)", "len", "raises('backward_twice')"])
def test_raising_a_non_exception_fails_the_case_not_the_run(value: str) -> None:
    status, _, message = last_outcome(f"v = {value}\nraise v\n")
    assert status == ASSERTION and "exception class of the case language" in str(message)


@pytest.mark.parametrize("error", [SystemExit, KeyboardInterrupt, GeneratorExit,
                                   SystemExit(0), BaseException("x"), CaseFailure("x")])
def test_no_base_exception_nor_harness_exception_is_ever_raised(error: object) -> None:
    # not reachable by name; and if a value of the kind reached `raise`, it is refused
    interpreter = Interpreter(TORCH)
    with pytest.raises(CaseFailure, match="exception class of the case language"):
        interpreter._exception(error)


def test_a_raise_at_the_top_level_is_an_error_outcome_and_the_run_stops() -> None:
    trace = run(TORCH, 'class Stop(Exception):\n    pass\nraise Stop("here")\n'
                       "x = torch.ones(1)\n")
    assert [s.outcome.status for s in trace.steps] == [OK, ERROR]
    assert (trace.steps[-1].outcome.type, trace.steps[-1].outcome.kind) == (
        "Exception", "case_raised")


HOOKS = """\
class Boom(Exception):
    pass
def hook(grad):
    raise Boom("x is undefined")
def double(grad):
    g = grad * 2
    return g
x = torch.ones(2, requires_grad=True)
y = x * 3
y.register_hook(double)
y.sum().backward()
y2 = x * 3
y2.register_hook(hook)
with raises("case_raised"):
    y2.sum().backward()
def pack(t):
    raise RuntimeError("no packing")
with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    with raises("case_raised"):
        z = x * x
"""


def test_a_function_of_the_program_is_a_hook_that_may_raise() -> None:
    program = parse(HOOKS)
    assert parse(to_source(program)) == program
    expected, actual = run(TORCH, HOOKS), run(REFERENCE, HOOKS)
    assert expected.failure is None and actual.failure is None
    raised = [(s.line, s.outcome.type, s.outcome.text) for s in expected.steps
              if s.outcome.status == ERROR]
    assert raised == [(15, "Exception", "x is undefined"), (20, "RuntimeError", "no packing")]
    double = next(s for s in expected.steps if s.line == 11)
    assert [e.source for e in double.events] == ["double@5"]
    assert compare(expected, actual, "float32").divergence is None


@pytest.mark.parametrize("source, problem", [
    ("class G(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
     "        def g(y):\n            return y\n        return x\n", "top level"),
    ("@staticmethod\ndef f(x):\n    return x\n", "plain positional"),
    # literal defaults are the language's (5b6719c6), not beside *args nor computed ones
    ("def f(x=1, *xs):\n    return x\n", "plain positional"),
    ("def f(x=[1]):\n    return x\n", "a default of f is a literal"),
    ("def f(*, k):\n    return k\n", "plain positional"),
    ("def f(*xs: int):\n    return xs\n", "plain positional"),
    ("def f(x) -> int:\n    return x\n", "plain positional"),
    ("def torch(x):\n    return x\n", "reserved name"),
    ("def f(x):\n    return x.__class__\n", "dunder"),
    ("return 1\n", "outside a function"),
])
def test_def_is_refused_at_load_time(source: str, problem: str) -> None:
    assert problem in refused(source).message


def test_a_function_calling_itself_meets_the_nesting_limit() -> None:
    status, _, message = last_outcome("def f(x):\n    return f(x)\ny = f(1)\n")
    assert status == "limit" and "nest more than" in str(message)


STAR = """\
def f(a, *rest, **kw):
    return len(rest) + 10 * len(kw)
n = f(1, 2, 3, k=4)
m = f(1)
def g(a):
    return a
with raises("python_type_error"):
    g(1, k=2)
"""


def test_a_function_of_the_program_takes_star_args_and_kwargs() -> None:
    # a selective-checkpoint policy is called with each op's arguments (def policy(ctx, op,
    # *args, **kwargs)); its event records them all
    program = parse(STAR)
    assert parse(to_source(program)) == program
    expected, actual = run(TORCH, STAR), run(REFERENCE, STAR)
    assert expected.failure is None and actual.failure is None
    call = next(s for s in expected.steps if s.line == 3)
    assert call.names["n"] == ValueSnapshot("int", 12)
    assert sorted(call.events[0].received) == ["arg0", "arg1", "arg2", "arg3"]
    assert compare(expected, actual, "float32").divergence is None
