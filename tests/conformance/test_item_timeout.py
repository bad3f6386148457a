"""`--item-timeout` end to end (pytester): an engine op that never returns ends its item with
an `error` verdict, in process when the timer's signal can interrupt it, and through the
watchdog (the worker process ends, xdist replaces it) when it cannot. Neither test depends on
timing: the engines here never return at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# pytester's in-process runs drop the modules they imported; torch's C extension cannot be
# imported twice in one process, so it is imported here, once, first.
import torch  # noqa: F401

CASE = """\
description: exp of a random tensor
features: [ops]
devices: [cpu]
program: |
  a = torch.rand(3)
  b = torch.exp(a)
"""
# Runs after hang.yaml (xdist -n 1 keeps file order): the run goes on past the hang.
LATER = CASE.replace("torch.exp(a)", "a * 2")


def make_cases(pytester: pytest.Pytester, *, later: bool = False) -> None:
    for name, text in (("hang.yaml", CASE), ("later.yaml", LATER))[:2 if later else 1]:
        path = pytester.path / "cases" / "family" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def verdicts(pytester: pytest.Pytester) -> dict[str, dict[str, str]]:
    report = json.loads((pytester.path / "out" / "conformance.json").read_text())
    return {item["id"]: item for item in report["items"]}


def test_the_timer_ends_an_item_whose_engine_op_never_returns(
        pytester: pytest.Pytester) -> None:
    make_cases(pytester)
    # the limit must outlast torch's run of the program, which comes first
    result = pytester.runpytest("cases", "--engine", "tests.conformance.engine_hangs",
                                "--item-timeout", "1", "--conformance-report", "out",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*cases/family/hang.yaml::cpu-float32: error: stopped at cases/family/hang.yaml:6 "
        "`b = torch.exp(a)` on tests.conformance.engine_hangs: the item "
        "cases/family/hang.yaml::cpu-float32 ran longer than the time limit of 1 s "
        "(--item-timeout)*"])
    assert verdicts(pytester)["cases/family/hang.yaml::cpu-float32"]["verdict"] == "error"


def test_the_watchdog_ends_a_worker_the_timer_cannot_interrupt(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # the workers are new processes: they import the engine from the project root
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    make_cases(pytester, later=True)
    result = pytester.runpytest_subprocess(
        "cases", "--engine", "tests.conformance.engine_hangs_uninterruptibly",
        "--item-timeout", "1", "-n", "1", "--conformance-report", "out")
    assert result.ret != 0
    items = verdicts(pytester)
    hang = items["cases/family/hang.yaml::cpu-float32"]
    assert hang["verdict"] == "error"
    # the worker's black box names the line and the limit (conformance.run.blackbox)
    assert hang["reason"].startswith(
        "stopped at cases/family/hang.yaml:6 `b = torch.exp(a)` on tests.conformance."
        "engine_hangs_uninterruptibly: the item cases/family/hang.yaml::cpu-float32 ran longer "
        "than the time limit of 1 s (--item-timeout), and could not be interrupted: the "
        "watchdog ended worker 'gw"), hang["reason"]
    assert hang["status"] == "timeout"
    # a verdict of its own (with this tiny limit, on a busy machine it may time out too)
    assert items["cases/family/later.yaml::cpu-float32"]["verdict"] in ("pass", "error")


SWALLOWS = """\
description: {op} of ones
features: [ops]
devices: [cpu]
program: |
  a = torch.ones(3)
  b = torch.{op}(a)
"""
ENGINE = "tests.conformance.engine_swallows_timeout"


@pytest.mark.parametrize("xdist", [False, True], ids=["in-process", "xdist"])
def test_a_timeout_python_swallows_still_ends_the_item_with_its_record(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: bool) -> None:
    # In each item the timer's signal lands first where Python swallows what it raises: a gc
    # callback (exp), a __del__ (sin), a weakref callback (cos); then the engine loops forever.
    ops = ("exp", "sin", "cos")
    for op in ops:
        path = pytester.path / "cases" / "family" / f"{op}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SWALLOWS.format(op=op))
    args = ("cases", "--engine", ENGINE, "--item-timeout", "1", "--conformance-report", "out",
            "-p", "no:cacheprovider")
    log = pytester.path / "swallowed.txt"
    monkeypatch.setenv("SWALLOWED_LOG", str(log))
    if xdist:
        monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
        # one worker: each timeout ends its item in the worker, which goes on to the next (no
        # worker dies); a second worker only cost an interpreter
        result = pytester.runpytest_subprocess(*args, "-n", "1")
    else:
        result = pytester.runpytest(*args)
    result.assert_outcomes(failed=3)  # and no error beside: see limits.deadline._unraisable
    result.stdout.fnmatch_lines(["FAIL: 3 error of 3 collected; 3 executed; *"])
    items = verdicts(pytester)
    for op in ops:
        id_ = f"cases/family/{op}.yaml::cpu-float32"
        assert items[id_]["verdict"] == "error"
        assert items[id_]["reason"] == (
            f"stopped at cases/family/{op}.yaml:6 `b = torch.{op}(a)` on {ENGINE}: the item "
            f"{id_} ran longer than the time limit of 1 s (--item-timeout)")
    # the first timeout of each landed where Python swallows it, and the item still ended
    assert sorted(set(log.read_text().splitlines())) == [
        "__del__: ItemTimeout", "gc callback: ItemTimeout", "weakref callback: ItemTimeout"]


def test_pytest_timeouts_smaller_limit_wins_and_is_named(pytester: pytest.Pytester) -> None:
    make_cases(pytester)
    result = pytester.runpytest("cases", "--engine", "tests.conformance.engine_hangs",
                                "--timeout", "2", "--item-timeout", "60",
                                "--conformance-report", "out", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert verdicts(pytester)["cases/family/hang.yaml::cpu-float32"]["reason"] == (
        "stopped at cases/family/hang.yaml:6 `b = torch.exp(a)` on "
        "tests.conformance.engine_hangs: the item cases/family/hang.yaml::cpu-float32 ran "
        "into the time limit around it (pytest-timeout's --timeout)")
    assert "Timeout >2.0s" not in result.stdout.str()  # not a second time, by pytest-timeout
