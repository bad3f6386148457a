"""The status line (status_line), atomic report files and the report-directory lock
(report_dir), and report.write on records of files that failed to load."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.plugin.session import collection_error
from conformance.report import directory as report_dir
from conformance.report import files as report
from conformance.report import status_line
from conformance.report.hit_rates import HitRates

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "conformance" / "report" / "schema"
                     / "conformance.schema.json").read_text())
ENGINE = "tests.conformance.engine_wrong_exp"  # report.write imports it (its version)


def item(verdict: str, dtype: str = "float32") -> dict[str, Any]:
    return {"id": f"cases/f/{verdict}.yaml::cpu-{dtype}", "file": f"cases/f/{verdict}.yaml",
            "features": ["ops"], "device": "cpu", "dtype": dtype, "engine": ENGINE,
            "verdict": verdict, "pytest_outcome": "passed", "reason": ""}


def run(collected: int, executed: int | None = None, **kw: Any) -> dict[str, Any]:
    return {"collected": collected, "executed": collected if executed is None else executed,
            **kw}


@pytest.mark.parametrize("records, info, expected", [
    ([item("pass"), item("skipped")], run(2),
     ("PASS", "PASS: 1 pass, 1 skipped of 2 collected; 2 executed")),
    ([item("pass"), item("known")], run(2),
     ("PASS", "PASS: 1 known, 1 pass of 2 collected; 2 executed")),
    ([item("pass"), item("diverges"), item("error")], run(3, exit_status=1),
     ("FAIL", "FAIL: 1 diverges, 1 error, 1 pass of 3 collected; 3 executed; "
              "pytest exit status 1")),
    # a non-zero exit with every item green (e.g. a stale expectations entry) is no pass
    ([item("pass")], run(1, exit_status=1),
     ("FAIL", "FAIL: 1 pass of 1 collected; 1 executed; pytest exit status 1")),
    # fewer executed than collected (a lost worker, -x): incomplete, failures still counted
    ([item("pass"), item("case_disagrees_with_torch")], run(5, 2),
     ("INCOMPLETE", "INCOMPLETE: 1 case_disagrees_with_torch, 1 pass of 5 collected; "
                    "2 executed")),
    ([item("pass")], run(1, interrupted=True, interruption="KeyboardInterrupt"),
     ("INCOMPLETE", "INCOMPLETE: 1 pass of 1 collected; 1 executed; interrupted "
                    "(KeyboardInterrupt)")),
    ([item("pass")], run(3),
     ("PASS", "PASS: 1 pass of 3 collected; 3 executed (2 without a conformance record: "
              "tests other than cases)")),
    ([collection_error("cases/f/b.yaml", "cases/f/b.yaml:3: unknown key `x`")], run(0),
     ("FAIL", "FAIL: 1 error (1 file failed to load) of 0 collected; 0 executed")),
])
def test_status_line(records: list[dict[str, Any]], info: dict[str, Any],
                     expected: tuple[str, str]) -> None:
    assert status_line.line(records, info) == expected


def test_collection_error_record_names_file_line_and_message() -> None:
    r = collection_error("cases/f/b.yaml", "cases/f/b.yaml:3: unknown key `x`\n  fix: drop it")
    assert (r["file"], r["line"], r["message"]) == ("cases/f/b.yaml", 3,
                                                    "unknown key `x`\n  fix: drop it")
    assert r["device"] is None and r["verdict"] == "error" and status_line.is_load_error(r)
    r = collection_error("f/b.yaml", "/abs/cases/f/b.yaml:7: syntax error\n  fix: close it")
    assert (r["id"], r["file"], r["line"]) == ("f/b.yaml", "/abs/cases/f/b.yaml", 7)
    assert r["message"] == "syntax error\n  fix: close it"
    traceback = "Traceback (most recent call last):\n  ...\nImportError: no module named q\n"
    r = collection_error("tests/test_q.py", traceback)
    assert (r["line"], r["message"]) == (None, "ImportError: no module named q")
    assert r["report"] == traceback


def write(directory: Path, records: list[dict[str, Any]], **kw: Any) -> list[Path]:
    return report.write(directory, records, engine=ENGINE, started=report.now(),
                        profile="ci", generated=HitRates(), **kw)


@pytest.mark.parametrize("empty", ["", None, "absent"])
def test_load_error_records_of_any_shape_render_everywhere(tmp_path: Path,
                                                           empty: str | None) -> None:
    load = {"id": "cases/f/b.yaml", "file": "cases/f/b.yaml", "line": 3,
            "message": "unknown key `x`", "verdict": "error", "device": empty,
            "dtype": empty, "features": None if empty is None else ["unknown"]}
    if empty == "absent":
        for key in ("device", "dtype", "features", "line"):
            del load[key]
    write(tmp_path, [item("pass"), load])
    data = json.loads((tmp_path / "conformance.json").read_text())
    jsonschema.validate(data, SCHEMA)
    record = next(r for r in data["items"] if r["id"] == "cases/f/b.yaml")
    assert (record["device"], record["dtype"], record["features"]) == (None, None, ["unknown"])
    assert data["status"]["outcome"] == "FAIL"
    summary = (tmp_path / "summary.md").read_text()
    where = "cases/f/b.yaml" if empty == "absent" else "cases/f/b.yaml:3"
    assert f"- `{where}`: unknown key `x`" in summary
    assert "None" not in summary  # no matrix column for a record without a device
    assert "| ops | 1/1 |" in summary
    assert "cases/f/b.yaml" in (tmp_path / "index.html").read_text()


def test_schema_ties_a_missing_device_to_an_error(tmp_path: Path) -> None:
    write(tmp_path, [item("pass")])
    data = json.loads((tmp_path / "conformance.json").read_text())
    data["items"][0]["device"] = None  # a pass without a device is no collection error
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, SCHEMA)


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, [item("pass")])
    before = (tmp_path / "conformance.json").read_text()

    def no_rename(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", no_rename)
    with pytest.raises(OSError, match="disk full"):
        write(tmp_path, [item("diverges")])
    assert (tmp_path / "conformance.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conformance.json", "index.html",
                                                          "summary.md"]


def test_atomic_write_replaces_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("old")
    report_dir.write_atomic(path, "new")
    assert path.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["x.json"]
    assert path.stat().st_mode & 0o777 == 0o644


def test_lock_is_exclusive_until_released(tmp_path: Path) -> None:
    first, second = report_dir.ReportLock(tmp_path / "r"), report_dir.ReportLock(tmp_path / "r")
    first.acquire()
    with pytest.raises(report_dir.ReportDirBusy, match=rf"pid {os.getpid()}\b.*OTHER_DIR"):
        second.acquire()
    first.release(wrote=True)
    second.acquire()
    second.release(wrote=True)
    assert (tmp_path / "r").is_dir()  # a directory written into stays
    third = report_dir.ReportLock(tmp_path / "new")
    third.acquire()
    third.release(wrote=False)
    assert not (tmp_path / "new").exists()  # made by a run that wrote nothing: removed


def test_summary_groups_a_failure_across_dtypes_totals_and_hides_devices_where_nothing_ran(
        tmp_path: Path) -> None:
    def diverges(name: str, dtype: str, field: str = "b.values") -> dict[str, Any]:
        return {**item("diverges", dtype), "id": f"cases/f/{name}.yaml::cpu-{dtype}",
                "file": f"cases/f/{name}.yaml", "pytest_outcome": "failed",
                "report": f"cases/f/{name}.yaml::cpu-{dtype}: {field} differs",
                "divergence": {"line": 7, "statement": "b = torch.exp(a)", "field": field,
                               "torch": [1.0], "engine": [2.0], "strict": False,
                               "graphs": None}}
    skipped = {**item("skipped"), "id": "cases/f/x.yaml::cuda-float32", "device": "cuda",
               "features": ["devices"], "reason": "cuda is not available"}
    hits = HitRates()
    hits.record({"feature:ops", "op:exp"})
    hits.record({"feature:ops"})
    report.write(tmp_path, [item("pass"), item("pass", "float64"), diverges("exp", "float32"),
                            diverges("exp", "float64"), diverges("sin", "float32", "b.grad"),
                            skipped], engine=ENGINE, started=report.now(), profile="ci",
                 generated=hits)
    summary = (tmp_path / "summary.md").read_text()
    # the same failure in two dtypes: one entry naming them; another field: its own
    assert "## Failures (3, 2 distinct)" in summary
    assert ("`cases/f/exp.yaml` on cpu, dtypes float32, float64: the same failure in 2 items; "
            "shown: `cases/f/exp.yaml::cpu-float32`\n\n```\ncases/f/exp.yaml::cpu-float32: "
            "b.values differs\n```") in summary
    assert "cases/f/exp.yaml::cpu-float64: b.values differs" not in summary
    assert "```\ncases/f/sin.yaml::cpu-float32: b.grad differs\n```" in summary
    # cuda ran nothing: no columns, a note; each item counted once in the totals
    assert ("| feature | cpu float32 | cpu float64 |\n|---|---|---|\n| ops | 1/3 | 1/2 |\n"
            "| **total** | 1/3 | 1/2 |\n") in summary
    assert ("Columns not shown: cuda: nothing could run (1 items skipped: cuda is not "
            "available). Features only they have: devices.") in summary
    # the hit-rate table, collapsed under its one line
    assert ("<details>\n<summary>2 generated programs: 2 hit rates, the lowest op:exp "
            "50.0%</summary>\n\n```\ngenerated programs: 2\n") in summary
    assert summary.rstrip().endswith("</details>")
