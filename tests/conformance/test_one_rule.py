"""One rule for what is compared: `compare`, `explain` and `diff` (through recordings) all
decide by `compare.step_diffs`, so none shows a difference the comparator ignores, and a
stored trace reads back field for field."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conformance.case.language import parse
from conformance.case.loader import Case, load_case
from conformance.report import drift, recording, trace_codec
from conformance.report.explain import render_steps
from conformance.run.compare import compare, step_diffs
from conformance.run.engine import load_engine
from conformance.run.interpreter import run_program
from conformance.run.trace import Step, TensorSnapshot, Trace, WarningRecord
from tests.conformance import wrong_engines as wrong

ROOT = Path(__file__).resolve().parents[2]
TORCH = load_engine("torch")

# `g` is a gradient bound to a name and `gg` a result of autograd.grad: engine-made tensors,
# whose `_version` and `_is_view()` the comparator leaves out.
SOURCE = """\
x = torch.tensor([0.5, -0.0, 2.0], requires_grad=True)
y = (x * x).sum()
y.backward(create_graph=True)
g = x.grad
gg, = torch.autograd.grad(g.sum(), x)
z = x.detach() * 3
"""


def _case(source: str = SOURCE) -> Case:
    body = "".join(f"  {line}\n" for line in source.splitlines())
    return load_case("rule.yaml", f"description: x\nfeatures: [ops]\nprogram: |\n{body}")


def _torch_trace(source: str = SOURCE) -> Trace:
    return run_program(TORCH, parse(source))


def _set(snapshot: TensorSnapshot, **fields: Any) -> None:
    for name, value in fields.items():
        object.__setattr__(snapshot, name, value)


def _engine_made(trace: Trace) -> tuple[int, TensorSnapshot]:
    for i, step in enumerate(trace.steps):
        snap = step.names.get("gg")
        if isinstance(snap, TensorSnapshot):
            assert snap.engine_made  # observe marks it; the tests below rely on that
            return i, snap
    raise AssertionError("no step binds gg")


def _ignored_differences(trace: Trace) -> Trace:
    """A copy that differs from `trace` only where the comparator does not look: an
    engine-made tensor's `_version` and `_is_view()`, and a warning torch gives once per
    process, from an engine without warn-always."""
    other = copy.deepcopy(trace)
    other.warn_always = False
    i, gg = _engine_made(other)
    _set(gg, version=7, is_view=not gg.is_view)
    g = other.steps[i].names["g"]
    assert isinstance(g, TensorSnapshot) and g.engine_made
    _set(g, version=9)
    other.steps[2].warnings.append(WarningRecord(
        "create_graph_reference_cycle", "UserWarning", "Using backward() with create_graph=True "
        "will create a reference cycle"))
    return other


def _marked(lines: list[str]) -> list[str]:
    return [line for line in lines if line.lstrip().startswith(("!", "~"))]


# ---- compare and explain -----------------------------------------------------------------
def test_explain_marks_nothing_the_comparator_ignores() -> None:
    trace = _torch_trace()
    other = _ignored_differences(trace)
    assert compare(trace, other, "float32") == compare(trace, trace, "float32")
    for e, a in zip(trace.steps, other.steps, strict=True):
        assert list(step_diffs(e, a, "float32", every=True, once=False)) == []
    lines = render_steps(_case(), "float32", trace.steps, other.steps, once=False)
    assert _marked(lines) == []
    text = "\n".join(lines)
    assert "(not compared: torch gives these warnings once per process" in text
    # under warn-always on both sides the warning is compared like any other
    other.warn_always = True
    d = compare(trace, other, "float32").divergence
    assert d is not None and (d.step, d.field) == (2, "warnings")
    assert _marked(render_steps(_case(), "float32", trace.steps, other.steps))


def test_explain_marks_a_compared_field_of_the_same_tensor() -> None:
    trace = _torch_trace()
    other = copy.deepcopy(trace)
    i, gg = _engine_made(other)
    _set(gg, version=7, values=gg.values + 1)
    d = compare(trace, other, "float32").divergence
    assert d is not None and (d.step, d.field) == (i, "gg.values")
    lines = render_steps(_case(), "float32", trace.steps, other.steps)
    assert any(line.startswith(f"!![{i}]") for line in lines)
    shown = "\n".join(lines)
    assert "! gg: differs" in shown and "gg.values" in shown
    assert "gg.version" not in shown  # still ignored, even beside a real difference


@pytest.mark.parametrize("engine", [wrong.WRONG_EXP, wrong.DETACHED_EXP, wrong.WRONG_MEAN,
                                    wrong.RAISING_EXP, wrong.VERSION_EXP, wrong.WARNING_EXP])
def test_every_difference_extends_the_comparators_first(engine: Any) -> None:
    source = ("a = torch.tensor([1.0, 2.0], requires_grad=True)\nc = a * 3\n"
              "b = torch.exp(a)\nloss = torch.mean(b)\nloss.backward()\n")
    expected, actual = _torch_trace(source), run_program(engine, parse(source))
    lines = render_steps(_case(source), "float32", expected.steps, actual.steps)
    heads = [line for line in lines if line[2:3] == "["]
    assert len(heads) == max(len(expected.steps), len(actual.steps))
    # a step that ran on one engine only is marked (the comparator: `steps` differ)
    assert all(h.startswith("!!") for h in heads[min(len(expected.steps),
                                                      len(actual.steps)):])
    for e, a, head in zip(expected.steps, actual.steps, heads, strict=False):
        first, every = list(step_diffs(e, a, "float32")), list(step_diffs(e, a, "float32",
                                                                          every=True))
        assert [f for f, *_ in first] == [f for f, *_ in every if f in {g for g, *_ in first}]
        assert bool(first) == bool(every)
        # explain marks exactly the steps the comparator finds a difference in
        assert head.startswith(("!!", "~ ")) == bool(every)
    assert compare(expected, actual, "float32").divergence is not None


def test_explain_on_the_reference_engine_shows_no_ignored_version() -> None:
    # issue 9: the reference engine's second-order grad had another _version than torch's,
    # explain showed it and then said "no divergence"
    from conformance.report.explain import explain, find_item

    item = find_item(f"{ROOT}/cases/higher_order/abs_grad_graph.yaml::cpu-float32")
    text, _ = explain(item, load_engine("reference_engine"))
    assert "gg.version" not in text and ": differs" not in text
    assert "no divergence" in text


# ---- recordings --------------------------------------------------------------------------
def _same(a: Any, b: Any, where: str = "trace") -> None:
    """Structural equality, field by field (arrays: dtype, shape, values with NaN where
    NaN is, and the sign of every zero)."""
    assert type(a) is type(b) or (isinstance(a, str) and isinstance(b, str)), where
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, np.ndarray):
        assert (a.dtype, a.shape) == (b.dtype, b.shape), where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), where
        if a.dtype.kind == "f":
            assert np.array_equal(np.signbit(a[a == 0]), np.signbit(b[b == 0])), where
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), where
    else:
        assert a == b, where


def _round_trip(trace: Trace, case: Case) -> Trace:
    stored = json.loads(json.dumps(trace_codec.trace_to_json(trace, case), allow_nan=False))
    return trace_codec.trace_from_json(stored)


def test_a_stored_trace_reads_back_field_for_field() -> None:
    source = SOURCE + ("e = torch.zeros(0, 3)\nn = torch.log(torch.tensor([0.0, -1.0]))\n"
                       "k = torch.tensor([1, 2])\nf = float('nan')\ns = [x, 2.5, None]\n"
                       "h = x.register_hook(lambda t: t * 2)\nw = (x * 2).sum()\n"
                       "w.backward()\n")
    trace = _torch_trace(source)
    back = _round_trip(trace, _case(source))
    _same(trace, back)
    assert back.steps[-1].events  # the hook's call is among what was stored
    last = back.steps[-1].names
    assert last["e"].shape == (0, 3) and last["e"].values.shape == (0, 3)  # type: ignore
    assert last["gg"].engine_made and last["g"].engine_made  # type: ignore[union-attr]


@pytest.mark.parametrize("family", ["hooks", "higher_order", "custom_function",
                                    "views_inplace", "signed_zero", "autograd_grad"])
def test_recorded_cases_read_back_field_for_field(family: str) -> None:
    files = sorted((ROOT / "cases" / family).glob("*.yaml"))
    assert files
    for f in files:
        case = load_case(f)
        for dtype in case.dtypes:
            trace = run_program(TORCH, case.program, seed=case.seed, dtype=dtype)
            _same(trace, _round_trip(trace, case), f"{f.name}[{dtype}]")


def _recording(project: Path, name: str, engine: str = "torch") -> dict[str, Any]:
    rec = recording.record([project / "cases"], engine)
    path = project / name
    recording.dump(rec, path)
    return recording.load(path)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "grads.yaml").write_text(
        "description: engine-made tensors bound to names\nfeatures: [higher_order]\n"
        "program: |\n" + "".join(f"  {line}\n" for line in SOURCE.splitlines()))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _steps(rec: dict[str, Any]) -> list[dict[str, Any]]:
    (item,) = rec["items"].values()
    steps: list[dict[str, Any]] = item["trace"]["steps"]
    return steps


def test_diff_ignores_the_version_of_engine_made_tensors(project: Path) -> None:
    old = _recording(project, "old.json")
    new = copy.deepcopy(old)
    stored = [s["names"]["gg"] for s in _steps(new) if "gg" in s["names"]]
    assert stored and all(s["engine_made"] for s in stored)
    for s in stored:
        s["version"] += 6
        s["is_view"] = not s["is_view"]
    assert drift.diff(old, new).identical
    # a tensor the program made is compared on its version
    for s in _steps(new):
        if "z" in s["names"]:
            s["names"]["z"]["version"] += 1
    changes = [c for i in drift.diff(old, new).items for c in i.changes]
    assert {(c.category, c.field) for c in changes} == {("version", "z.version")}


def test_diff_of_two_engines_counts_no_ignored_version(project: Path) -> None:
    # issue 13: the reference engine's autograd.grad result had another _version than
    # torch's, and diff counted it after a save and reload
    torch_rec = _recording(project, "torch.json")
    ref_rec = _recording(project, "ref.json", "reference_engine")
    d = drift.diff(torch_rec, ref_rec)
    assert d.compared == 1 and d.identical, drift.summary(d, "torch", "reference_engine")


def test_a_recording_of_the_old_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"format": recording.FORMAT, "schema_version": 1,
                                "header": {}, "items": {}}))
    with pytest.raises(recording.RecordingError, match="record it again"):
        recording.load(path)


def test_a_malformed_snapshot_is_named() -> None:
    with pytest.raises(recording.RecordingError, match="lacks `dtype`"):
        trace_codec.snapshot_from_json({"t": "tensor", "type": "Tensor", "shape": [1]})
    with pytest.raises(recording.RecordingError, match="unknown type"):
        trace_codec.snapshot_from_json({"t": "matrix"})


def test_step_fields_all_have_a_codec() -> None:
    assert {f.name for f in dataclasses.fields(Step)} == set(trace_codec._STEP_CODECS)


def test_diff_names_the_item_whose_stored_trace_is_malformed(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    rec = _recording(project, "old.json")
    path = project / "old.json"
    del _steps(rec)[0]["names"]["x"]["dtype"]
    broken = project / "broken.json"
    recording.dump(rec, broken)
    assert main(["diff", str(path), str(broken)]) == 2
    err = capsys.readouterr().err
    assert "cases/grads.yaml::cpu-float32" in err and "lacks `dtype`" in err


def test_explain_names_the_statement_each_engine_ran() -> None:
    trace = _torch_trace()
    other = copy.deepcopy(trace)
    other.steps[1].line = trace.steps[2].line
    assert [f for f, *_ in step_diffs(trace.steps[1], other.steps[1], "float32",
                                      every=True)] == ["statement"]
    lines = render_steps(_case(), "float32", trace.steps, other.steps)
    at = lines.index(next(line for line in lines if line.startswith("!![1]")))
    line = trace.steps[2].line + _case().line_offset
    assert lines[at + 1] == f"  ! statement: the engine ran line {line}: " \
        "y.backward(create_graph=True)"
    assert lines[at + 2].startswith("  ! outcome")


def test_every_tensor_field_is_compared_by_a_rule() -> None:
    from conformance.run.compare import OWN_RULES, TENSOR_FIELDS

    names = [f.name for f in dataclasses.fields(TensorSnapshot)]
    assert sorted(TENSOR_FIELDS + OWN_RULES) == sorted(names)
    trace = _torch_trace()
    for name in TENSOR_FIELDS:  # each is seen when it alone differs
        other = copy.deepcopy(trace)
        x = other.steps[0].names["x"]
        assert isinstance(x, TensorSnapshot)
        _set(x, **{name: f"changed {getattr(x, name)}"})
        d = compare(trace, other, "float32").divergence
        assert d is not None and d.field == f"x.{name}"


def test_a_drift_of_added_items_alone_says_so_in_one_clause() -> None:
    header = {"engine": "reference_engine", "torch_version": "2.13.0"}
    item = {"trace": {"steps": []}}
    d = drift.diff({"header": header, "items": {"a": item}},
                   {"header": header, "items": {"a": item, "b": item}})
    line = drift.summary(d, "old", "new").splitlines()[2]
    assert line == "0 of 1 items changed; only in new: 1"
