"""A report set is whole or not written at all, and `run`'s last line says what this run
wrote: a full disk (`ulimit -f`), a rename or a file creation failing midway, a directory that
refuses new files, and a run refused because another holds the directory."""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from conformance.report import directory as report_dir
from conformance.report import files as report
from conformance.report.hit_rates import HitRates
from tests.case_files import write_cases

ROOT = Path(__file__).resolve().parents[2]
SET = ["conformance.json", "index.html", "summary.md"]


def record(verdict: str) -> dict[str, Any]:
    return {"id": "cases/ops/exp.yaml::cpu-float32", "file": "cases/ops/exp.yaml",
            "features": ["ops"], "device": "cpu", "dtype": "float32", "engine": "e",
            "verdict": verdict, "pytest_outcome": "passed" if verdict == "pass" else "failed",
            "reason": ""}


def write(directory: Path, verdict: str) -> list[Path]:
    return report.write(directory, [record(verdict)], engine="reference_engine",
                        started=report.now(), profile="ci", generated=HitRates())


def contents(directory: Path) -> dict[str, bytes]:
    """Every entry of the directory (temporaries and kept copies too) with its bytes; the
    lock file's (the pid of the run that last held it) aside."""
    return {p.name: b"" if p.name == report_dir.LOCK_NAME else p.read_bytes()
            for p in sorted(directory.iterdir())}


def test_a_rename_failing_midway_puts_the_old_files_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "pass")
    before = contents(tmp_path)
    real = os.replace
    calls: list[str] = []

    def second_fails(src: str, dst: str) -> None:
        calls.append(str(dst))
        if len(calls) == 2:  # the first file of the new set is already in place
            raise OSError(errno.EIO, "Input/output error")
        real(src, dst)

    monkeypatch.setattr(os, "replace", second_fails)
    with pytest.raises(report.NotWritten, match=r"could not be written to .*Input/output "
                                                r"error.*left as it was") as info:
        write(tmp_path, "diverges")
    assert info.value.status.startswith("FAIL: 1 diverges")
    assert Path(calls[0]).name == "conformance.json" and len(calls) >= 3  # put back
    assert contents(tmp_path) == before  # the old set, whole; no temporary left


def test_a_file_that_cannot_be_created_midway_leaves_the_old_set_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "pass")
    before = contents(tmp_path)
    real = tempfile.mkstemp

    def no_html(*args: Any, **kwargs: Any) -> tuple[int, str]:
        if str(kwargs.get("prefix", "")).startswith(".index.html"):  # the last of the set
            raise PermissionError(errno.EPERM, "Operation not permitted")
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", no_html)
    with pytest.raises(report.NotWritten, match=r"\[Errno 1\] Operation not permitted"):
        write(tmp_path, "diverges")
    assert contents(tmp_path) == before


def test_a_new_set_in_an_empty_directory_is_all_or_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.replace
    calls: list[str] = []

    def third_fails(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", third_fails)
    with pytest.raises(report.NotWritten, match="No space left on device"):
        write(tmp_path / "new", "pass")
    assert contents(tmp_path / "new") == {}  # the two renamed in are gone again
    monkeypatch.undo()
    assert [p.name for p in write(tmp_path / "new", "pass")] == [
        "conformance.json", "summary.md", "index.html"]
    assert sorted(contents(tmp_path / "new")) == SET


# ---- `autograd-conformance run` in a user's directory ------------------------------------

def run(cwd: Path, *args: str, file_size: int | None = None, patch: str = ""
        ) -> subprocess.CompletedProcess[str]:
    """`autograd-conformance run --engine torch --no-generated --workers 1 ARGS` in `cwd`;
    with `file_size`, under that limit of bytes per written file (`ulimit -f`, as a full disk
    refuses a write); `patch`: Python run in the controller first (a fault to inject)."""
    def limit() -> None:
        if file_size is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTEST_") and k != "AUTOGRAD_CONFORMANCE_PROFILE"}
    code = (f"{patch}\nimport sys\nfrom conformance.cli import main\n"
            "sys.exit(main(sys.argv[1:]))")
    return subprocess.run(
        [sys.executable, "-c", code, "run", "--engine", "torch", "--no-generated",
         "--workers", "1", "--report-dir", "out", *args],
        cwd=cwd, env=env, capture_output=True, text=True, check=False, preexec_fn=limit)


def last_line(result: subprocess.CompletedProcess[str]) -> str:
    return result.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's directory with two cases and the report of a first run in out/: made once
    (a run is a few seconds of CPU), copied for each test."""
    directory = tmp_path_factory.mktemp("first_run")
    write_cases(directory, "exp", "sin")
    first = run(directory)
    assert first.returncode == 0, first.stdout + first.stderr
    assert last_line(first).endswith("; report in out/")
    assert sorted(p.name for p in (directory / "out").iterdir()) == [".lock", *SET]
    return directory


@pytest.fixture
def project(first_run: Path, tmp_path: Path) -> Path:
    """A copy of `first_run`'s directory, its report byte for byte, and a third case."""
    shutil.copytree(first_run, tmp_path, dirs_exist_ok=True)
    write_cases(tmp_path, "tanh")  # the next run's report differs
    return tmp_path


def test_a_full_disk_leaves_the_old_report_whole_and_says_so(project: Path) -> None:
    before = contents(project / "out")
    size = len(before["index.html"])
    assert len(before["conformance.json"]) < size // 4 and len(before["summary.md"]) < size // 4
    # room for the new conformance.json and summary.md, not for index.html
    result = run(project, file_size=size // 2)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert contents(project / "out") == before  # no file of the new set, no temporary
    assert "conformance report NOT written: the report could not be written to out/ " \
           "([Errno 27] File too large); out/ is left as it was" in result.stdout
    assert last_line(result) == (
        "autograd-conformance: engine torch vs torch "
        f"{json.loads(before['conformance.json'])['run_info']['torch_version']}: NOT WRITTEN: "
        "3 pass of 3 collected; 3 executed; the report could not be written to out/ "
        "([Errno 27] File too large); out/ is left as it was (pytest exit code 3)")


def test_a_directory_that_refuses_new_files_is_not_reported_as_written(
        project: Path) -> None:
    """As an immutable directory (chattr +i) does: its files stay writable, no file can be
    made in it. Tests run as root, whom chmod does not stop, so the refusal is injected."""
    before = contents(project / "out")
    refuse = ("import errno, tempfile\n_mkstemp = tempfile.mkstemp\n"
              "def refuse(*args, dir=None, **kwargs):\n"
              "    if dir is not None and str(dir).endswith('out'):\n"
              "        raise PermissionError(errno.EPERM, 'Operation not permitted')\n"
              "    return _mkstemp(*args, dir=dir, **kwargs)\n"
              "tempfile.mkstemp = refuse\n")
    result = run(project, patch=refuse)
    assert result.returncode == 3, result.stdout + result.stderr
    assert contents(project / "out") == before
    line = last_line(result)
    assert "report in" not in line and "PASS" not in line
    assert line.endswith(": NOT WRITTEN: 3 pass of 3 collected; 3 executed; the report could "
                         "not be written to out/ ([Errno 1] Operation not permitted); out/ is "
                         "left as it was (pytest exit code 3)")


def test_a_run_refused_the_directory_never_shows_the_other_runs_status(
        project: Path) -> None:
    other = report_dir.ReportLock(project / "out")  # another run, writing its report now
    other.acquire()
    try:
        write(project / "out", "pass")  # the other run's fresh, passing report
        before = contents(project / "out")
        result = run(project)
    finally:
        other.release(wrote=True)
    assert result.returncode == 4, result.stdout + result.stderr
    assert contents(project / "out") == before
    assert "PASS" not in result.stdout
    assert last_line(result) == (
        f"autograd-conformance: engine torch: REFUSED, no report written: --conformance-report "
        f"out: another run (pid {os.getpid()}) is writing its report there; wait for it to "
        "finish, or give this run a directory of its own (--conformance-report OTHER_DIR, or "
        "autograd-conformance run --report-dir OTHER_DIR) (pytest exit code 4)")
