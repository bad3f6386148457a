"""Item ids never move (conformance/case/paths.py): a case file's id is its path relative to its
project, whatever the working directory and the other paths given; a file that fails to
load does not stop plain pytest; rerun commands work where the run started."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

# pytester's in-process runs drop the modules they imported; torch must be imported once.
import torch  # noqa: F401

from conformance.case import paths
from tests.conformance.test_plugin import BAD, GOOD

WRONG_EXP = "tests.conformance.engine_wrong_exp"
ID = "cases/family/exp.yaml"
IDS = [f"{ID}::{d}-{t}" for d in ("cpu", "cuda") for t in ("float32", "float64")]


def write_case(directory: Path, relative: str = "cases/family/exp.yaml",
               text: str = GOOD) -> Path:
    path = directory / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    result = pytester.runpytest(*args, "--collect-only", "-q")
    assert result.ret == 0, result.stdout.str()
    return [line for line in result.outlines if "::" in line]


@pytest.mark.parametrize("marker", ["pyproject.toml", ".git/HEAD", "setup.cfg"])
def test_ids_are_relative_to_the_project_from_anywhere(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, marker: str) -> None:
    project = pytester.path / "project"
    write_case(project)
    (project / marker).parent.mkdir(exist_ok=True)
    (project / marker).write_text("")  # a pytest configuration or not: the project's root
    database, reports = pytester.path / "db", pytester.path / "rd"
    database.mkdir()
    reports.mkdir()
    monkeypatch.chdir(project)
    assert collected(pytester, "cases") == IDS
    # existing directories given to options used to move pytest's rootdir, and the ids
    assert collected(pytester, "cases", "--hypothesis-db", str(database),
                     "--conformance-report", "../rd") == IDS
    assert collected(pytester, "cases/family/exp.yaml") == IDS
    monkeypatch.chdir(project / "cases")
    assert collected(pytester, "family") == IDS
    monkeypatch.chdir(pytester.path)
    assert collected(pytester, "project/cases", "--hypothesis-db", "db") == IDS
    assert collected(pytester, str(project / "cases" / "family")) == IDS


def test_a_file_in_no_project_is_named_from_the_working_directory(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    user = pytester.path / "user"
    write_case(user, "mine/deeper/exp.yaml")
    (pytester.path / "db").mkdir()
    (pytester.path / "rd").mkdir()
    monkeypatch.chdir(user)
    expected = [i.replace(ID, "mine/deeper/exp.yaml") for i in IDS]
    assert collected(pytester, "mine") == expected
    assert collected(pytester, "mine/deeper") == expected
    assert collected(pytester, "mine", "--hypothesis-db", "../db", "--conformance-report",
                     "../rd") == expected
    # outside the working directory: from the parent of the path named
    monkeypatch.chdir(pytester.path / "db")
    assert collected(pytester, "../user/mine") == expected


def test_the_case_ids_rule() -> None:
    root = Path("/nonexistent/for/ids")  # no project files anywhere above it
    ids = paths.CaseIds([root / "work" / "mine", root / "lib/cases"], root / "work")
    assert ids.of(root / "work/mine/a/x.yaml") == "mine/a/x.yaml"
    assert ids.of(root / "lib/cases/ops/y.yaml") == "cases/ops/y.yaml"
    # this repository's cases: relative to its root, from anywhere
    library = Path(__file__).resolve().parents[2] / "cases"
    assert paths.CaseIds([library / "ops"], root).of(library / "ops" / "exp.yaml") == \
        "cases/ops/exp.yaml"
    assert paths.rerun_path(root / "lib/x.yaml", root / "work") == "../lib/x.yaml"
    assert paths.rerun_path("/nonexistent/x.yaml", "/tmp/y") == "/nonexistent/x.yaml"


def test_two_files_with_one_id_are_refused(pytester: pytest.Pytester) -> None:
    for name in ("one", "two"):
        write_case(pytester.path / name)
        (pytester.path / name / "pyproject.toml").write_text("")
    result = pytester.runpytest("one/cases", "two/cases", "--engine", "torch")
    result.assert_outcomes(passed=2, skipped=2, errors=1)
    result.stdout.fnmatch_lines([f"*{ID}: {pytester.path / 'one' / ID} has the same id*"])


def test_a_case_file_that_fails_to_load_does_not_stop_plain_pytest(
        pytester: pytest.Pytester) -> None:
    # a user's project: no --continue-on-collection-errors in its configuration
    write_case(pytester.path)
    broken, expected = BAD["unknown_key.yaml"]
    write_case(pytester.path, "cases/family/broken.yaml", broken)
    result = pytester.runpytest("cases", "--engine", "torch", "--conformance-report", "out")
    result.assert_outcomes(passed=2, skipped=2, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "Interrupted" not in result.stdout.str()
    assert f"cases/family/{expected.replace('unknown_key', 'broken')}" in result.stdout.str()
    report = json.loads((pytester.path / "out" / "conformance.json").read_text())
    assert report["status"]["line"].startswith(
        "FAIL: 1 error (1 file failed to load), 2 pass, 2 skipped of 4 collected")
    # -x still stops at the first failure, a file that fails to load included
    result = pytester.runpytest("cases", "--engine", "torch", "-x")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(errors=1)
    # a test module that fails to import still stops the run, as pytest is configured
    pytester.makepyfile(test_broken="import no_such_module_here\n")
    result = pytester.runpytest("cases", "test_broken.py", "--engine", "torch")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*Interrupted: 2 errors during collection*"])


def test_the_rerun_command_works_where_the_run_started(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    library = pytester.path / "library"
    write_case(library)
    (library / "pyproject.toml").write_text("")
    user = pytester.path / "user"
    write_case(user, "mine/exp.yaml")
    monkeypatch.chdir(user)
    result = pytester.runpytest("mine", "../library/cases", "--engine", WRONG_EXP,
                                "--conformance-report", "out")
    result.assert_outcomes(failed=4, skipped=4)
    out = result.stdout.str()
    # the failures section only: under CI=true pytest repeats whole messages in its short
    # summary, so each line would be there twice
    failures = out.split("short test summary info")[0].splitlines()
    reruns = [line.split("rerun: ", 1)[1] for line in failures if "rerun: " in line]
    assert sorted(reruns) == sorted(
        f"pytest {path}::cpu-{t} --engine {WRONG_EXP}" for t in ("float32", "float64")
        for path in ("mine/exp.yaml", "../library/cases/family/exp.yaml"))
    assert f"{ID}::cpu-float32: {WRONG_EXP} diverges from torch" in out
    records = json.loads((user / "out" / "conformance.json").read_text())["items"]
    assert sorted(r["id"] for r in records) == sorted(
        [*IDS, *(i.replace(ID, "mine/exp.yaml") for i in IDS)])
    assert {r["repro"] for r in records if r.get("repro")} == set(reruns)
    for rerun in reruns:  # pasted in the same directory: the same item fails again
        result = pytester.runpytest(*shlex.split(rerun)[1:])
        result.assert_outcomes(failed=1)
        assert f"rerun: {rerun}" in result.stdout.str()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_run_info_records_each_case_sources_git_revision(pytester: pytest.Pytester) -> None:
    tracked, untracked = pytester.path / "tracked", pytester.path / "untracked"
    write_case(tracked)
    write_case(untracked)
    (untracked / "setup.cfg").write_text("")

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              cwd=tracked, check=True, capture_output=True,
                              text=True).stdout.strip()

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "cases")
    revision = git("rev-parse", "HEAD")
    pytester.runpytest("tracked/cases", "untracked/cases", "--engine", "torch",
                       "--conformance-report", "out")
    info = json.loads((pytester.path / "out" / "conformance.json").read_text())["run_info"]
    assert info["git_revision"] == revision
    sources = {s["directory"]: s for s in info["case_sources"]}
    assert sources[str(tracked)] == {"directory": str(tracked), "git_revision": revision,
                                     "reason": None}
    assert sources[str(untracked)]["git_revision"] is None
    assert "not a git repository" in sources[str(untracked)]["reason"]
