"""Each documented limit of a run (docs/case-format.md, "Limits"; README's "Limits") against
programs that try to get past it: loop bounds computed at run time or hidden in a Function,
statements multiplied by lambdas and methods, tensors kept alive in numbers, snapshots
repeated step after step. Each ends with the documented outcome at its line; none hangs or
takes memory beyond the limit. The per-operation element limit has its own file
(test_op_memory_limits.py); the wall-clock limit is in test_time_limit.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.case import api
from conformance.case.diagnostics import CaseError
from conformance.case.language import parse
from conformance.case.loader import load_case
from conformance.run import limits
from conformance.run.engine import load_engine
from conformance.run.interpreter import run_program
from conformance.run.runner import ERROR, PASS, Item, ItemResult, run_item
from conformance.run.trace import LIMIT

TORCH = load_engine("torch")
REFERENCE = load_engine("reference_engine")
ROOT = Path(__file__).resolve().parents[2]
PATH = "cases/hostile/limits.yaml"
HEADER = "description: hostile\nfeatures: [ops]\ndevices: [cpu]\nprogram: |\n"
FIRST_LINE = 5  # the file line of the program's first line


def run_case(program: str, engine: object = REFERENCE) -> ItemResult:
    text = HEADER + "".join(f"  {line}\n" for line in program.splitlines())
    return run_item(Item(load_case(PATH, text), "cpu", "float32"), engine)  # type: ignore[arg-type]


def where(line: int) -> str:
    return f"{PATH}:{FIRST_LINE + line - 1}"


def function(forward_body: str) -> str:
    """A Function class whose forward runs `forward_body` (indented by 8) on x, applied to x
    by the program's last line."""
    return ("class L(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
            + forward_body + "\n        return x\n    @staticmethod\n"
            "    def backward(ctx, g):\n        return g\n" + "x = torch.ones(1)\n"
            "y = L.apply(x)")


# ---- iterations of one `for`: 64 -------------------------------------------------------------
@pytest.mark.parametrize("bound", ["65", "0, 65", "1000, 0, -1"])
def test_a_constant_loop_bound_beyond_64_is_refused_at_load(bound: str) -> None:
    with pytest.raises(CaseError) as info:
        load_case(PATH, HEADER + f"  for i in range({bound}):\n    x = 1\n")
    assert info.value.line == FIRST_LINE and "exceeds 64" in info.value.message


@pytest.mark.parametrize("bound", ["n", "-n, 0", "0, n * n, n", "10 ** 100", "n, 0, -1",
                                   "-(10 ** 100), 0"])
def test_a_computed_loop_bound_beyond_64_is_a_limit_outcome(bound: str) -> None:
    result = run_case(f"n = 65\nfor i in range({bound}):\n    x = 1")
    assert result.verdict == ERROR
    assert result.reason.startswith(f"the case exceeds a limit at {where(2)} `for i in range("
                                    ), result.reason
    assert f"the case language allows {api.MAX_RANGE} per loop" in result.reason


@pytest.mark.parametrize("program", [
    "f = lambda g: g(g)\nf(f)",
    "f = lambda g, n: n == 0 or g(g, n - 1)\nf(f, 40)",  # an end, but too deep
])
def test_calls_nested_too_deep_are_a_limit_outcome(program: str) -> None:
    result = run_case(program)
    assert result.verdict == ERROR
    assert result.reason.startswith(f"the case exceeds a limit at {where(2)} `f(f"), \
        result.reason
    assert f"nest more than {limits.MAX_CALL_DEPTH} deep" in result.reason


def test_calls_nested_within_the_depth_limit_run() -> None:
    assert run_case("f = lambda g, n: n == 0 or g(g, n - 1)\ny = f(f, 30)\n"
                    "assert y").verdict == PASS


def test_sixty_four_iterations_of_huge_numbers_run() -> None:
    assert run_case("n = 10 ** 100\nfor i in range(n, n + 64):\n    x = i - n").verdict == PASS


def test_a_loop_hidden_in_a_function_meets_the_same_limit() -> None:
    result = run_case(function("        n = 10 ** 10\n        for i in range(n):\n"
                               "            x = x + 1"))
    assert result.verdict == ERROR
    assert result.reason.startswith(f"the case exceeds a limit at {where(12)} `y = L.apply(x)`")
    assert "`range(10000000000)` has 10000000000 iterations" in result.reason


# ---- statements per run: 10,000 --------------------------------------------------------------
MORE_THAN = f"the run executed more than {limits.MAX_STATEMENTS} statements"


def test_loops_in_a_function_body_count() -> None:
    result = run_case(function("        for i in range(64):\n            for j in range(64):\n"
                               "                for k in range(64):\n"
                               "                    x = x + 1"))
    assert result.verdict == ERROR
    assert result.reason.startswith(f"stopped at {where(7)} `x = x + 1` on torch: {MORE_THAN}")


def test_a_lambda_calling_itself_twice_stops_at_the_statement_limit() -> None:
    # 2^31 evaluations if nothing stopped it: each evaluation of a lambda is one statement
    result = run_case("f = lambda n: n > 0 and (f(n - 1), f(n - 1))\ny = f(30)")
    assert result.verdict == ERROR
    assert result.reason.startswith(f"stopped at {where(1)} `f = lambda n:"), result.reason
    assert MORE_THAN in result.reason


def test_unbounded_recursion_is_a_limit_outcome() -> None:
    """A lambda or a Function that calls itself without end meets the call-depth limit
    before Python's recursion limit: a limit, like a loop too long (not the case
    disagreeing with torch)."""
    for program, line in (("f = lambda n: f(n + 1)\ny = f(0)", 2),
                          (function("        x = L.apply(x)"), 10)):
        result = run_case(program)
        assert result.verdict == ERROR
        assert result.reason.startswith(f"the case exceeds a limit at {where(line)}"), \
            result.reason
        assert f"nest more than {limits.MAX_CALL_DEPTH} deep" in result.reason


# ---- tensor elements alive at once: 2^27 ---------------------------------------------------
@pytest.fixture
def small_budget(monkeypatch: pytest.MonkeyPatch) -> int:
    """The live-element limit at 2^20, so that what breaks it stays small here."""
    monkeypatch.setattr(limits, "MAX_LIVE_ELEMENTS", 1 << 20)
    return 1 << 20


def _calls(call: str, n: int = 9) -> str:
    return "[" + ", ".join([call] * n) + "]"


@pytest.mark.parametrize(("program", "line"), [
    # kept in a list, each tensor far within the per-operation limit
    ("l = " + _calls("torch.ones(2 ** 17)"), 1),
    # kept in a list that a loop grows
    ("l = []\nfor i in range(9):\n    l = l + [torch.rand(2 ** 17)]", 3),
    # returned in tuples
    ("x = torch.ones(2 ** 17, requires_grad=True)\ny = (x * 2).sum()\n"
     "gs = " + _calls("torch.autograd.grad(y, x, retain_graph=True)", 7), 3),
    # a module's parameters
    ("ms = " + _calls("nn.Linear(512, 256)"), 1),
])
def test_tensors_kept_alive_end_the_run(small_budget: int, program: str, line: int) -> None:
    for engine in (TORCH, REFERENCE):
        with pytest.raises(limits.RunLimit) as info:
            run_program(engine, parse(program))
        assert info.value.line == line
        assert f"the program's tensors hold more than {small_budget} elements at once" in \
            str(info.value)
    result = run_case(program)
    assert result.verdict == ERROR and result.reason.startswith(f"stopped at {where(line)}")


def test_freed_tensors_views_and_in_place_results_are_not_counted(small_budget: int) -> None:
    # x, y and z hold 3/4 of the budget: a freed tensor or a view still counted goes beyond
    # it within two iterations (8 leave margin; 64 cost 13 s of CPU for the same proof)
    program = ("x = torch.ones(2 ** 18)\nfor i in range(8):\n    y = x * 2\n"
               "    z = torch.rand(2 ** 18)\n    x.add_(1)\n    x += 1\n    x[0] = 2.0\n"
               "    v = x[1:]\n    w = x.view(2, -1)\n    e = x.expand(4, -1)")
    assert run_case(program).verdict == PASS


# Keeps 64 tensors at the per-operation limit alive (4 GB if nothing stopped it) and prints
# the peak resident memory above the baseline and the reason.
KEEP = """\
import json, resource
from tests.conformance.test_limits_hold import run_case

def maxrss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux

run_case("x = torch.ones(4)\\ny = [x * 2, x[torch.tensor([0])]]")  # warm
before = maxrss()
result = run_case("l = [" + ", ".join(["torch.ones(2 ** 24)"] * 64) + "]")
print(json.dumps([maxrss() - before, result.verdict, result.reason]))
"""


def test_tensors_kept_alive_stay_within_the_limit_in_memory() -> None:
    done = subprocess.run([sys.executable, "-c", KEEP], cwd=ROOT, capture_output=True,
                          text=True, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    peak, verdict, reason = json.loads(done.stdout.splitlines()[-1])
    assert verdict == ERROR and "hold more than 134217728 elements at once" in reason, reason
    # float32: the budget's worth, one tensor beyond it, and 128 MB for the process's own
    bound = (limits.MAX_LIVE_ELEMENTS + limits.MAX_TENSOR_ELEMENTS) * 4 + (128 << 20)
    assert peak <= bound, (peak, bound)


# ---- snapshot memory of one run's trace: 256 MB ---------------------------------------------
def test_many_large_tensors_in_view_step_after_step_stop_at_the_trace_budget() -> None:
    # 32 tensors just below the summary threshold (copied, 256 KB each) in a list that every
    # step shows again: the budget counts each step's view, 8 MB a step
    n = limits.SUMMARY_THRESHOLD
    program = (f"a = torch.rand({n})\nl = [" + ", ".join(f"a * {k}" for k in range(32))
               + "]\nfor i in range(64):\n    j = i")
    result = run_case(program)
    assert result.verdict == ERROR
    assert "exceeds its memory budget of 256 MB of snapshots" in result.reason
    assert result.reason.startswith(f"stopped at {where(4)} `j = i` on torch"), result.reason


def test_hook_events_count_against_the_trace_budget() -> None:
    # a hook receiving and returning a copied tensor at each of 4096 backward calls: 512 KB
    # of event snapshots each
    n = limits.SUMMARY_THRESHOLD
    program = (f"x = torch.ones({n}, requires_grad=True)\nh = x.register_hook(lambda g: g)\n"
               "for i in range(64):\n    for j in range(64):\n        x.sum().backward()")
    result = run_case(program)
    assert result.verdict == ERROR
    assert "exceeds its memory budget of 256 MB of snapshots" in result.reason
    assert result.reason.startswith(f"stopped at {where(5)} `x.sum().backward()`")


def test_a_limit_is_never_an_expected_error() -> None:
    trace = run_program(TORCH, parse('with raises("shape_mismatch"):\n    n = 65\n'
                                     "    for i in range(n):\n        x = 1"))
    assert trace.failure is not None and trace.failure.outcome.status == LIMIT
