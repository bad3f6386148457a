"""The `autograd-conformance` commands new, explain, record and diff, called in-process."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conformance.case import paths
from conformance.case.language import parse, to_source
from conformance.case.loader import load_case
from conformance.cli import main
from conformance.gen.strategies import sample_programs
from conformance.report import recording, trace_codec
from conformance.run.compare import compare
from conformance.run.engine import load_engine
from conformance.run.interpreter import run_program

ROOT = Path(__file__).resolve().parents[1]
LEAF = "cases/leaf/leaf_rules.yaml"  # no errors; values, grads
EXP = "cases/ops/exp_saves_result.yaml"  # an expected error (message text); uses exp
WARNS = "cases/grad_accumulation/nonleaf_grad_access_warns.yaml"  # a warning
WRONG_EXP = "tests.conformance.engine_wrong_exp"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding copies of a few cases, so item ids are relative."""
    for rel in (LEAF, EXP, WARNS):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))


# ---- new ---------------------------------------------------------------------------------
def test_new_from_template_passes_check_and_is_never_overwritten(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cases" / "family" / "new_case.yaml"
    assert main(["new", str(path)]) == 0
    text = path.read_text()
    for key in ("description:", "features:", "source:", "dtypes:", "program: |"):
        assert key in text
    assert main(["check", str(path)]) == 0
    assert "1 of 1 case files are valid" in capsys.readouterr().out
    path.write_text(text + "# edited\n")
    assert main(["new", str(path)]) == 1
    assert "refusing to overwrite" in capsys.readouterr().err
    assert path.read_text() == text + "# edited\n"


def test_new_from_stdin_keeps_the_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    stdin(monkeypatch, "    x = torch.tensor([1.0, -2.0], requires_grad=True)\n"
                       "    y = x.abs().sum()\n    y.backward()\n")
    path = tmp_path / "abs.yaml"
    assert main(["new", "--from-stdin", "--features", "ops,signed_zero",
                 "--description", "abs: the grad is the sign", str(path)]) == 0
    case = load_case(path)
    assert case.features == ("ops", "signed_zero")
    assert case.description == "abs: the grad is the sign"
    assert case.source_text.splitlines()[1] == "y = x.abs().sum()"
    assert "torch" not in capsys.readouterr().err  # torch ran it without failing
    assert main(["check", str(path)]) == 0


def test_new_from_stdin_notes_the_statement_torch_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    stdin(monkeypatch, "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                       "b = (a * a).sum()\nb.backward()\nb.backward()\nc = a + 1\n")
    path = tmp_path / "twice.yaml"
    assert main(["new", "--from-stdin", str(path)]) == 0
    err = capsys.readouterr().err
    assert "`b.backward()`" in err and "backward_twice" in err
    line = int(err.split(f"{path}:", 1)[1].split(":", 1)[0])
    lines = path.read_text().splitlines()
    assert lines[line - 1].strip() == "b.backward()"  # the second one, after the note
    assert "# on torch" in lines[line - 2] and 'raises("backward_twice")' in lines[line - 2]
    assert lines[0].startswith(f"# at line {line} `b.backward()`")
    assert main(["check", str(path)]) == 0


def test_new_from_stdin_rejects_what_the_case_language_does_not_have(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    stdin(monkeypatch, "a = torch.ones(2)\nimport os\n")
    path = tmp_path / "bad.yaml"
    assert main(["new", "--from-stdin", str(path)]) == 1
    assert "<stdin>:2:" in capsys.readouterr().err
    assert not path.exists()


# ---- explain -----------------------------------------------------------------------------
def test_explain_shows_each_statement_and_outcome(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", f"{LEAF}::cpu-float32", "--engine", "reference_engine"]) == 0
    out = capsys.readouterr().out
    assert "line 5: w = torch.tensor([[3.0, 1.0]], requires_grad=True)" in out
    assert "line 11: loss.backward()" in out
    assert "outcome: ok (both)" in out
    assert "w: Tensor[1, 2] float32 cpu, leaf requires_grad" in out
    assert "no divergence" in out


def test_explain_names_the_divergent_field(project: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", f"{EXP}::cpu-float64", "--engine", WRONG_EXP]) == 1
    out = capsys.readouterr().out
    assert "!![1] line 7: y = torch.exp(x)" in out
    assert "! y: differs" in out and "y.values" in out
    assert "saved_tensor_modified" in out  # the expected error's outcome, on both sides
    tail = out.split("first divergence at step [1]:", 1)[1]
    assert "field `y.values`" in tail and f"rerun: pytest {EXP}::cpu-float64" in tail


def test_explain_rejects_unknown_items(project: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", f"{LEAF}::cpu-float16"]) == 2
    assert "its items: cpu-float32" in capsys.readouterr().err
    assert main(["explain", "cases/none.yaml"]) == 2


def test_explain_finds_the_librarys_ids_from_any_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # no cases here: the id names a case of the clone
    assert main(["explain", f"{EXP}::cpu-float64", "--engine", WRONG_EXP]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{EXP}::cpu-float64: torch ")  # the id a run gives the item
    rerun = paths.rerun_path(ROOT / EXP, tmp_path)
    assert f"rerun: pytest {rerun}::cpu-float64 --engine {WRONG_EXP}" in out
    assert main(["explain", "cases/ops/no_such_case.yaml"]) == 2
    assert f"looked for {tmp_path}/cases/ops/no_such_case.yaml, {ROOT}/cases/ops/" in \
        capsys.readouterr().err


# ---- record and diff ---------------------------------------------------------------------
def test_a_stored_trace_reads_back_to_the_same_trace() -> None:
    torch = load_engine("torch")
    program = parse("a = torch.tensor([0.0, -0.0, 1.0], requires_grad=True)\n"
                    "b = a / a\nc = torch.log(a)\nn = 2.5\nd = b.sum()\n")
    trace = run_program(torch, program)
    case = load_case("x.yaml", "description: x\nfeatures: [ops]\nprogram: |\n"
                     "  a = torch.tensor([0.0])\n")
    stored = json.loads(json.dumps(trace_codec.trace_to_json(trace, case), allow_nan=False))
    back = trace_codec.trace_from_json(stored)
    assert compare(trace, back, "float32").divergence is None
    c = back.steps[2].names["c"]
    assert np.isneginf(c.values[:2]).all() and np.signbit(back.steps[0].names["a"].values[1])
    # the comparator still sees a change through the round trip
    stored["steps"][1]["names"]["b"]["values"][2] = 1.5
    assert compare(trace, trace_codec.trace_from_json(stored), "float32").divergence is not None


def test_complex_values_read_back_part_by_part() -> None:
    """A complex tensor and a complex number survive the round trip, infinite and NaN parts
    included (an infinite imaginary part must not make the real part NaN)."""
    torch = load_engine("torch")
    program = parse("a = torch.tensor([complex(1, float('inf')), 2j], dtype=torch.complex64)"
                    "\nz = a.sum().item()\n".replace("complex(1, float('inf'))", "1e39j + 1"))
    trace = run_program(torch, program)
    case = load_case("x.yaml", "description: x\nfeatures: [ops]\nprogram: |\n"
                     "  a = torch.tensor([0.0])\n")
    stored = json.loads(json.dumps(trace_codec.trace_to_json(trace, case), allow_nan=False))
    back = trace_codec.trace_from_json(stored)
    assert compare(trace, back, "float32").divergence is None
    a = back.steps[0].names["a"].values
    assert a.dtype == np.complex64 and a[0].real == 1 and np.isposinf(a[0].imag)
    z = back.steps[1].names["z"]
    assert z.kind == "complex" and z.value.real == 1 and np.isposinf(z.value.imag)


def _record(tmp: Path, name: str, engine: str = "torch") -> Path:
    out = tmp / name
    assert main(["record", "cases", "--out", str(out), "--engine", engine,
                 "--progress-every", "2"]) == 0
    return out


def test_record_and_diff(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _record(project, "old.json")
    err = capsys.readouterr().err
    assert "record: 2/5 items" in err and "record: 5/5 items" in err  # progress lines
    data = recording.load(old)
    assert data["header"]["engine"] == "torch"
    assert {"torch_version", "python_version", "numpy_version", "date",
            "git_revision"} <= set(data["header"])
    assert sorted(data["items"]) == sorted(
        [f"{EXP}::cpu-{t}" for t in ("float32", "float64")]
        + [f"{LEAF}::cpu-float32", f"{WARNS}::cpu-float32", f"{WARNS}::cpu-float64"])
    step = data["items"][f"{LEAF}::cpu-float32"]["trace"]["steps"][0]
    assert step["statement"] == "w = torch.tensor([[3.0, 1.0]], requires_grad=True)"
    assert step["names"]["w"]["values"] == [[3.0, 1.0]]

    # without case paths: ./cases, as `run` takes it
    assert main(["record", "--out", str(project / "default.json"), "--quiet"]) == 0
    assert recording.load(project / "default.json")["items"].keys() == data["items"].keys()

    # identical recordings: exit 0
    again = _record(project, "again.json.gz")
    capsys.readouterr()
    assert main(["diff", str(old), str(again)]) == 0
    assert "no drift: 5 items" in capsys.readouterr().out

    # another engine: the changed values, per statement
    wrong = _record(project, "wrong.json", WRONG_EXP)
    capsys.readouterr()
    assert main(["diff", str(old), str(wrong)]) == 1
    out = capsys.readouterr().out
    assert f"{EXP}::cpu-float32" in out
    assert "line 7 `y = torch.exp(x)`: [values] `y.values`" in out


def test_record_generated_programs_the_same_each_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """--generated N: the derandomized programs, by id, as the suite runs them (on past a
    failing statement); two recordings diff as identical."""
    monkeypatch.chdir(tmp_path)  # no ./cases: only the programs are recorded
    first, again = tmp_path / "first.json", tmp_path / "again.json"
    for out in (first, again):
        assert main(["record", "--generated", "12", "--out", str(out), "--quiet"]) == 0
    data = recording.load(first)
    assert list(data["items"]) == sorted(f"generated/{k}::cpu-float32" for k in range(12))
    programs = sample_programs(12)
    for k, program in enumerate(programs):
        record = data["items"][f"generated/{k}::cpu-float32"]
        source = to_source(program)
        # the suite's own run of the program (generated.check's torch side)
        trace = run_program(load_engine("torch"), parse(source), continue_on_error=True)
        assert [s["statement"] for s in record["trace"]["steps"]] == \
            [source.splitlines()[s.line - 1].strip() for s in trace.steps]
    # some program runs on past a failing statement, as generated programs do
    assert any(s["outcome"]["status"] != "ok" and i < len(r["trace"]["steps"]) - 1
               for r in data["items"].values()
               for i, s in enumerate(r["trace"]["steps"]))
    capsys.readouterr()
    assert main(["diff", str(first), str(again)]) == 0
    assert "no drift: 12 items" in capsys.readouterr().out
    assert main(["record", "--generated", "-1", "--out", str(first)]) == 2


def test_diff_of_an_edited_recording_reports_each_change(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _record(project, "old.json")
    data = recording.load(old)
    exp = data["items"][f"{EXP}::cpu-float32"]["trace"]["steps"]
    failing = next(s for s in exp if s["outcome"]["status"] == "error")
    failing["outcome"]["text"] = "one of the variables was modified in place (reworded)"
    leaf = data["items"][f"{LEAF}::cpu-float32"]["trace"]["steps"]
    leaf[-1]["names"]["w"]["grad"]["values"][0][0] += 0.5  # a grad, at the last step
    warns = data["items"][f"{WARNS}::cpu-float32"]["trace"]["steps"]
    warned = next(s for s in warns if s.get("warnings"))
    warned["warnings"][0][2] = "reworded warning"
    del data["items"][f"{WARNS}::cpu-float64"]
    new = project / "edited.json"
    recording.dump(data, new)

    md, js = project / "drift.md", project / "drift.json"
    capsys.readouterr()
    assert main(["diff", str(old), str(new), "--markdown", str(md), "--json", str(js)]) == 1
    out = capsys.readouterr().out
    assert "[message] `outcome.text`" in out and "(reworded)" in out
    assert "[message] `warnings.text`" in out
    assert "[grad] `w.grad.values`" in out
    assert f"only in old: {WARNS}::cpu-float64" in out
    report = json.loads(js.read_text())
    assert not report["identical"]
    assert report["only_in_old"] == [f"{WARNS}::cpu-float64"]
    assert report["changes_by_category"] == {"grad": 1, "message": 2}
    changes = {c["field"]: c for i in report["items"] for c in i["changes"]}
    assert changes["outcome.text"]["message"] is True
    assert changes["outcome.text"]["new"].endswith("(reworded)")
    assert changes["w.grad.values"]["statement"] == "assert c.grad_fn is not None"
    text = md.read_text()
    assert text.startswith("# Autograd drift")
    assert f"## `{EXP}::cpu-float32`" in text and "`w.grad.values`" in text


def test_the_diff_command_exits_1_on_drift_and_its_help_says_so(project: Path) -> None:
    # the installed command's exit status, not only main's return value: CI scripts test it
    old = _record(project, "old.json")
    data = recording.load(old)
    leaf = data["items"][f"{LEAF}::cpu-float32"]["trace"]["steps"]
    leaf[-1]["names"]["w"]["grad"]["values"][0][0] += 0.5
    new = project / "drifted.json"
    recording.dump(data, new)
    command = str(Path(sys.executable).parent / "autograd-conformance")

    def diff(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([command, "diff", *args], capture_output=True, text=True,
                              check=False)

    same = diff(str(old), str(old))
    assert same.returncode == 0 and "no drift" in same.stdout
    drifted = diff(str(old), str(new))
    assert drifted.returncode == 1 and "[grad] `w.grad.values`" in drifted.stdout
    helped = " ".join(diff("--help").stdout.split())
    assert "Exit status: 0 when they do not differ (no drift), 1 when they do" in helped


def test_diff_rejects_what_is_not_a_recording(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    assert main(["diff", str(bad), str(bad)]) == 2
    assert "not an autograd-conformance recording" in capsys.readouterr().err
