"""`autograd-conformance merge`: counts add up, conflicting verdicts are flagged, and the
merge is never greener than its inputs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance import cli
from conformance.gen import campaign
from conformance.report import files as report
from conformance.report import records as report_records
from conformance.report import status_line
from conformance.report.hit_rates import HitRates
from conformance.report.merge import MergeError, merge

ENGINE = "reference_engine"
GENERATED_ID = "conformance/generated_suite.py::test_generated_programs_agree_with_torch"
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "conformance" / "report" / "schema"
                     / "conformance.schema.json").read_text())


def item(name: str, verdict: str = "pass", device: str = "cpu") -> dict[str, Any]:
    return {"id": f"cases/{name}.yaml::{device}-float32", "file": f"cases/{name}.yaml",
            "features": ["ops"], "device": device, "dtype": "float32", "engine": ENGINE,
            "verdict": verdict, "pytest_outcome": "passed" if verdict == "pass" else "failed",
            "reason": ""}


def generated(outcome: str = "passed") -> dict[str, Any]:
    return report_records.generated_record(GENERATED_ID, ENGINE, outcome,
                                   verdict="diverges" if outcome == "failed" else None)


def write(directory: Path, records: list[dict[str, Any]], *, shard: str | None = None,
          hits: HitRates | None = None, run: status_line.RunFacts | None = None,
          **info: Any) -> Path:
    report.write(directory, records, engine=ENGINE, started=0.0, profile="default",
                 generated=hits or HitRates(), run=run,
                 campaign=campaign.describe(None, None if shard is None
                                            else campaign.parse_shard(shard), None))
    path = directory / "conformance.json"
    if info:  # another machine's facts
        data = json.loads(path.read_text())
        data["run_info"].update(info)
        path.write_text(json.dumps(data))
    return path


def test_two_shards_merge_into_one_report_whose_counts_add_up(tmp_path: Path) -> None:
    one = write(tmp_path / "one", [item("a"), item("b"), generated()], shard="1/2",
                hits=HitRates(10, Counter({"x": 3, "y": 10})))
    two = write(tmp_path / "two", [item("a"), item("b"), generated("failed")], shard="2/2",
                hits=HitRates(5, Counter({"x": 1, "z": 2})))
    code = cli.main(["merge", str(one), str(tmp_path / "two"), "--out", str(tmp_path / "m")])
    data = json.loads((tmp_path / "m" / "conformance.json").read_text())
    jsonschema.validate(data, SCHEMA)
    assert (tmp_path / "m" / "summary.md").read_text().startswith("**FAIL**")
    assert "merged from 2 reports" in (tmp_path / "m" / "index.html").read_text()
    assert data["generated"]["programs"] == 15
    assert data["generated"]["counts"] == {"x": 4, "y": 10, "z": 2}
    ids = [r["id"] for r in data["items"]]
    # a case item once; the generated item once per shard (they ran different programs)
    assert ids == ["cases/a.yaml::cpu-float32", "cases/b.yaml::cpu-float32",
                   f"{GENERATED_ID}[shard 1/2]", f"{GENERATED_ID}[shard 2/2]"]
    assert [r["verdict"] for r in data["items"]] == ["pass", "pass", "pass", "diverges"]
    assert not any("conflict" in r for r in data["items"])
    info = data["run_info"]
    assert (info["collected"], info["executed"], info["shard"]) == (4, 4, "1/2,2/2")
    assert [m["report"] for m in info["merged"]] == [str(one), str(two)]
    assert data["status"] == {"outcome": "FAIL", "line": "FAIL: 1 diverges, 3 pass of 4 "
                              "collected; 4 executed; merged from 2 "
                              "reports"}
    assert code == 1


def test_conflicting_verdicts_are_flagged_and_the_worst_is_kept(tmp_path: Path) -> None:
    one = write(tmp_path / "one", [item("a"), item("b"), item("c", "skipped", "cuda")])
    two = write(tmp_path / "two", [item("a", "diverges"), item("b"), item("c", "pass", "cuda")])
    data, _ = merge([one, two])
    records = {r["id"]: r for r in data["items"]}
    a = records["cases/a.yaml::cpu-float32"]
    assert a["verdict"] == "diverges"
    assert a["conflict"] == [{"report": str(one), "verdict": "pass"},
                             {"report": str(two), "verdict": "diverges"}]
    # skipped on one machine (no CUDA there), run on another: no conflict, the run's verdict
    c = records["cases/c.yaml::cuda-float32"]
    assert c["verdict"] == "pass" and "conflict" not in c
    assert data["status"]["outcome"] == "FAIL"
    assert data["status"]["line"].endswith("; 1 item with conflicting verdicts")
    report.write_data(tmp_path / "m", data, HitRates())
    jsonschema.validate(json.loads((tmp_path / "m" / "conformance.json").read_text()), SCHEMA)
    summary = (tmp_path / "m" / "summary.md").read_text()
    assert f"- `cases/a.yaml::cpu-float32`: pass in `{one}`, diverges in `{two}`" in summary


def test_the_same_shard_twice_is_compared(tmp_path: Path) -> None:
    one = write(tmp_path / "one", [generated()], shard="1/1")
    again = write(tmp_path / "again", [generated("failed")], shard="1/1")
    data, _ = merge([one, again])
    [record] = data["items"]
    assert record["id"] == f"{GENERATED_ID}[shard 1/1]"
    assert record["verdict"] == "diverges" and len(record["conflict"]) == 2


@pytest.mark.parametrize("key, value, what", [("engine", "my_engine", "engines"),
                                              ("torch_version", "2.5.0", "torch versions")])
def test_reports_of_different_engines_or_torch_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: str,
        what: str) -> None:
    one = write(tmp_path / "one", [item("a")])
    other = write(tmp_path / "two", [item("a")], **{key: value})
    with pytest.raises(MergeError, match=f"different {what}.*{value}"):
        merge([one, other])
    assert cli.main(["merge", str(one), str(other), "--out", str(tmp_path / "m")]) == 2
    assert f"different {what}" in capsys.readouterr().err
    assert not (tmp_path / "m" / "conformance.json").exists()


def test_an_unreadable_report_stays_visible_and_the_merge_is_incomplete(
        tmp_path: Path) -> None:
    one = write(tmp_path / "one", [item("a")])
    cut = tmp_path / "cut.json"
    cut.write_text(one.read_text()[:100])  # a report cut short
    data, _ = merge([one, cut, tmp_path / "absent.json"])
    assert data["status"]["outcome"] == "INCOMPLETE"
    assert data["status"]["line"].startswith("INCOMPLETE: 2 error (2 files failed to load), "
                                             "1 pass of 1 collected")
    assert data["status"]["line"].endswith("merged from 3 reports; 2 reports not read")
    errors = {r["id"]: r["message"] for r in data["items"] if r["verdict"] == "error"}
    assert errors[str(cut)].startswith("report not merged: not JSON")
    assert "cannot read it" in errors[str(tmp_path / "absent.json")]
    with pytest.raises(MergeError, match="no report could be read"):
        merge([cut])


def test_an_interrupted_input_or_a_missing_shard_makes_it_incomplete(tmp_path: Path) -> None:
    one = write(tmp_path / "one", [item("a")], shard="1/3")
    stopped = write(tmp_path / "two", [item("b")], shard="2/3", run=status_line.RunFacts(
        collected=2, executed=1, interrupted=True, interruption="terminated (SIGTERM)"))
    data, _ = merge([one, stopped])
    assert data["status"]["outcome"] == "INCOMPLETE"
    line = data["status"]["line"]
    assert "of 3 collected; 2 executed" in line
    assert f"interrupted ({stopped}: terminated (SIGTERM))" in line
    assert line.endswith("shards missing: 3/3")
    three = write(tmp_path / "three", [item("c")], shard="3/3")
    data, _ = merge([one, three, tmp_path / "one"])  # a directory is read as its report
    assert data["status"]["outcome"] == "INCOMPLETE"  # shard 2/3 is missing
    assert data["status"]["line"].endswith("shards missing: 2/3")
    data, _ = merge([one, three, write(tmp_path / "two-again", [item("b")], shard="2/3")])
    assert data["status"]["outcome"] == "PASS"


def test_a_failed_run_without_failing_records_stays_failed(tmp_path: Path) -> None:
    # e.g. --strict-expectations: a stale entry made pytest exit 1
    one = write(tmp_path / "one", [item("a")])
    strict = write(tmp_path / "two", [item("a")], run=status_line.RunFacts(
        collected=1, executed=1, exit_status=1))
    data, _ = merge([one, strict])
    assert data["status"]["outcome"] == "FAIL"


def test_the_merge_keeps_every_inputs_case_sources(tmp_path: Path) -> None:
    library = {"directory": "/ci/a/autograd-conformance", "git_revision": "abc",
               "reason": None}
    mine = {"directory": "/ci/a/myproj", "git_revision": None,
            "reason": "fatal: not a git repository"}
    elsewhere = {**library, "directory": "/ci/b/autograd-conformance"}
    one = write(tmp_path / "one", [item("a")], case_sources=[library, mine],
                git_revision="abc")
    two = write(tmp_path / "two", [item("a")], case_sources=[elsewhere, mine],
                git_revision="abc")
    cli.main(["merge", str(one), str(two), "--out", str(tmp_path / "m")])
    data = json.loads((tmp_path / "m" / "conformance.json").read_text())
    jsonschema.validate(data, SCHEMA)
    assert data["run_info"]["case_sources"] == [library, mine, elsewhere]
    assert data["run_info"]["git_revision"] == "abc"
    old = write(tmp_path / "old", [item("a")])  # a report from before case_sources
    assert merge([old, old])[0]["run_info"]["case_sources"] is None
