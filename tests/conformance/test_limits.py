"""Bounds on one item (conformance.run.limits): hostile programs end with a verdict naming the
case's file and line, never a hang or unbounded memory. The programs live here, not in
cases/: they are not behaviours of autograd. (The wall-clock limit: test_time_limit.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from conformance.case.language import parse
from conformance.case.loader import load_case
from conformance.run import limits
from conformance.run.compare import summaries_differ
from conformance.run.engine import load_engine
from conformance.run.interpreter import run_program
from conformance.run.runner import ERROR, PASS, Item, ItemResult, run_item
from conformance.run.tensor_read import tensor_summary
from conformance.run.trace import LIMIT, TensorSnapshot, TensorSummary

TORCH = load_engine("torch")
REFERENCE = load_engine("reference_engine")
PATH = "cases/hostile/program.yaml"
HEADER = "description: hostile\nfeatures: [ops]\ndevices: [cpu]\nprogram: |\n"
FIRST_LINE = 5  # the file line of the program's first line


def run_case(program: str, engine: object = REFERENCE, **kwargs: float) -> ItemResult:
    text = HEADER + "".join(f"  {line}\n" for line in program.splitlines())
    case = load_case(PATH, text)
    return run_item(Item(case, "cpu", "float32"), engine, **kwargs)  # type: ignore[arg-type]


def where(program_line: int) -> str:
    return f"{PATH}:{FIRST_LINE + program_line - 1}"


# ---- per-operation limits of the case language ---------------------------------------------
@pytest.mark.parametrize(("program", "line", "says"), [
    ("x = 1\ny = 2 ** 10 ** 10", 2, "would be a number of about 1e+10 bits"),
    ("y = 2.5 ** 10 ** 10", 1, "bits; the case language allows 4096"),
    ('s = "a" * 10 ** 10', 1, "would make 10000000000 items"),
    ("s = 10 ** 10 * [1.0]", 1, "would make 10000000000 items"),
    ("s = [1.0]\nfor i in range(64):\n    s = s + s", 3, "a list of 131072 items"),
    ("n = 2 ** 4000\nfor i in range(64):\n    n *= n", 3, "an integer of 8001 bits"),
    ("x = torch.zeros(10 ** 6, 10 ** 6)", 1, "`torch.zeros(...)` would have 1000000000000"),
    ("x = torch.rand((10 ** 5, 10 ** 5))", 1, "`torch.rand(...)` would have 10000000000"),
    ("x = torch.arange(10 ** 9)", 1, "`torch.arange(...)` would have 1000000000"),
    # a tensor's new_* methods are factories too: counted before the call, not after it
    # allocated (h37fwd; they were counted only as "a tensor an operation made")
    ("x = torch.ones(2)\ny = x.new_zeros(10 ** 6, 10 ** 6)", 2,
     "`Tensor.new_zeros(...)` would have 1000000000000"),
    ("x = torch.ones(2)\ny = x.new_ones((10 ** 6, 10 ** 6))", 2,
     "`Tensor.new_ones(...)` would have 1000000000000"),
    ("x = torch.ones(2)\ny = x.new_full((10 ** 6, 10 ** 6), 2.0)", 2,
     "`Tensor.new_full(...)` would have 1000000000000"),
    ("x = torch.ones(2)\ny = x.new_empty(size=(10 ** 6, 10 ** 6))", 2,
     "`Tensor.new_empty(...)` would have 1000000000000"),
    ("x = torch.ones(2)\nr = [[0.0] * 100000] * 100000\ny = x.new_tensor(r)", 3,
     "`Tensor.new_tensor(...)` would have 10000000000"),
    # its sizes, then its strides (the strides were read as sizes: not counted at all)
    ("x = torch.empty_strided((10 ** 6, 10 ** 6), (10 ** 6, 1))", 1,
     "`torch.empty_strided(...)` would have 1000000000000"),
    ("x = nn.Linear(10 ** 5, 10 ** 5)", 1, "`torch.nn.Linear(...)` would have 10000000000"),
    ("r = [[0.0] * 100000] * 100000\nx = torch.tensor(r)", 2,
     "`torch.tensor(...)` would have 10000000000"),
    ("x = torch.tensor(range(10 ** 100))", 1, "`torch.tensor(...)` would have 1" + "0" * 100),
    ("a = torch.rand(100000, 1)\nb = torch.rand(1, 100000)\nc = a + b", 3,
     "`+` on tensors of shapes [100000, 1], [1, 100000] would have 10000000000"),
    ("a = torch.rand(100000, 1)\nb = torch.rand(1, 100000)\nc = torch.mul(a, b)", 3,
     "the call on tensors of shapes [100000, 1], [1, 100000] would have 10000000000"),
    ("a = torch.rand(5000, 2)\nb = torch.rand(2, 5000)\nc = torch.mm(a, b)", 3,
     "the call on tensors of shapes [5000, 2], [2, 5000] would have 25000000 elements"),
])
def test_a_statement_beyond_a_language_limit_is_an_error_naming_its_line(
        program: str, line: int, says: str) -> None:
    result = run_case(program)
    assert result.verdict == ERROR
    assert result.reason.startswith(f"the case exceeds a limit at {where(line)} `"), result.reason
    assert says in result.reason, result.reason


def test_limits_are_outcomes_that_generated_programs_run_past() -> None:
    trace = run_program(TORCH, parse('s = "a" * 10 ** 10\nx = 2 ** 3'),
                        continue_on_error=True)
    assert [s.outcome.status for s in trace.steps] == [LIMIT, "ok"]


def test_a_limit_inside_raises_is_not_taken_for_the_expected_error() -> None:
    result = run_case('with raises("backward_twice"):\n    s = "a" * 10 ** 10')
    assert result.verdict == ERROR
    assert where(2) in result.reason


# ---- whole-run limits -------------------------------------------------------------------------
def test_nested_loops_stop_at_the_statement_limit() -> None:
    loops = "".join(f"{'    ' * d}for i{d} in range(64):\n" for d in range(5))
    result = run_case("x = 0\n" + loops + "    " * 5 + "x = x + 1")
    assert result.verdict == ERROR
    assert result.reason == (
        f"stopped at {where(7)} `x = x + 1` on torch: the run executed more than "
        f"{limits.MAX_STATEMENTS} statements (loops multiply: count the iterations)")


COUNTED = """\
class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 2
        return y
    @staticmethod
    def backward(ctx, g):
        return g * 2
a = torch.rand(2, requires_grad=True)
a.register_hook(lambda g: g)
b = Twice.apply(a)
b.sum().backward()
c = 1
d = 2"""


@pytest.mark.parametrize(("limit", "line"), [(11, None), (10, 14), (9, 13), (8, 10), (7, 8),
                                             (5, 5), (4, 4), (3, 11)])
def test_statements_in_function_bodies_and_hooks_count(
        monkeypatch: pytest.MonkeyPatch, limit: int, line: int | None) -> None:
    # executed in order: lines 1, 9, 10, 11 (forward: 4, 5), 12 (backward: 8; the hook: 10),
    # 13, 14: eleven
    monkeypatch.setattr(limits, "MAX_STATEMENTS", limit)
    for engine in (TORCH, REFERENCE):
        result = run_case(COUNTED, engine)
        if line is None:
            assert result.verdict == PASS, result.reason
        else:
            assert result.verdict == ERROR
            assert result.reason.startswith(f"stopped at {where(line)} "), result.reason
            assert result.reason.endswith(f"more than {limit} statements (loops multiply: "
                                          "count the iterations)")


def test_a_long_chain_of_names_stops_at_the_trace_budget() -> None:
    # Every statement adds a name and every step observes every name: memory grows with the
    # square of the length. 16k statements; the budget ends it long before.
    program = "x0 = 0\n" + "".join(f"x{i} = x{i - 1} + 1\n" for i in range(1, 16_000))
    result = run_case(program)
    assert result.verdict == ERROR
    assert "exceeds its memory budget of 256 MB of snapshots" in result.reason
    assert result.reason.startswith(f"stopped at {PATH}:"), result.reason


def test_a_large_tensor_in_a_loop_is_summarised_not_copied() -> None:
    n = 4 * limits.SUMMARY_THRESHOLD
    program = f"x = torch.rand({n})\nfor i in range(64):\n    y = x * 2\nz = y.sum()"
    result = run_case(program)
    assert result.verdict == PASS, result.reason
    assert result.engine_trace is not None
    last = result.engine_trace.steps[-1].names
    y = last["y"]
    assert isinstance(y, TensorSnapshot) and isinstance(y.values, TensorSummary)
    assert y.values.elements == n and 0 <= y.values.min <= y.values.max <= 2
    z = last["z"]
    assert isinstance(z, TensorSnapshot) and isinstance(z.values, np.ndarray)
    assert y.values.sum == pytest.approx(float(z.values), rel=1e-5)


def test_an_expanded_view_is_observed_without_materialising_it() -> None:
    program = "x = torch.rand(1, 1)\ny = x.expand(100000, 100000)\nz = y * 2"
    result = run_case(program)
    assert result.verdict == ERROR
    assert result.reason.startswith(f"the case exceeds a limit at {where(3)} `z = y * 2`")
    for trace in (result.torch_trace,):
        assert trace is not None
        y = trace.steps[1].names["y"]
        assert isinstance(y, TensorSnapshot) and isinstance(y.values, TensorSummary)
        x = trace.steps[1].names["x"]
        assert isinstance(x, TensorSnapshot) and isinstance(x.values, np.ndarray)
        assert y.values.elements == 10**10
        assert y.values.sum == pytest.approx(float(x.values.item()) * 10**10, rel=1e-6)
    assert run_case("x = torch.rand(1, 1)\ny = x.expand(100000, 100000)").verdict == PASS


def test_summaries_of_an_expansion_and_of_its_copy_agree() -> None:
    import torch

    base = torch.tensor([[-0.0], [1.5], [float("nan")], [float("inf")]])
    view = base.expand(4, 3 * limits.SUMMARY_THRESHOLD)
    s_view = tensor_summary(TORCH, view)
    s_copy = tensor_summary(TORCH, view.contiguous())
    assert s_view.checksum != s_copy.checksum  # distinct data differs in layout
    assert {k: v for k, v in vars(s_view).items() if k != "checksum"} == pytest.approx(
        {k: v for k, v in vars(s_copy).items() if k != "checksum"}, nan_ok=True)
    assert (s_view.nan, s_view.posinf, s_view.neg_zeros) == (3 * limits.SUMMARY_THRESHOLD,) * 3
    assert summaries_differ(s_view, s_copy, "torch.float32") is None


def test_a_wrong_value_in_a_summarised_tensor_is_a_divergence() -> None:
    from conformance.run.runner import DIVERGES, describe_failure

    wrong_exp = load_engine("tests.conformance.engine_wrong_exp")
    result = run_case(f"x = torch.rand({2 * limits.SUMMARY_THRESHOLD})\ny = torch.exp(x)",
                      wrong_exp)
    assert result.verdict == DIVERGES
    assert result.divergence is not None and result.divergence.field == "y.values"
    text = describe_failure(result)
    assert f"at {where(2)} `y = torch.exp(x)`" in text
    assert f"torch has summary of {2 * limits.SUMMARY_THRESHOLD} elements: sum=" in text


def test_summaries_are_compared_within_the_dtype_tolerance() -> None:
    import torch

    x = torch.linspace(-1, 1, 2 * limits.SUMMARY_THRESHOLD)
    same = tensor_summary(TORCH, x)
    assert summaries_differ(same, tensor_summary(TORCH, x.clone()), "float32") is None
    nudged = tensor_summary(TORCH, x * (1 + 1e-7))
    assert nudged.checksum != same.checksum
    assert summaries_differ(same, nudged, "float32") is None
    assert summaries_differ(same, tensor_summary(TORCH, x * 1.01), "float32") == "values"
    shifted = x.clone()
    shifted[7] = 5.0
    assert summaries_differ(same, tensor_summary(TORCH, shifted), "float32") == "values"
    zeros = torch.zeros(2 * limits.SUMMARY_THRESHOLD)
    assert summaries_differ(tensor_summary(TORCH, zeros), tensor_summary(TORCH, -zeros),
                            "float32") == "signed_zero"
    with_nan = x.clone()
    with_nan[0] = float("nan")
    assert summaries_differ(same, tensor_summary(TORCH, with_nan), "float32") == "values"


# ---- the other commands meet the same limits --------------------------------------------------
NESTED = "x = 0\n" + "".join(f"{'    ' * d}for i{d} in range(64):\n" for d in range(3)) + \
    "    " * 3 + "x = x + 1"


def item_of(program: str) -> Item:
    text = HEADER + "".join(f"  {line}\n" for line in program.splitlines())
    return Item(load_case(PATH, text), "cpu", "float32")


def test_explain_and_record_report_a_stopped_run() -> None:
    from conformance.report.explain import explain
    from conformance.report.recording import item_record

    text, result = explain(item_of(NESTED), REFERENCE)
    assert result.verdict == ERROR
    assert text.endswith(f"error: stopped at {where(5)} `x = x + 1` on torch: the run "
                         f"executed more than {limits.MAX_STATEMENTS} statements (loops "
                         "multiply: count the iterations)")
    record = item_record(item_of(NESTED), TORCH)
    assert record["status"] == "error"
    assert record["reason"].startswith(f"stopped at {where(5)}: the run executed more than")


def test_a_summary_survives_a_recording_round_trip() -> None:
    from conformance.report.trace_codec import snapshot_from_json, snapshot_to_json

    trace = run_program(TORCH, parse(f"x = torch.rand({2 * limits.SUMMARY_THRESHOLD})\n"
                                     "x[0] = float('nan')"))
    snap = trace.steps[-1].names["x"]
    assert isinstance(snap, TensorSnapshot) and isinstance(snap.values, TensorSummary)
    assert snap.values.nan == 1
    back = snapshot_from_json(snapshot_to_json(snap))
    assert isinstance(back, TensorSnapshot) and isinstance(back.values, TensorSummary)
    assert vars(back.values) == pytest.approx(vars(snap.values), nan_ok=True)
    assert back.values.checksum == snap.values.checksum


def test_a_generated_program_runs_with_the_collector_paused_and_imports_frozen() -> None:
    # what conformance.gen.program_check.check runs a program in: the collector is off inside and
    # back on after, and what was alive before the first program is frozen (long-lived)
    import gc

    from conformance.gen.program_check import cyclic_gc_paused

    assert gc.isenabled()
    with cyclic_gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    assert gc.get_freeze_count() > 10_000
