"""The incremental observation (conformance.run.changes) against the reference one.

A step reuses the snapshots of the names its statement cannot have changed; the full
snapshot of every live name after every statement is the reference. Both must give the
same trace, field for field, on generated programs and on every case file, on torch and on
the reference engine (and so the same divergences).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings

from conformance.case import program as ir
from conformance.case.kinds import ONCE_PER_PROCESS
from conformance.case.language import parse
from conformance.case.loader import load_case
from conformance.case.program import Program
from conformance.gen.program_check import number
from conformance.gen.state import GenSettings
from conformance.gen.strategies import programs
from conformance.report.trace_codec import outcome_to_json
from conformance.run import changes, observe
from conformance.run.compare import Divergence, compare
from conformance.run.engine import load_engine
from conformance.run.interpreter import run_program, warm_up
from conformance.run.limits import RunLimit
from conformance.run.runner import items_of
from conformance.run.trace import Snapshot, Trace

ROOT = Path(__file__).resolve().parents[2]
CASE_DIRS = sorted(p.name for p in (ROOT / "cases").iterdir() if p.is_dir())
ENGINES = ("torch", "reference_engine")


def _text(value: Any) -> str:
    """Every field of a snapshot (or a value in one) as text: an array by its dtype, shape
    and bytes (bit for bit), anything else by repr, dataclasses field by field."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            return f"object{value.shape}[{', '.join(_text(v) for v in value.flat)}]"
        return f"{value.dtype.str}{value.shape}:{value.tobytes().hex()}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return f"{type(value).__name__}(" + ", ".join(
            f"{f.name}={_text(getattr(value, f.name))}" for f in dataclasses.fields(value)) + ")"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{', '.join(_text(v) for v in value)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_text(k)}: {_text(v)}" for k, v in value.items()) + "}"
    return repr(value)


def canonical(trace: Trace) -> str:
    """Every field of the trace as text, a line per step (values bit for bit). A snapshot
    object is turned into text once (the incremental trace reuses them from step to step),
    and the lines are encoded by json's C encoder: the earlier text (trace_codec's JSON of
    every snapshot of every step, indented, so by json's Python encoder) was 80 % of this
    file's time (benchmarks/README.md, h35speedA)."""
    texts: dict[int, str] = {}

    def names(named: dict[str, Snapshot]) -> list[Any]:
        out = []
        for n, snapshot in named.items():
            key = id(snapshot)  # the trace keeps every snapshot alive: ids are not reused
            if key not in texts:
                texts[key] = _text(snapshot)
            out.append([n, texts[key]])
        return out

    steps = [json.dumps({"line": s.line, "outcome": outcome_to_json(s.outcome),
                         # a warning torch gives once per process is compared by no one
                         # (compare.py)
                         "warnings": [[w.kind, w.category, w.text] for w in s.warnings
                                      if w.kind not in ONCE_PER_PROCESS],
                         "events": [[e.source, names(e.received), names(e.returned)]
                                    for e in s.events],
                         "names": names(s.names)}, default=repr) for s in trace.steps]
    failure = next((i for i, s in enumerate(trace.steps) if s is trace.failure), None)
    return "\n".join([json.dumps({"engine": trace.engine, "failure": failure,
                                  "state_changes": [repr(c) for c in trace.state_changes],
                                  "missing_api": trace.missing_api}, default=repr), *steps])


def run_both(engine: str, program: Program, **kwargs: Any) -> tuple[Any, Any]:
    """(full, incremental) traces of `program` on `engine`, or the RunLimit's text."""
    out = []
    for full in (True, False):
        try:
            out.append(run_program(load_engine(engine), program, full_snapshots=full,
                                   **kwargs))
        except RunLimit as stopped:
            out.append(f"RunLimit at {stopped.line}: {stopped}")
    return out[0], out[1]


def assert_same(where: str, full: Any, incremental: Any) -> None:
    if isinstance(full, str) or isinstance(incremental, str):
        assert full == incremental, where
        return
    assert canonical(full) == canonical(incremental), \
        f"{where}: the incremental snapshots differ from the full ones"


def divergence(expected: Any, actual: Any, dtype: str) -> Any:
    if isinstance(expected, str) or isinstance(actual, str):
        return None
    result = compare(expected, actual, dtype)
    return comparable(result.divergence), result.message


def comparable(d: Divergence | None) -> Any:
    """A divergence as a value `==` can compare: its values bit for bit. The dataclass's own
    `==` compares the tuples of its fields, and two NumPy arrays there (a grad's values,
    a signed_zero mask) have no truth value: it raised ValueError for two equal
    divergences on an array field."""
    if d is None:
        return None
    return (d.step, d.line, d.field, d.strict, _bits(d.expected), _bits(d.actual))


def _bits(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()
    return repr(value)


def test_divergences_on_an_array_field_compare() -> None:
    def on_values(actual: np.ndarray) -> Divergence:
        return Divergence(11, 12, "x4.grad.signed_zero", np.array([-0.0, 0.0]), actual)
    same, other = on_values(np.array([0.0, 0.0])), on_values(np.array([0.0, 0.0]))
    assert comparable(same) == comparable(other)
    assert comparable(same) != comparable(on_values(np.array([-0.0, 0.0])))
    assert comparable(same) != comparable(on_values(np.array([0.0, 0.0], np.float32)))
    assert comparable(None) is None


@settings(max_examples=120, derandomize=True, database=None, phases=[Phase.generate],
          deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(GenSettings(max_actions=6)))
def test_generated_programs_give_the_same_traces(program: Program) -> None:
    numbered = number(program)
    traces = {e: run_both(e, numbered, continue_on_error=True) for e in ENGINES}
    for e, (full, incremental) in traces.items():
        assert_same(f"{e} on\n{program!r}", full, incremental)
    (tf, ti), (ef, ei) = traces["torch"], traces["reference_engine"]
    assert divergence(tf, ef, "float32") == divergence(ti, ei, "float32")


@pytest.mark.parametrize("directory", CASE_DIRS)
def test_every_case_gives_the_same_traces(directory: str) -> None:
    files = sorted((ROOT / "cases" / directory).rglob("*.yaml"))
    assert files
    for path in files:
        case = load_case(path)
        for item in items_of(case):
            if item.device != "cpu":
                continue
            for engine in ENGINES:
                full, incremental = run_both(engine, case.program, seed=case.seed,
                                             dtype=item.dtype, device=item.device)
                assert_same(f"{engine}: {item.id}", full, incremental)


CHAIN = parse("a = torch.ones(3, requires_grad=True)\nb = a * 2\nc = b + 1\n"
              "v = b[0:2]\nd = c.sum()\n")


@pytest.mark.parametrize("engine", ENGINES)
def test_pure_statements_reuse_the_snapshots_of_other_names(engine: str) -> None:
    # without this, the comparisons above would also pass if nothing were ever reused
    trace = run_program(load_engine(engine), CHAIN)
    first, last = trace.steps[1].names, trace.steps[-1].names
    assert last["a"] is first["a"] and last["b"] is first["b"]
    assert last["c"] is trace.steps[2].names["c"]
    assert last["d"] is not trace.steps[-2].names.get("d")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_wrong_rule_is_caught(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # an in-place op taken for pure: the view `v` and the base `b` keep stale snapshots,
    # which the comparison with the full snapshot must see
    monkeypatch.setattr(changes, "PURE_METHODS", changes.PURE_METHODS | {"mul_"})
    program = parse("a = torch.ones(3)\nb = a * 2\nv = b[0:2]\nw = v.mul_(3)\n")
    full, incremental = run_both(engine, program)
    assert canonical(full) != canonical(incremental)
    monkeypatch.undo()
    full, incremental = run_both(engine, program)
    assert canonical(full) == canonical(incremental)


# a backward is never pure: every name is rechecked (observe.unchanged) after it
BACKWARD = parse("a = torch.ones(3, requires_grad=True)\nb = torch.ones(2)\n"
                 "c = (a * 2).sum()\nv = b[0:1]\nc.backward()\nv.mul_(3)\n")


@pytest.mark.parametrize("engine", ENGINES)
def test_names_an_impure_statement_left_alone_keep_their_snapshots(engine: str) -> None:
    trace = run_program(load_engine(engine), BACKWARD)
    before, after = trace.steps[3].names, trace.steps[4].names
    assert after["b"] is before["b"] and after["v"] is before["v"]  # backward: untouched
    assert after["c"] is before["c"]  # the root: its buffers freed, which no field shows
    assert after["a"] is not before["a"]  # a.grad was written
    last = trace.steps[5].names
    assert last["v"] is not after["v"] and last["b"] is not after["b"]  # written through v
    full, incremental = run_both(engine, BACKWARD)
    assert canonical(full) == canonical(incremental)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_wrong_recheck_is_caught(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # a recheck that overlooks values: `v.mul_(3)` writes b through its view, and b keeps
    # a stale snapshot, which the comparison with the full snapshot must see
    real = observe.unchanged

    def values_unseen(engine_: Any, t: Any, grad: Any, snap: Any, grad_fn: Any) -> bool:
        return real(engine_, t, grad, snap, grad_fn) or (
            t.grad_fn is grad_fn and snap.grad is None and grad is None)

    monkeypatch.setattr(observe, "unchanged", values_unseen)
    full, incremental = run_both(engine, BACKWARD)
    assert canonical(full) != canonical(incremental)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_inplace_flag_given_by_position_takes_a_fresh_snapshot(engine: str) -> None:
    # F.threshold(x, 0.5, 0.0, True) and F.relu(y, True) write into x and y; with no
    # `inplace=` keyword to see, the positional True must still make the step impure
    program = parse("x = torch.tensor([0.25, 1.0, -1.0])\ny = x * 2\n"
                    "t = F.threshold(x, 0.5, 0.0, True)\nr = F.relu(y, True)\n")
    full, incremental = run_both(engine, program)
    assert_same(engine, full, incremental)
    assert incremental.steps[2].names["x"] is not incremental.steps[1].names["x"]


# A dual level in a grad mode (changes.quiet_with): entering and leaving them changes no
# snapshot, so only the in-place step rechecks names (a, b and d: observe.unchanged), not
# the first inner step nor the two steps after the exits (15 rechecks without the rule).
DUAL = parse("a = torch.ones(3, requires_grad=True)\nb = torch.ones(3)\n"
             "with fwAD.dual_level():\n    with torch.no_grad():\n"
             "        d = fwAD.make_dual(b, torch.ones(3))\n        d.mul_(2)\n"
             "        t = fwAD.unpack_dual(d).tangent\n"
             "c = a * 2\n")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_quiet_with_rechecks_no_name_on_entry_or_exit(
        engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    real, rechecked = observe.unchanged, []

    def counted(*args: Any) -> bool:
        rechecked.append(args[1])
        return real(*args)

    # the engine's warm-up programs (once per process, in its first run) run before the
    # count: counted, they made it 5 when this item was the process's first run of torch
    warm_up(load_engine(engine))
    monkeypatch.setattr(observe, "unchanged", counted)
    trace = run_program(load_engine(engine), DUAL)
    assert len(rechecked) == 3, len(rechecked)
    assert [s.line for s in trace.steps] == [1, 2, 5, 6, 7, 4, 3, 8]
    assert trace.steps[6].names["b"] is trace.steps[4].names["b"]  # written through d, kept
    monkeypatch.undo()
    full, incremental = run_both(engine, DUAL)
    assert canonical(full) == canonical(incremental)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_with_whose_arguments_write_is_not_quiet(
        engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the argument writes b in place: taken for quiet, the first inner step would keep b's
    # stale snapshot, which the comparison with the full snapshot must see
    program = parse("b = torch.ones(3)\nwith torch.set_grad_enabled(float(b.mul_(2).sum()) > 0):"
                    "\n    c = b + 1\n")
    full, incremental = run_both(engine, program)
    assert canonical(full) == canonical(incremental)
    monkeypatch.setattr(changes, "quiet_with", lambda stmt: isinstance(stmt, ir.With))
    full, incremental = run_both(engine, program)
    assert canonical(full) != canonical(incremental)
