"""Baselines: a run merged into an expectations file keeps what people wrote, byte for byte;
adds what is new, lists (or, asked to, removes) what is stale; and writes ids no file name can
break out of."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

import pytest

# pytester's in-process runs drop the modules they imported; torch must be imported once.
import torch  # noqa: F401

from conformance.case.diagnostics import CaseError
from conformance.cli import main
from conformance.report import baseline
from conformance.run import expectations, verdicts
from conformance.run.decision import decide
from tests.conformance.test_expectations import CASE, PASSING, WRONG_EXP

ENV = expectations.Environment("2.13.0+cpu", "3.11.9", "linux", None)
HAND_WRITTEN = """\
# Hand-written header: kept as it is.
known:
  # hooks: one cause, issue #12
  - items: "cases/h/a.yaml::*"   # a's own comment: "quoted", with a colon: here
    reason: >-
      a hand-written reason
      over two lines

  - items: "cases/h/b.yaml::*"
    reason: b was broken
  - items: "cases/h/c.yaml::*"
    reason: c is outside this run
  - generated: {field: "*.x"}
    reason: generated programs
# a trailing comment
"""


def record(item_id: str, status: str | None, **extra: Any) -> dict[str, Any]:
    """A case item's record as the plugin writes it (`status` None: no verdict of its own)."""
    device, dtype = item_id.rpartition("::")[2].split("-")
    verdict = {"timeout": "error", None: "error"}.get(status, status)
    r = {"id": item_id, "file": item_id.split("::")[0], "features": ["ops"], "device": device,
         "dtype": dtype, "engine": None if status is None else "e", "verdict": verdict,
         "reason": extra.pop("reason", ""), **extra}
    if status is not None:
        r["status"] = status
    return r


def divergent(item_id: str, line: int = 7) -> dict[str, Any]:
    return record(item_id, "diverges", divergence={
        "line": line, "statement": "b = torch.exp(a)", "field": "b.values", "strict": False})


RECORDS = [
    {**divergent("cases/h/a.yaml::cpu-float32"), "verdict": "known"},
    record("cases/h/b.yaml::cpu-float32", "pass"),
    divergent("cases/h/d.yaml::cpu-float32"),
    record("cases/h/e.yaml::cpu-float32", "error", reason="stopped at line 3: boom\nmore"),
    record("cases/h/f.yaml::cpu-float32", "timeout", reason="ran longer than 1 s"),
    record("cases/h/g.yaml::cpu-float32", None, reason="worker 'gw0' crashed"),
    record("cases/h/h.yaml::cpu-float32", "unsupported", missing_api=["torch.amin"]),
    record("cases/h/i.yaml::cpu-float32", "case_disagrees_with_torch"),
    record("cases/h/j.yaml::cuda-float32", "skipped"),
    {"id": "conformance/generated_suite.py::test", "file": "conformance/generated_suite.py",
     "features": ["generated"], "device": "cpu", "dtype": "float32", "engine": "e",
     "verdict": "diverges", "reason": ""},
]


def update(path: Path, records: list[dict[str, Any]] = RECORDS, prune: bool = False
           ) -> baseline.Update:
    done = baseline.update(path, records, shown="known.yaml", engine="e",
                           torch_version="2.13.0", environment=ENV, prune=prune)
    baseline.write(path, done.text)
    return done


def added_block(text: str, old: str) -> str:
    """The lines of `text` that are not in `old`, which must be all of `old` in order."""
    new_lines, old_lines = text.splitlines(keepends=True), old.splitlines(keepends=True)
    kept = [line for line in new_lines if line in old_lines]
    assert kept == old_lines
    return "".join(line for line in new_lines if line not in old_lines)


def test_a_merge_keeps_every_byte_written_and_adds_and_lists(tmp_path: Path) -> None:
    path = tmp_path / "known.yaml"
    path.write_text(HAND_WRITTEN)
    done = update(path)
    text = path.read_text()
    # everything written by hand is there, in order; the new entries follow the last entry
    assert text.startswith(HAND_WRITTEN.removesuffix("# a trailing comment\n"))
    assert text.endswith("# a trailing comment\n")
    added = added_block(text, HAND_WRITTEN)
    assert added.count("  - items:") == 3  # d (diverges), e (error), f (timeout)
    assert '  - items: "cases/h/e.yaml::cpu-float32"\n    status: error\n' in added
    assert '    status: timeout\n' in added
    assert "stopped at line 3: boom" in added and "more" not in added  # the first line
    assert "field `b.values`" in added
    known = expectations.loads(text, "known.yaml", ENV)
    assert [k.items for k in known.known][:4] == [
        "cases/h/a.yaml::*", "cases/h/b.yaml::*", "cases/h/c.yaml::*", None]
    lines = done.lines()
    assert lines[0] == ("expectations: merged this run into known.yaml: kept 4 entries (2 "
                        "outside this run), added 3, 1 stale listed (--prune-expectations "
                        "removes them)")
    assert "  stale: known.yaml:9: the 1 item it lists passes now" in lines
    unlisted = "\n".join(line for line in lines if "not listed" in line)
    assert "cases/h/g.yaml::cpu-float32: ended without a verdict" in unlisted
    assert "`skip: true`" in unlisted
    assert "unsupported: the engine lacks torch.amin" in unlisted
    assert "cases/h/i.yaml::cpu-float32: the case disagrees with torch" in unlisted
    assert "generated programs diverged" in unlisted
    # the same run merged again: nothing to add, the file is left alone
    again = update(path)
    assert not again.changed and path.read_text() == text
    assert again.lines()[0].startswith("expectations: merged this run into known.yaml: kept 7 "
                                       "entries (2 outside this run), added 0, 1 stale")


def test_pruning_removes_only_the_stale_entries(tmp_path: Path) -> None:
    path = tmp_path / "known.yaml"
    path.write_text(HAND_WRITTEN)
    done = update(path, RECORDS[:2], prune=True)
    assert path.read_text() == HAND_WRITTEN.replace(
        '  - items: "cases/h/b.yaml::*"\n    reason: b was broken\n', "")
    assert done.lines()[0].endswith("added 0, 1 stale removed")


def test_an_entry_whose_items_fail_otherwise_is_stale_and_the_new_status_listed(
        tmp_path: Path) -> None:
    path = tmp_path / "known.yaml"
    path.write_text('known:\n  - items: "x.yaml::*"\n    reason: diverges\n')
    now = [record("x.yaml::cpu-float32", "error", reason="boom")]
    done = update(path, now)
    assert done.usage.stale[0][1] == "it expects diverges; its 1 item now: 1 error"
    known = expectations.loads(path.read_text(), "known.yaml", ENV)
    # the entry added later applies although the first matches the item too
    decision = decide("error", "", known.applying("x.yaml::cpu-float32", "cpu",
                                                  "float32"))
    assert decision.known and decision.entry is not None and decision.entry.index == 1


def test_entries_for_other_environments_are_not_judged(tmp_path: Path) -> None:
    path = tmp_path / "known.yaml"
    text = ('known:\n  - items: "x.yaml::*"\n    torch: "<2.0"\n    reason: old torch\n'
            '  - items: "x.yaml::*"\n    platform: darwin\n    reason: macs\n'
            '  - items: "x.yaml::*"\n    skip: true\n    devices: [cuda]\n    reason: hangs\n')
    path.write_text(text)
    done = update(path, [record("x.yaml::cpu-float32", "pass"),
                         record("x.yaml::cuda-float32", "skipped")])
    assert not done.changed and done.usage.stale == []
    assert len(done.usage.needed) == 1  # the skip entry kept an item from running


@pytest.mark.parametrize("text", [
    "", "# only a comment\n", "known:\n", "known: []  # none yet\n", "known: ~\n",
    "known:\r\n",
])
def test_every_empty_form_takes_new_entries(tmp_path: Path, text: str) -> None:
    path = tmp_path / "known.yaml"
    path.write_text(text, newline="")
    update(path, [divergent("x.yaml::cpu-float32")])
    written = path.read_bytes().decode()
    assert len(expectations.loads(written, "k", ENV).known) == 1
    for line in text.splitlines():  # what was there stays (less the empty value)
        assert line.replace("[]", "").replace("~", "") in written


def test_line_ends_are_kept_and_followed(tmp_path: Path) -> None:
    path = tmp_path / "known.yaml"
    mine = b'known:\r\n  - items: "a::*"  # mine\r\n    reason: r\r\n'
    path.write_bytes(mine)
    update(path, [divergent("x.yaml::cpu-float32")])
    written = path.read_bytes()
    assert written.startswith(mine) and b"\n" not in written.replace(b"\r\n", b"")


def test_comments_name_a_hostile_engine_quoted(tmp_path: Path) -> None:
    path = tmp_path / "known.yaml"
    done = baseline.update(path, [divergent("x.yaml::cpu-float32")], shown="k", engine=
                           "e\nknown: 1", torch_version="2\n- x", environment=ENV)
    assert len(expectations.loads(done.text, "k", ENV).known) == 1
    assert '"e\\nknown: 1"' in done.text and '"2\\n- x"' in done.text


def test_new_entries_hold_for_the_backend_the_run_compiled_with(tmp_path: Path) -> None:
    """An engine that declares a backend (torch.compile's aot_eager or inductor) gets
    entries conditioned on it: what inductor gets wrong is not excused under aot_eager."""
    from dataclasses import replace

    path = tmp_path / "known.yaml"
    inductor = replace(ENV, backend="inductor")
    done = baseline.update(path, [divergent("x.yaml::cpu-float32")], shown="k", engine="e",
                           torch_version="2.13.0", environment=inductor)
    assert '    backend: "inductor"\n' in done.text
    for backend, applies in (("inductor", True), ("aot_eager", False), (None, False)):
        known = expectations.loads(done.text, "k", replace(ENV, backend=backend))
        assert bool(known.applying("x.yaml::cpu-float32", "cpu", "float32")) is applies
    # an engine without a backend: no condition
    plain = baseline.update(tmp_path / "plain.yaml", [divergent("x.yaml::cpu-float32")],
                            shown="k", engine="e", torch_version="2.13.0", environment=ENV)
    assert "backend" not in plain.text


def test_a_file_that_does_not_exist_is_created(tmp_path: Path) -> None:
    path = tmp_path / "new" / "known.yaml"
    done = update(path, [record("x.yaml::cpu-float32", "pass")])
    assert done.created and "known: []" in path.read_text()
    assert done.lines()[0].startswith("expectations: created known.yaml")


def test_a_list_in_flow_style_is_refused_not_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "known.yaml"
    path.write_text('known: [{items: "y.yaml::*", reason: r}]\n')
    with pytest.raises(CaseError, match="flow style") as info:
        baseline.update(path, [divergent("x.yaml::cpu-float32")], shown="known.yaml",
                        engine="e", torch_version="2.13.0", environment=ENV)
    assert info.value.line == 1


# File names that YAML would read otherwise if written raw: a newline (the next line would
# become live YAML), a comment sign, a mapping indicator, quotes, backslashes, fnmatch's
# own characters, and Unicode line breaks.
HOSTILE = ["cases/f/we\nird.yaml", "cases/f/a #b.yaml", "cases/f/k: v.yaml",
           "cases/f/\"q'.yaml", "cases/f/back\\slash.yaml", "cases/f/[*?].yaml",
           "cases/f/line\u2028sep\x85.yaml", "cases/f/- item.yaml"]


def test_hostile_ids_are_written_quoted_and_match_exactly_their_item(tmp_path: Path) -> None:
    path = tmp_path / "known.yaml"
    path.write_text("known:\n  - items: \"keep.yaml::*\"\n    reason: mine\n")
    ids = [f"{name}::cpu-float32" for name in HOSTILE]
    done = update(path, [divergent(i) for i in ids] +
                  [record(f"{HOSTILE[0]}::cpu-float64", None, reason="crashed")])
    text = path.read_text()
    known = expectations.loads(text, "known.yaml", ENV)
    assert len(known.known) == 1 + len(ids)
    for i, entry in zip(ids, known.known[1:], strict=True):
        assert entry.items is not None and fnmatch.fnmatchcase(i, entry.items)
        assert [j for j in ids if fnmatch.fnmatchcase(j, entry.items)] == [i]
        # (a character the reason may not hold, U+2028 or U+0085, is written escaped)
        assert entry.reason.startswith("TODO") and \
            baseline.printable(i.split("::")[0]) in entry.reason
    for line in text.splitlines():  # every line is a comment or part of an entry
        assert line.startswith(("known:", "  #", "  - items: \"", "    reason: ")), line
    # the terminal lines quote an id that holds a line break
    assert any(json.dumps(ids[0]) in line for line in done.lines())
    assert all("\n" not in line for line in done.lines())


def test_a_run_with_hostile_file_names_writes_a_file_that_loads(pytester: pytest.Pytester
                                                                ) -> None:
    names = ["we\nird.yaml", "a #b: 'c\".yaml"]
    for name in names:
        path = pytester.path / "cases" / "f" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(CASE)
    result = pytester.runpytest("cases", "--engine", WRONG_EXP, "--write-expectations",
                                "known.yaml")
    result.assert_outcomes(failed=4)
    known = expectations.load(pytester.path / "known.yaml")
    assert sorted(k.items or "" for k in known.known) == sorted(
        f"cases/f/{n}::cpu-{t}" for n in names for t in ("float32", "float64"))
    rerun = pytester.runpytest("cases", "--engine", WRONG_EXP, "--expectations", "known.yaml")
    rerun.assert_outcomes(xfailed=4)


def test_rebaselining_twice_keeps_a_hand_written_reason_and_comment(pytester: pytest.Pytester
                                                                    ) -> None:
    for name, text in {"exp.yaml": CASE, "double.yaml": PASSING}.items():
        path = pytester.path / "cases" / "f" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    args = ("cases", "--engine", WRONG_EXP, "--expectations", "known.yaml",
            "--write-expectations", "known.yaml")
    first = pytester.runpytest(*args)
    first.assert_outcomes(failed=2, passed=2)
    first.stdout.fnmatch_lines(["expectations: created known.yaml*added 2, 0 stale"])
    path = pytester.path / "known.yaml"
    # a person rewrites the reasons: one entry for both items, with a comment
    text = path.read_text()
    head = text[:text.index("known:")]
    mine = head + ("known:\n  # exp: the engine's exp is 1% off (issue #7)\n"
                   '  - items: "cases/f/exp.yaml::*"   # both dtypes\n'
                   "    reason: >-\n      exp multiplies by 1.01;\n      fix in v2\n")
    path.write_text(mine)
    second = pytester.runpytest(*args)
    second.assert_outcomes(xfailed=2, passed=2)
    second.stdout.fnmatch_lines([
        "expectations: merged this run into known.yaml (the file this run used): kept 1 "
        "entry (0 outside this run), added 0, 0 stale"])
    assert path.read_text() == mine
    third = pytester.runpytest(*args)
    third.assert_outcomes(xfailed=2, passed=2)
    assert path.read_text() == mine  # byte for byte
    assert third.ret == 0


def test_stale_entries_are_listed_and_removed_on_request(pytester: pytest.Pytester) -> None:
    path = pytester.path / "cases" / "f" / "double.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(PASSING)
    mine = ('known:\n  - items: "cases/f/double.yaml::*"\n    reason: fixed since\n'
            '  - items: "cases/f/elsewhere.yaml::*"\n    reason: not in this run\n')
    (pytester.path / "known.yaml").write_text(mine)
    args = ("cases", "--expectations", "known.yaml", "--write-expectations", "known.yaml")
    listed = pytester.runpytest(*args)
    listed.assert_outcomes(failed=2)  # listed, but they pass now
    listed.stdout.fnmatch_lines([
        "*kept 2 entries (1 outside this run), added 0, 1 stale listed*",
        "  stale: known.yaml:2: the 2 items it lists pass now"])
    assert (pytester.path / "known.yaml").read_text() == mine
    pruned = pytester.runpytest(*args, "--prune-expectations")
    pruned.stdout.fnmatch_lines(["*kept 1 entry (1 outside this run), added 0, 1 stale "
                                 "removed"])
    assert (pytester.path / "known.yaml").read_text() == mine.split("  - items")[0] + \
        "  - items" + mine.split("  - items")[2]
    assert pytester.runpytest(*args).ret == 0
    alone = pytester.runpytest("cases", "--prune-expectations")
    assert alone.ret == pytest.ExitCode.USAGE_ERROR
    alone.stderr.fnmatch_lines(["*--prune-expectations goes with --write-expectations*"])


def test_a_malformed_file_is_not_overwritten(pytester: pytest.Pytester) -> None:
    path = pytester.path / "cases" / "f" / "exp.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(CASE)
    (pytester.path / "other.yaml").write_text("known:\n  - items: x\n")  # no reason
    result = pytester.runpytest("cases", "--engine", WRONG_EXP,
                                "--write-expectations", "other.yaml")
    result.stdout.fnmatch_lines(["expectations: other.yaml not written: other.yaml:2: every "
                                 "entry needs a `reason`"])
    assert (pytester.path / "other.yaml").read_text() == "known:\n  - items: x\n"
    assert result.ret == 1


def test_update_expectations_from_reports(pytester: pytest.Pytester,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    for name, text in {"exp.yaml": CASE, "double.yaml": PASSING}.items():
        path = pytester.path / "cases" / "f" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for shard, k in (("r1", "float32"), ("r2", "float64")):
        pytester.runpytest("cases", "--engine", WRONG_EXP, "-k", k,
                           "--conformance-report", shard)
    mine = "# mine\nknown:\n  - items: \"cases/f/double.yaml::*\"\n    reason: stale\n"
    (pytester.path / "known.yaml").write_text(mine)
    code = main(["update-expectations", str(pytester.path / "r1"), str(pytester.path / "r2"),
                 "--expectations", str(pytester.path / "known.yaml")])
    assert code == 0
    out = capsys.readouterr().out
    assert "kept 1 entry (0 outside this run), added 2, 1 stale listed" in out
    known = expectations.load(pytester.path / "known.yaml")
    assert [k.items for k in known.known] == [
        "cases/f/double.yaml::*", "cases/f/exp.yaml::cpu-float32",
        "cases/f/exp.yaml::cpu-float64"]
    code = main(["update-expectations", str(pytester.path / "nowhere"), "--expectations",
                 str(pytester.path / "known.yaml")])
    assert code == 2
    assert "cannot read the report" in capsys.readouterr().err


def test_the_schema_names_every_status() -> None:
    from conformance.run.verdicts import Verdict
    from tests.conformance.test_report_schema import SCHEMA

    statuses = set(SCHEMA["$defs"]["item"]["properties"]["status"]["enum"])
    assert statuses == {v.value for v in Verdict} - {"known"} | {verdicts.TIMEOUT}
    assert set(expectations.STATUSES) <= statuses
