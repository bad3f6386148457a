"""Limits that cannot be lost (conformance.run.blackbox): an item whose process dies under it is
recorded with its id, its case file:line and the cause, under xdist (`pytest -n 2`, `run
--workers 2`) in every report, and on stderr in a single process.

One way of dying per engine op (tests/conformance/engine_dies.py): `exp` hangs in C code
holding the GIL (only the watchdog ends it), `sin` segfaults, `cos` is SIGKILLed (as by the
OOM killer), `log` calls os._exit(3). Every run is a subprocess whose output is read to its
end (the sentinel of a single process holds stderr until it has spoken): nothing here
depends on timing; the hang never returns at all."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = "tests.conformance.engine_dies"
CASE = """\
description: {op} of a random tensor
features: [ops]
devices: [cpu]
program: |
  a = torch.rand(3)
  b = torch.{op}(a)
"""
# the cause each op gives, as a pattern (a worker's id is whichever xdist chose)
WORKER = r"worker 'gw\d+'"
CAUSES = {
    "exp": r"the item cases/family/exp.yaml::cpu-float32 ran longer than the time limit of "
           rf"1 s \(--item-timeout\), and could not be interrupted: the watchdog ended {WORKER}",
    "sin": rf"{WORKER} crashed \(signal 11, SIGSEGV\)",
    "cos": rf"{WORKER} crashed \(signal 9, SIGKILL\)",
    "log": rf"{WORKER} crashed \(exit code 3\)",
}
WAYS = list(CAUSES)


def project(tmp_path: Path, ops: tuple[str, ...]) -> Path:
    """A directory with a case file per op in `ops`, each calling it at line 6."""
    for op in ops:
        path = tmp_path / "cases" / "family" / f"{op}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(CASE.format(op=op))
    return tmp_path


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`args` run with this checkout on the path (the engine module is in tests/); output is
    read until every holder of the pipes (the process, a sentinel) has closed them."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTEST_") and k != "AUTOGRAD_CONFORMANCE_PROFILE"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)


def reason_of(op: str) -> str:
    """The reason an item whose process died in `op` must have: where, on what, why."""
    return (rf"stopped at cases/family/{op}.yaml:6 `b = torch.{op}\(a\)` on {ENGINE}: "
            + CAUSES[op])


def records(cwd: Path) -> dict[str, dict[str, Any]]:
    report = json.loads((cwd / "out" / "conformance.json").read_text())
    return {r["id"]: r for r in report["items"]}


# one xdist run per launcher holds every way of dying (a worker dies, is replaced, the run goes
# on): each way is asserted on its own, by name
LAUNCHERS = {
    "pytest -n 2": ("pytest", "cases", "-n", "2", "--conformance-report", "out",
                    "-p", "no:cacheprovider"),
    "run --workers 2": ("conformance.cli", "run", "cases", "--no-generated", "--workers", "2",
                        "--report-dir", "out"),
}


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_an_item_whose_worker_dies_is_recorded_with_its_line_and_cause(
        tmp_path: Path, launcher: str) -> None:
    cwd = project(tmp_path, (*WAYS, "tanh"))  # tanh: real torch, passes
    result = run(cwd, *LAUNCHERS[launcher], "--engine", ENGINE, "--item-timeout", "1")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    found = records(cwd)
    summary = (cwd / "out" / "summary.md").read_text()
    html = (cwd / "out" / "index.html").read_text()
    for op in WAYS:
        item = f"cases/family/{op}.yaml::cpu-float32"
        record = found[item]
        assert record["verdict"] == "error", op
        assert re.fullmatch(reason_of(op), record["reason"]), (op, record["reason"])
        # a watchdog's end is the item's timeout (which the expectations may allow); a
        # crash has no status of the runner's
        assert record.get("status") == ("timeout" if op == "exp" else None), op
        # summary.md, the HTML report and the terminal give the same account
        account = f"{re.escape(item)}: error: {reason_of(op)}"
        assert re.search(account, summary), (op, summary)
        assert re.search(account, result.stdout), (op, output)
        assert json.dumps(record["reason"])[1:-1] in html, op
    # the watchdog's dump of the worker's threads goes with its item
    assert "the watchdog's dump of the worker's threads:\nTimeout (" in \
        found["cases/family/exp.yaml::cpu-float32"]["report"]
    assert found["cases/family/tanh.yaml::cpu-float32"]["verdict"] == "pass"
    # the status lines: summary.md's, and the last line `run` prints
    assert "**FAIL**: 4 error, 1 pass of 5 collected; 5 executed;" in summary
    if launcher.startswith("run"):
        last = result.stdout.strip().splitlines()[-1]
        assert ": FAIL: 4 error, 1 pass of 5 collected; 5 executed;" in last, output


@pytest.mark.parametrize("op", WAYS)
def test_a_single_process_that_dies_tells_where_and_why_on_stderr(
        tmp_path: Path, op: str) -> None:
    cwd = project(tmp_path, (op,))
    result = run(cwd, "pytest", "cases", "--engine", ENGINE, "--item-timeout", "1",
                 "-p", "no:cacheprovider")
    assert result.returncode != 0, result.stdout + result.stderr
    item = f"cases/family/{op}.yaml::cpu-float32"
    who = r"the process \(pid \d+\)"
    # the sentinel cannot know the exit status of a process that is not its child
    cause = (CAUSES[op].replace(WORKER, who) if op == "exp"
             else rf"{who} crashed \(its exit status is unknown\)")
    assert re.search(
        rf"autograd-conformance: {who} ended while running {re.escape(item)}: stopped at "
        rf"cases/family/{op}.yaml:6 `b = torch.{op}\(a\)` on {ENGINE}: {cause}\. No report "
        "was written", result.stderr), result.stderr


def test_the_watchdogs_end_is_a_timeout_an_entry_may_allow_and_a_crash_is_not(
        tmp_path: Path) -> None:
    # both items are listed as expected to time out: exp (the watchdog) does, sin (a
    # segfault) does not, and stays an error. Two workers: with one (-n 1) the replacement
    # workers start one after the other, and under load 25 the item took 905 s of wall time,
    # at pytest-timeout's backstop (two workers: 307 s at load 16; benchmarks/README.md)
    cwd = project(tmp_path, ("exp", "sin"))
    entry = '  - items: "cases/family/{op}.yaml::*"\n    status: timeout\n    reason: slow\n'
    (cwd / "known.yaml").write_text("known:\n" + entry.format(op="exp") + entry.format(op="sin"))
    result = run(cwd, "pytest", "cases", "-n", "2", "--conformance-report", "out",
                 "-p", "no:cacheprovider", "--engine", ENGINE, "--item-timeout", "1",
                 "--expectations", "known.yaml")
    assert result.returncode == 1, result.stdout + result.stderr
    found = records(cwd)
    exp, sin = (found[f"cases/family/{op}.yaml::cpu-float32"] for op in ("exp", "sin"))
    assert (exp["verdict"], exp["status"]) == ("known", "timeout")
    assert re.fullmatch(r"known timeout \(known.yaml:2\): slow \[" + reason_of("exp") + r"\]",
                        exp["reason"]), exp["reason"]
    assert sin["verdict"] == "error"
    assert re.fullmatch(reason_of("sin"), sin["reason"]), sin["reason"]


def test_a_generated_program_whose_worker_dies_names_its_statement(tmp_path: Path) -> None:
    cwd = project(tmp_path, ("tanh",))
    engine = "tests.conformance.engine_dies_on_tensor"
    # one worker: the generated item's worker dies whichever it is (two cost an interpreter)
    result = run(cwd, "conformance.cli", "run", "cases", "--engine", engine, "--workers", "1",
                 "--report-dir", "out")
    assert result.returncode == 1, result.stdout + result.stderr
    record = records(cwd)["conformance/generated_suite.py::"
                          "test_generated_programs_agree_with_torch"]
    assert record["verdict"] == "error"
    assert re.fullmatch(rf"stopped at statement [1-9]\d* \(statements numbered in order\) on "
                        rf"{engine}: {WORKER} crashed \(exit code 5\)", record["reason"]), \
        record["reason"]


# The project's conftest: imported by each process before its first item opens the box, so
# that its exit function runs after the box's (atexit: last in, first out). It writes which
# of the process's descriptors are still open on a watchdog dump file ("-": none).
OPEN_AT_EXIT = """\
import atexit, os

def _dump_files_open():
    names = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if ".watchdog" in target:  # (a removed file reads "... (deleted)")
            names.append(target)
    who = os.environ.get("PYTEST_XDIST_WORKER", "controller")
    with open(EXITS, "a") as f:
        f.write(f"{who} {' '.join(names) or '-'}\\n")

EXITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "exits.txt")
atexit.register(_dump_files_open)
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads /proc/self/fd")
def test_workers_that_end_normally_leave_no_unclosed_file(tmp_path: Path) -> None:
    # each worker's box has a dump file for the watchdog; it must be closed at the worker's
    # exit, not left for the interpreter to find (a ResourceWarning); one worker's exit shows
    # it as two would (-n 1: an interpreter less). Python's own warning did not tell: it was
    # never seen on the run's stderr with the file left open (atexit's close removed), nor
    # was a line a worker printed there at its exit; its shutdown's last steps are not
    # waited for (xdist kills a worker still ending 10 s after asking it to end). So each
    # process writes at its exit, right after the box's exit functions, which descriptors
    # are still open on a dump file, and the worker's line must be there.
    cwd = project(tmp_path, ("tanh", "sigmoid"))
    (cwd / "conftest.py").write_text(OPEN_AT_EXIT)
    result = run(cwd, "pytest", "cases", "-n", "1", "-p", "no:cacheprovider",
                 "-W", "always::ResourceWarning")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "2 passed" in result.stdout, output  # the worker ran the items: its box was open
    assert "gw0 -" in (cwd / "exits.txt").read_text().splitlines(), output
    assert "ResourceWarning" not in output, output
