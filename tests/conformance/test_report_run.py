"""Reports are as honest as the run: a file that failed to load, an interrupted or stopped
run, a run that collected nothing, two runs into one directory (pytester projects)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

# pytester's in-process runs drop the modules they imported; torch must be imported once.
import torch  # noqa: F401

from conformance.report import directory as report_dir

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "conformance" / "report" / "schema" / "conformance.schema.json")
                    .read_text())
CASE = """\
description: exp and its grad
features: [grad_fn]
source: https://pytorch.org/docs/stable/generated/torch.exp.html
devices: [cpu]
dtypes: [float32]
program: |
  a = torch.tensor([1.0, 2.0], requires_grad=True)
  b = torch.exp(a)
  b.sum().backward()
"""
DOUBLE = CASE.replace("torch.exp(a)", "a * 2")
BROKEN = CASE.replace("b.sum()", "b.sum(")  # a syntax error on line 9 of the file


def make(pytester: pytest.Pytester, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = pytester.path / "cases" / "f" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def read(pytester: pytest.Pytester, directory: str = "out") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pytester.path / directory / "conformance.json")
                                      .read_text())
    jsonschema.validate(data, SCHEMA)
    return data


def run(pytester: pytest.Pytester, xdist: list[str], *args: str) -> pytest.RunResult:
    if xdist:
        return pytester.runpytest_subprocess(*args, *xdist)
    # in-process, pytester would re-raise the run's KeyboardInterrupt in this test
    return pytester.runpytest_inprocess(*args, no_reraise_ctrlc=True)


@pytest.fixture(params=[False, True], ids=["in-process", "xdist"])
def xdist(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """-n 2 (its workers import this project's test engines, so they get its root on their
    path), or no xdist and an in-process run."""
    if request.param:
        monkeypatch.setenv("PYTHONPATH", str(ROOT))
        return ["-n", "2"]
    return []


def test_a_broken_case_file_is_an_error_in_every_report(pytester: pytest.Pytester,
                                                       xdist: list[str]) -> None:
    make(pytester, {"exp.yaml": CASE, "double.yaml": DOUBLE, "broken.yaml": BROKEN})
    result = run(pytester, xdist, "cases", "--engine", "torch", "--conformance-report", "out",
                 "--continue-on-collection-errors")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    data = read(pytester)
    broken = [r for r in data["items"] if r["file"] == "cases/f/broken.yaml"]
    assert len(broken) == 1, data["items"]
    assert broken[0]["verdict"] == "error" and broken[0]["device"] is None
    assert broken[0]["line"] == 9 and "syntax error" in broken[0]["message"]
    line = "FAIL: 1 error (1 file failed to load), 2 pass of 2 collected; 2 executed; " \
           "pytest exit status 1"
    assert data["status"] == {"outcome": "FAIL", "line": line}
    assert data["run_info"]["collected"] == data["run_info"]["executed"] == 2
    summary = (pytester.path / "out" / "summary.md").read_text()
    assert summary.splitlines()[0] == "**FAIL**: " + line.split(": ", 1)[1]
    assert "- `cases/f/broken.yaml:9`: syntax error" in summary
    page = (pytester.path / "out" / "index.html").read_text()
    blob = json.loads(page.split('id="report-data">')[1].split("</script>")[0])
    assert blob["status"]["line"] == line
    assert [r["id"] for r in blob["items"] if r["verdict"] == "error"] == ["cases/f/broken.yaml"]
    result.stdout.fnmatch_lines(["*" + line + "*"])  # and on the terminal


def test_a_python_module_that_fails_to_collect_is_an_error_record_too(
        pytester: pytest.Pytester) -> None:
    # not a case file: its record is read from pytest's text (the last line of the traceback)
    make(pytester, {"exp.yaml": CASE})
    pytester.makepyfile(test_broken="import no_such_module_here\n")
    result = run(pytester, [], "cases", "test_broken.py", "--engine", "torch",
                 "--conformance-report", "out", "--continue-on-collection-errors")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    errors = [r for r in read(pytester)["items"] if r["verdict"] == "error"]
    assert [(r["id"], r["device"]) for r in errors] == [("test_broken.py", None)]
    assert "no_such_module_here" in errors[0]["message"]


@pytest.mark.usefixtures("ctrl_c")  # tests/ctrl_c.py
def test_a_ctrl_c_during_an_item_gives_an_incomplete_report(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    make(pytester, {"a.yaml": DOUBLE, "b.yaml": CASE, "c.yaml": DOUBLE, "d.yaml": DOUBLE})
    result = run(pytester, xdist, "cases", "--engine", "tests.conformance.engine_interrupt",
                 "--conformance-report", "out")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data = read(pytester)
    info = data["run_info"]
    assert info["interrupted"] is True and info["exit_status"] == 2
    assert info["collected"] == 4
    verdicts = {r["id"]: r["verdict"] for r in data["items"]}
    if xdist:  # the worker that was interrupted is gone: its item is an error
        assert verdicts.pop("cases/f/b.yaml::cpu-float32") == "error"
        assert "keyboard-interrupt" in info["interruption"]
    else:  # the interrupted item has no verdict, and did not execute
        assert "cases/f/b.yaml::cpu-float32" not in verdicts and info["executed"] < 4
        # the item that was running is named (which item hung, when a run is stopped)
        assert info["interruption"] == ("KeyboardInterrupt; running then: "
                                        "cases/f/b.yaml::cpu-float32")
    assert set(verdicts.values()) <= {"pass"}
    assert data["status"]["outcome"] == "INCOMPLETE"
    assert "; interrupted" in data["status"]["line"]
    summary = (pytester.path / "out" / "summary.md").read_text()
    assert summary.startswith("**INCOMPLETE**: ")


def test_a_terminated_run_still_writes_an_incomplete_report(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the subprocess imports the test engine
    make(pytester, {"a.yaml": DOUBLE, "b.yaml": CASE, "c.yaml": DOUBLE})
    result = pytester.runpytest_subprocess("cases", "--engine",
                                           "tests.conformance.engine_sigterm",
                                           "--conformance-report", "out")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data = read(pytester)
    assert data["status"]["line"] == ("INCOMPLETE: 1 pass of 3 collected; 1 executed; "
                                      "interrupted (terminated (SIGTERM); running then: "
                                      "cases/f/b.yaml::cpu-float32); pytest exit status 2")
    for page in ("summary.md", "index.html"):  # every report names the item that was running
        assert "cases/f/b.yaml::cpu-float32" in (pytester.path / "out" / page).read_text()


def test_a_run_stopped_by_maxfail_is_incomplete(pytester: pytest.Pytester) -> None:
    make(pytester, {"a.yaml": CASE, "b.yaml": CASE, "c.yaml": CASE})
    result = pytester.runpytest("cases", "--engine", "tests.conformance.engine_wrong_exp",
                                "--conformance-report", "out", "-x")
    result.assert_outcomes(failed=1)
    data = read(pytester)
    assert data["run_info"]["interruption"] == "stopping after 1 failures"
    assert data["run_info"]["options"]["maxfail"] == 1
    assert data["status"]["line"] == ("INCOMPLETE: 1 diverges of 3 collected; 1 executed; "
                                      "interrupted (stopping after 1 failures); pytest exit "
                                      "status 1")


def test_run_info_records_the_options_that_shape_the_verdict(pytester: pytest.Pytester
                                                             ) -> None:
    make(pytester, {"exp.yaml": CASE, "double.yaml": DOUBLE})
    result = pytester.runpytest("cases", "--engine", "torch", "--conformance-report", "out",
                                "-k", "double", "-m", "grad_fn", "--lenient-messages")
    result.assert_outcomes(passed=1)
    data = read(pytester)
    assert data["run_info"]["options"] == {
        "keyword": "double", "markexpr": "grad_fn", "lenient_messages": True,
        "strict_expectations": False, "devices": None, "maxfail": 0, "opinfo_samples": 0}
    assert data["status"] == {"outcome": "PASS",
                              "line": "PASS: 1 pass of 1 collected; 1 executed"}
    assert data["items"][0]["description"] == "exp and its grad"
    assert data["items"][0]["source"].startswith("https://pytorch.org/")


def test_a_run_that_collected_nothing_writes_nothing(pytester: pytest.Pytester) -> None:
    make(pytester, {"exp.yaml": CASE})
    pytester.runpytest("cases", "--engine", "torch", "--conformance-report", "out")
    before = (pytester.path / "out" / "conformance.json").read_bytes()
    result = pytester.runpytest("cases", "--engine", "torch", "--conformance-report", "out",
                                "-k", "no_such_case")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["*conformance report: no item was collected; out/ left as "
                                 "it was*"])
    assert (pytester.path / "out" / "conformance.json").read_bytes() == before
    result = pytester.runpytest("cases", "--engine", "torch", "--conformance-report", "out",
                                "--collect-only")
    result.stdout.fnmatch_lines(["*conformance report: nothing ran (--collect-only)*"])
    assert (pytester.path / "out" / "conformance.json").read_bytes() == before
    # a directory the run would have made is not left behind either
    pytester.runpytest("cases", "--engine", "torch", "--conformance-report", "fresh",
                       "-k", "no_such_case")
    assert not (pytester.path / "fresh").exists()


def test_a_second_run_into_a_busy_report_directory_is_refused(pytester: pytest.Pytester
                                                              ) -> None:
    make(pytester, {"exp.yaml": CASE})
    lock = report_dir.ReportLock(pytester.path / "out")  # as a first run holds it
    lock.acquire()
    try:
        result = pytester.runpytest("cases", "--engine", "torch", "--conformance-report",
                                    "out")
    finally:
        lock.release(wrote=False)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        f"*--conformance-report out: another run (pid {os.getpid()}) is "
        "writing its report there; wait for it to finish, or give this run a directory of "
        "its own (--conformance-report OTHER_DIR*"])
    assert not (pytester.path / "out" / "conformance.json").exists()
    # once the first run is done, the directory is free again
    result = pytester.runpytest("cases", "--engine", "torch", "--conformance-report", "out")
    result.assert_outcomes(passed=1)
    assert read(pytester)["status"]["outcome"] == "PASS"


class _Config:
    """Just enough of pytest.Config for plugin.options.run_options."""

    def __init__(self, **values: Any) -> None:
        self.values = values

    def getoption(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def getini(self, name: str) -> Any:
        # the project's ini default, as a plugin without pyproject.toml's line reads it
        return {"conformance_opinfo_samples": "0"}[name]


def test_options_record_devices_when_the_plugin_has_the_option() -> None:
    from conformance.plugin.options import run_options

    given = {"--lenient-messages": False, "--strict-expectations": True}
    config: Any = _Config(**given, **{"--devices": "cpu, cuda"})
    assert run_options(config)["devices"] == ["cpu", "cuda"]
    assert run_options(config)["strict_expectations"] is True
    config = _Config(**given)  # a plugin without --devices: every device
    assert run_options(config)["devices"] is None
