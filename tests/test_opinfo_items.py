"""OpInfo items in the plugin (conformance/plugin/opinfo_items.py, conformance/opinfo/item.py):
their ids and selection, a wrong gradient failing its item with the sample, step and field,
a part the map leaves out as `known` and a left-out line that agrees as 'passes now', an
entry OpInfo lacks or a line naming a sample it no longer has as an error, OpInfo
unavailable as `skipped` with the install hint, and the report counting them."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

# pytester's in-process runs drop the modules they imported when they end; torch's C
# extension cannot be imported twice in one process, so it is imported here, once, first.
import torch

import reference_engine
from conformance import cli
from conformance.opinfo import database, entry_check, ids, item, opmap
from conformance.run.engine import Engine, load_engine
from conformance.run.verdicts import Verdict

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = Engine("reference_engine", reference_engine)
WRONG_MUL = "tests.conformance.engine_opinfo_wrong_mul"
needs_opinfo = pytest.mark.skipif(
    not __import__("importlib").util.find_spec("expecttest"),
    reason="OpInfo needs the dev extra's expecttest")


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest(*args, "--collect-only", "-q")
    return [line for line in result.outlines if "::" in line]


def test_items_are_one_per_covered_entry_and_dtype(pytester: pytest.Pytester) -> None:
    assert ids.DEVICE == entry_check.DEVICE
    expected = [f"opinfo/{k}::cpu-{d}" for k in item.covered() for d in ("float32", "float64")]
    assert "opinfo/mul::cpu-float64" in expected
    assert collected(pytester, "--opinfo") == expected
    assert collected(pytester) == []  # not asked for
    # -k by entry and dtype, and --devices
    assert collected(pytester, "--opinfo", "-k", "opinfo and exp and float64") == \
        [i for i in expected if "exp" in i.split("::")[0] and i.endswith("float64")]
    assert collected(pytester, "--opinfo", "-k", "not opinfo") == []
    assert collected(pytester, "--opinfo", "--devices", "cuda") == []
    # the ini option: a run naming no paths has them, one naming a path does not
    pytester.makeini("[pytest]\nconformance_opinfo = true\n")
    pytester.makepyfile(test_own="def test_own():\n    pass\n")
    assert len(collected(pytester)) == len(expected) + 1
    assert collected(pytester, "test_own.py") == ["test_own.py::test_own"]
    assert collected(pytester, "--no-opinfo") == ["test_own.py::test_own"]


@needs_opinfo
def test_a_wrong_gradient_fails_its_items_under_xdist_naming_sample_step_and_field(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # the workers are new processes: they import the engine module from the project root
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    result = pytester.runpytest_subprocess(
        "--opinfo", "-k", "opinfo and (mul or unsqueeze) and not (multiple or matmul or addcmul "
        "or cumulative or copy or multi_dot or rmul or multilabel or multi_margin)",
        "--engine", WRONG_MUL, "-n", "2", "--conformance-report", "out")
    result.assert_outcomes(failed=2, passed=2)  # mul fails in both dtypes, unsqueeze passes
    out = result.stdout.str()
    assert re.search(r"opinfo/mul::cpu-float64: tests\.conformance\.engine_opinfo_wrong_mul "
                     r"diverges: sample 0 of \d+ parts \(\d+ failing; grads: grads\[0\]"
                     r"\.values: engine has .*\): at line 2 `grads = torch\.autograd\.grad",
                     out), out
    assert "rerun: python -m conformance.opinfo mul --dtype float64 --engine " in out
    report = json.loads((pytester.path / "out" / "conformance.json").read_text())
    records = {r["id"]: r for r in report["items"]}
    assert set(records) == {"opinfo/mul::cpu-float32", "opinfo/mul::cpu-float64",
                            "opinfo/unsqueeze::cpu-float32", "opinfo/unsqueeze::cpu-float64"}
    mul = records["opinfo/mul::cpu-float64"]
    assert (mul["verdict"], mul["status"], mul["features"], mul["file"]) == \
        ("diverges", "diverges", ["opinfo"], "opinfo/mul")
    assert mul["divergence"]["field"] == "grads[0].values"
    assert mul["divergence"]["statement"].startswith("grads = torch.autograd.grad(")
    assert records["opinfo/unsqueeze::cpu-float32"]["verdict"] == "pass"
    assert report["status"]["line"].startswith("FAIL: 2 diverges, 2 pass of 4 collected")
    summary = (pytester.path / "out" / "summary.md").read_text()
    assert "| opinfo | 1/2 | 1/2 |" in summary


@pytest.fixture(scope="module")
def torch_engine() -> Engine:
    return load_engine("torch")


def _with_left_out(monkeypatch: pytest.MonkeyPatch, key: str, *lines: str) -> None:
    """The map, with `key`'s left-out lines replaced by `lines`."""
    omap = opmap.load_map()
    parts = tuple(opmap._part(key, line) for line in lines)
    entries = tuple(dataclasses.replace(e, left_out=parts) if e.key == key else e
                    for e in omap.entries)
    monkeypatch.setattr(item, "op_map", lambda: dataclasses.replace(omap, entries=entries))


@needs_opinfo
def test_a_part_the_map_leaves_out_is_known(torch_engine, monkeypatch) -> None:
    wrong = load_engine(WRONG_MUL)
    judged = item.judge("mul", "float64", wrong, torch_engine)
    assert judged.verdict == Verdict.DIVERGES.value
    samples = len(judged.result.plan.samples)
    _with_left_out(monkeypatch, "mul", f"sample 0-{samples - 1}: the sign is wrong")
    judged = item.judge("mul", "float64", wrong, torch_engine)
    assert (judged.verdict, judged.passes_now) == (Verdict.KNOWN.value, "")
    assert judged.reason.startswith(f"known divergence (conformance/opinfo/opinfo.yaml:0): "
                                    f"sample 0-{samples - 1}: the sign is wrong")
    # an engine's expectations entry for the item decides as for a case item
    from conformance.run.expectations import loads
    known = loads('known:\n  - items: "opinfo/mul::*"\n    reason: sign\n', "x.yaml")
    _with_left_out(monkeypatch, "mul")
    judged = item.judge("mul", "float64", wrong, torch_engine, known.known, "x.yaml")
    assert judged.verdict == Verdict.KNOWN.value and "(x.yaml:2): sign" in judged.reason
    judged = item.judge("mul", "float64", REFERENCE, torch_engine, known.known, "x.yaml")
    assert "listed at x.yaml:2 as diverges, but it passes now" in judged.passes_now


@needs_opinfo
def test_a_left_out_line_that_agrees_passes_now(torch_engine, monkeypatch) -> None:
    _with_left_out(monkeypatch, "mul", "sample 0: why")
    judged = item.judge("mul", "float32", REFERENCE, torch_engine)
    assert judged.passes_now == ("the map's line `sample 0: why` at conformance/opinfo/"
                                 "opinfo.yaml:0 leaves out parts that agree with torch in "
                                 "every dtype now: delete it (or narrow it)")
    # another engine than the map's: the line allows, never goes stale
    copy = Engine("reference_engine_copy", reference_engine)
    judged = item.judge("mul", "float32", copy, torch_engine)
    assert (judged.verdict, judged.passes_now) == (Verdict.PASS.value, "")
    # a line about rounding allows, never goes stale: whether last bits differ is the CPU's
    _with_left_out(monkeypatch, "mul", "sample 0: float32 rounding only (float64 agrees)")
    judged = item.judge("mul", "float32", REFERENCE, torch_engine)
    assert (judged.verdict, judged.passes_now) == (Verdict.PASS.value, "")
    # so does a line about torch's nondeterminism
    _with_left_out(monkeypatch, "mul", "sample 0: the write order is not deterministic")
    judged = item.judge("mul", "float32", REFERENCE, torch_engine)
    assert (judged.verdict, judged.passes_now) == (Verdict.PASS.value, "")
    # and still allows a divergence of its parts
    judged = item.judge("mul", "float64", load_engine(WRONG_MUL), torch_engine)
    assert judged.failing is not None and judged.failing.part != "sample 0"


@needs_opinfo
def test_a_cpu_marked_line_goes_stale_on_its_cpu_class_only(torch_engine, monkeypatch) -> None:
    # MKL's, OpenBLAS' and torch's kernels are chosen by the CPU's instructions: a line
    # marked with the class its difference was measured on allows its parts elsewhere, and
    # on that class must still fail, rounding or not (a line failing nowhere is stale)
    marked = ("sample 0: float32 rounding only (fails where torch's CPU capability is "
              "SOMECLASS or THIRDCLASS)")
    _with_left_out(monkeypatch, "mul", marked)
    line = opmap._part("mul", marked)
    assert line.cpus == ("SOMECLASS", "THIRDCLASS") and line.unstable
    assert opmap.cpu_capability() == torch.backends.cpu.get_cpu_capability()
    monkeypatch.setattr(opmap, "cpu_capability", lambda: "OTHERCLASS")
    judged = item.judge("mul", "float32", REFERENCE, torch_engine)
    assert (judged.verdict, judged.passes_now) == (Verdict.PASS.value, "")
    monkeypatch.setattr(opmap, "cpu_capability", lambda: "SOMECLASS")
    judged = item.judge("mul", "float32", REFERENCE, torch_engine)
    assert f"`{marked}`" in judged.passes_now and "delete it" in judged.passes_now


@needs_opinfo
def test_the_other_dtype_checks_only_the_parts_of_lines_that_agree_here(
        torch_engine, monkeypatch) -> None:
    # a line is stale only when its parts agree in every dtype: the other dtype runs the
    # parts of the lines none of whose parts fails here, no others (each part runs alone as
    # in full: test_opinfo_check's test_parts_run_alone_have_the_verdicts_they_have_in_full)
    calls: list[tuple[str, frozenset[tuple[str, int]] | None]] = []
    real = item.check

    def spy(op, plan, *args, **kwargs):  # type: ignore[no-untyped-def]
        result = real(op, plan, *args, **kwargs)
        calls.append((plan.dtype, args[5] if len(args) > 5 else kwargs.get("only")))
        return result

    monkeypatch.setattr(item, "check", spy)
    _with_left_out(monkeypatch, "mul", "sample 1-2: why", "jvp 3: why",
                   "sample 0: float32 rounding only")
    judged = item.judge("mul", "float64", REFERENCE, torch_engine)
    assert "`sample 1-2: why`" in judged.passes_now
    assert calls == [("float64", None),
                     ("float32", frozenset({("sample", 1), ("sample", 2), ("jvp", 3)}))]
    # a line whose parts fail here is decided here (known): no other dtype is run
    calls.clear()
    wrong = Engine(item.MAP_ENGINE, load_engine(WRONG_MUL).module)
    samples = len(entry_check.plan(database.autograd_entries()["mul"], "mul", "float64").samples)
    _with_left_out(monkeypatch, "mul", f"sample 0-{samples - 1}: the sign is wrong")
    judged = item.judge("mul", "float64", wrong, torch_engine)
    assert (judged.verdict, judged.passes_now, calls) == \
        (Verdict.KNOWN.value, "", [("float64", None)])


@needs_opinfo
def test_an_entry_opinfo_lacks_or_a_sample_it_no_longer_has_is_an_error(
        torch_engine, monkeypatch) -> None:
    _with_left_out(monkeypatch, "mul", "sample 999: gone")
    judged = item.judge("mul", "float64", REFERENCE, torch_engine)
    assert judged.verdict == Verdict.ERROR.value
    assert judged.reason.startswith("the map's line `sample 999: gone` names sample 999, "
                                    "but OpInfo has ")
    entries = {k: v for k, v in database.autograd_entries().items() if k != "mul"}
    monkeypatch.setattr(database, "autograd_entries", lambda: entries)
    judged = item.judge("mul", "float64", REFERENCE, torch_engine)
    assert judged.verdict == Verdict.ERROR.value
    assert "OpInfo of this torch has no entry mul with autograd" in judged.reason


@needs_opinfo
def test_a_cap_of_samples_checks_a_seeded_subset_and_every_part_a_line_names(
        torch_engine, monkeypatch) -> None:
    # the README's quick command caps each item's samples (pyproject.toml); CI and `run`
    # check every sample: the cap may leave a sample unchecked, never a left-out line
    the_plan = entry_check.plan(database.autograd_entries()["mul"], "mul", "float64")
    n = len(the_plan.samples)
    assert n > 4 and the_plan.forward_ad
    _with_left_out(monkeypatch, "mul", f"sample {n - 1}: why")
    left_out = item.op_map().get("mul").left_out
    only = item.sampled(the_plan, left_out, 3)
    assert only is not None and only == item.sampled(the_plan, left_out, 3)  # seeded
    samples = {i for kind, i in only if kind == "sample"}
    drawn = {i for kind, i in only if kind == "jvp"}  # a drawn sample's jvp part comes too
    assert len(drawn) == 3 and drawn <= samples and samples - drawn <= {n - 1} < samples
    assert {i for kind, i in only if kind == "error input"} == set(range(len(the_plan.errors)))
    other = entry_check.plan(database.autograd_entries()["mul"], "mul", "float32")
    assert item.sampled(other, left_out, 3) != only  # each item its own draw
    assert item.sampled(the_plan, left_out, 0) is None
    assert item.sampled(the_plan, left_out, n) is None
    # a wrong gradient still fails a capped item; the line's part is checked and allows
    wrong = load_engine(WRONG_MUL)
    judged = item.judge("mul", "float64", wrong, torch_engine, samples=3)
    assert judged.verdict == Verdict.DIVERGES.value
    assert {(p.kind, p.index) for p in judged.result.parts} == only
    assert any(p.left_out for p in judged.result.parts if p.index == n - 1)
    # and the line, whose parts agree on the reference engine, is stale as in full
    judged = item.judge("mul", "float64", REFERENCE, torch_engine, samples=3)
    assert f"`sample {n - 1}: why`" in judged.passes_now


@needs_opinfo
def test_a_capped_item_runs_a_lines_parts_until_one_fails(torch_engine, monkeypatch) -> None:
    # a left-out part that fails is known however it fails, and one decides its line: the
    # line's other parts run only while all its parts so far agree (item.capped_check)
    the_plan = entry_check.plan(database.autograd_entries()["mul"], "mul", "float64")
    n = len(the_plan.samples)
    line = f"sample 0-{n - 1}: the sign is wrong"
    _with_left_out(monkeypatch, "mul", line)
    only = item.sampled(the_plan, item.op_map().get("mul").left_out, 3)
    assert only is not None
    wrong = load_engine(WRONG_MUL)
    judged = item.judge("mul", "float64", wrong, torch_engine, samples=3)
    # the line covers every sample, drawn or not: they ran in order, in rounds of 1, 2, 4, ...
    # up to the round of the first failing
    verdicts = {p.index: p.verdict for p in judged.result.parts if p.kind == "sample"}
    ran = sorted(verdicts)
    first = min(i for i in ran if verdicts[i] == Verdict.KNOWN.value)
    assert ran == list(range(len(ran))) and len(ran) < n and len(ran) <= 2 * first + 1
    assert all(verdicts[i] == Verdict.PASS.value for i in ran[:first])
    # every part no line covers ran: the drawn samples' jvp parts, every error input
    assert {(p.kind, p.index) for p in judged.result.parts if p.kind != "sample"} == \
        {pair for pair in only if pair[0] != "sample"}
    assert (judged.verdict, judged.passes_now) == (Verdict.KNOWN.value, "")
    assert f"known divergence (conformance/opinfo/opinfo.yaml:0): {line}" in judged.reason
    # the parts in the plan's order, each failing part's divergence read from its own round
    order = [(p.kind, p.index) for p in judged.result.parts]
    assert order == [(k, i) for k, i, _ in entry_check.parts_of(the_plan) if (k, i) in order]
    assert all(item.divergence_of(judged.result, p) is not None
               for p in judged.result.parts if p.verdict == Verdict.KNOWN.value)
    # where every part agrees, every part runs (rounds of one more) and the line is stale
    judged = item.judge("mul", "float64", REFERENCE, torch_engine, samples=3)
    assert {(p.kind, p.index) for p in judged.result.parts} == only
    assert f"`{line}`" in judged.passes_now


def test_unavailable_opinfo_skips_with_the_install_hint_and_the_report_counts_them(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable() -> dict[str, object]:
        raise database.OpInfoUnavailable(f"OpInfo needs expecttest: {database.INSTALL_HINT}")

    monkeypatch.setattr(database, "autograd_entries", unavailable)
    # (-k matches substrings: the other entries whose names hold "exp" are left out)
    result = pytester.runpytest("--opinfo", "-k", "opinfo and exp and not (expand or frexp or "
                                "ldexp or logaddexp or exp2 or expm1 or logsumexp or "
                                "logcumsumexp or matrix_exp)", "-rs",
                                "--conformance-report", "out")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["SKIPPED*OpInfo needs expecttest: pip install expecttest*"])
    report = json.loads((pytester.path / "out" / "conformance.json").read_text())
    assert [(r["id"], r["verdict"]) for r in report["items"]] == [
        ("opinfo/exp::cpu-float32", "skipped"), ("opinfo/exp::cpu-float64", "skipped")]
    assert database.INSTALL_HINT in report["items"][0]["reason"]
    assert report["status"]["line"].startswith("PASS: 2 skipped of 2 collected")


def test_run_has_them_when_the_whole_suite_runs_or_asked(monkeypatch, tmp_path) -> None:
    given: list[list[str]] = []
    monkeypatch.setattr(pytest, "main", lambda args, plugins=(): given.append(args) or 0)
    monkeypatch.chdir(ROOT)
    report_dir = f"--report-dir={tmp_path}"
    for argv in (["run"], ["run", "cases/leaf"], ["run", "cases/leaf", "--opinfo"],
                 ["run", "--no-opinfo"], ["run", "--no-generated"]):
        cli.main([*argv, report_dir])
    assert [[a for a in args if a in ("--opinfo", "--no-opinfo")] for args in given] == [
        ["--opinfo"], ["--no-opinfo"], ["--opinfo"], ["--no-opinfo"], ["--no-opinfo"]]
    # every sample, whatever the project's ini caps the quick command to
    assert all("--opinfo-samples=0" in args for args in given)
