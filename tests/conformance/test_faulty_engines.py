"""An engine that raises KeyboardInterrupt itself (no signal), SystemExit or MemoryError ends
its item as an `error` naming the case's file:line, with a one-line reason, and the run goes
on: in process, under xdist (`pytest -n 1`) and under `autograd-conformance run --workers 1`
(one worker meets every fault in turn). A real Ctrl-C (SIGINT) still ends the run, even one
the engine swallows (`-n 2`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest

# pytester's in-process runs drop the modules they imported; torch must be imported once.
import torch  # noqa: F401

from conformance.case.loader import load_case
from conformance.run.engine import load_engine
from conformance.run.runner import DIVERGES, ERROR, PASS, Item, run_item
from tests.case_files import CASE, write_cases
from tests.ctrl_c import ctrl_c_raises
from tests.test_cli_run import GENERATED_ID, run

ROOT = Path(__file__).resolve().parents[2]
ENGINE = "tests.conformance.engine_faults"
INTERRUPT = "tests.conformance.engine_interrupt"  # real signals: SIGINT, SIGTERM
FAULTS = ("exp", "sin", "cos")  # KeyboardInterrupt, SystemExit, MemoryError
# What each item's record says (cases written by tests.case_files: the op is on line 7).
REASONS = {
    "exp": "it raised KeyboardInterrupt, and no SIGINT or SIGTERM did (a real Ctrl-C ends "
           "the run)",
    "sin": "it raised SystemExit: 3 (an engine must not end the process)",
    "cos": "it raised MemoryError: engine_faults: cos ran out of memory",
}


def reason(op: str, engine: str = ENGINE) -> str:
    return (f"stopped at cases/family/{op}.yaml:7 `b = torch.{op}(a)` on {engine}: "
            f"{REASONS[op]}")


def item(op: str) -> Item:
    return Item(load_case(f"cases/family/{op}.yaml", CASE.format(op=op)), "cpu", "float32")


@pytest.mark.parametrize("op", FAULTS)
def test_an_engines_fault_is_its_items_error(op: str) -> None:
    result = run_item(item(op), load_engine(ENGINE))
    assert result.verdict == ERROR
    assert result.reason == reason(op)
    assert run_item(item("tanh"), load_engine(ENGINE)).verdict == PASS


@pytest.mark.parametrize(("op", "raised"), [
    ("tan", "EngineStop: engine_faults: tan stops"), ("sinh", "GeneratorExit")])
def test_any_other_base_exception_of_an_engines_is_its_items_error(op: str, raised: str
                                                                    ) -> None:
    """Round four: an engine's own BaseException subclass, or GeneratorExit, left run_item
    (and an in-process run) without a verdict."""
    result = run_item(item(op), load_engine(ENGINE))
    assert result.verdict == ERROR
    assert result.reason == (f"stopped at cases/family/{op}.yaml:7 `b = torch.{op}(a)` on "
                             f"{ENGINE}: it raised {raised}, a BaseException that is not an "
                             "Exception")
    assert run_item(item("tanh"), load_engine(ENGINE)).verdict == PASS


BAD_MESSAGES = "tests.conformance.engine_bad_messages"


@pytest.mark.parametrize(("op", "raised"), [
    ("exp", "StrRaises's str() raised ValueError"), ("tan", "StrNotText's str() raised TypeError"),
    ("sqrt", "StrRecurses's str() raised RecursionError")])
def test_an_engine_error_whose_message_cannot_be_read_is_its_items_divergence(
        op: str, raised: str) -> None:
    """Round five: an engine exception whose `__str__` raised crashed the harness (the
    ValueError of `__str__` left run_item)."""
    result = run_item(item(op), load_engine(BAD_MESSAGES))
    assert result.verdict == DIVERGES
    assert result.divergence is not None and result.divergence.field == "outcome.status"
    assert result.divergence.actual == (f"RuntimeError [unknown]: <the {raised} (the "
                                        "engine's message cannot be read)>")


@pytest.mark.parametrize(("op", "raised"), [
    ("sinh", "BaseStrRaises: <the BaseStrRaises's str() raised ValueError (the engine's "
             "message cannot be read)>, a BaseException that is not an Exception"),
    ("cosh", "MemoryStrRaises: <the MemoryStrRaises's str() raised ValueError (the engine's "
             "message cannot be read)>")])
def test_an_engine_fault_whose_message_cannot_be_read_is_its_items_error(op: str, raised: str
                                                                         ) -> None:
    result = run_item(item(op), load_engine(BAD_MESSAGES))
    assert result.verdict == ERROR
    assert result.reason == (f"stopped at cases/family/{op}.yaml:7 `b = torch.{op}(a)` on "
                             f"{BAD_MESSAGES}: it raised {raised}")


@pytest.mark.usefixtures("ctrl_c")  # tests/ctrl_c.py
def test_a_real_interrupt_passes_even_when_the_engine_swallows_it() -> None:
    with pytest.raises(KeyboardInterrupt):
        run_item(item("log"), load_engine(INTERRUPT))
    with pytest.raises(KeyboardInterrupt):  # not swallowed: passes as it was raised
        run_item(item("exp"), load_engine(INTERRUPT))


def records(directory: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    data = json.loads((directory / "conformance.json").read_text())
    return data, {r["id"]: r for r in data["items"]}


def assert_contained(directory: Path, engine: str = ENGINE, generated: int = 0) -> None:
    data, items = records(directory)
    assert sorted(items)[:4] == [f"cases/family/{op}.yaml::cpu-float32"
                                 for op in ("cos", "exp", "sin", "tanh")]
    assert len(items) == 4 + generated
    for op in FAULTS:
        record = items[f"cases/family/{op}.yaml::cpu-float32"]
        assert (record["verdict"], record["reason"]) == ("error", reason(op, engine)), op
    assert items["cases/family/tanh.yaml::cpu-float32"]["verdict"] == "pass"
    info = data["run_info"]
    assert not info["interrupted"] and info["executed"] == info["collected"] == 4 + generated
    assert data["status"]["outcome"] == "FAIL"


@pytest.mark.parametrize("xdist", [False, True], ids=["in-process", "xdist"])
def test_the_run_goes_on_past_an_engines_faults(pytester: pytest.Pytester,
                                                monkeypatch: pytest.MonkeyPatch,
                                                xdist: bool) -> None:
    write_cases(pytester.path, *FAULTS, "tanh")
    args = ("cases", "--engine", ENGINE, "--conformance-report", "out", "-p",
            "no:cacheprovider")
    if xdist:
        monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the workers import the test engine
        # one worker meets every fault and goes on to the next item: a second worker proved
        # nothing more and cost an interpreter
        result = pytester.runpytest_subprocess(*args, "-n", "1")
    else:
        # in-process, pytester would re-raise a KeyboardInterrupt that ended the run here
        result = pytester.runpytest_inprocess(*args, no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=3, passed=1)
    assert_contained(pytester.path / "out")


def test_run_goes_on_past_an_engines_faults(tmp_path: Path) -> None:
    # with generated programs too (they call exp, sin, cos): one item, an error
    write_cases(tmp_path, *FAULTS, "tanh")
    shutil.copy(ROOT / "tests" / "conformance" / "engine_faults.py", tmp_path / "my_engine.py")
    # one worker (as above): it meets every fault, the generated item's included
    result = run(tmp_path, "run", "--engine", "my_engine", "--workers", "1", "--profile", "dev",
                 "--", "--hypothesis-seed", "1")
    assert result.returncode == 1, result.stdout + result.stderr
    assert_contained(tmp_path / "reports", "my_engine", generated=1)
    _, items = records(tmp_path / "reports")
    generated = items[GENERATED_ID]
    assert generated["verdict"] == "error"
    assert "a generated program was stopped: it raised " in generated["report"]


def test_a_generated_program_on_a_faulty_engine_fails_with_the_program() -> None:
    from conformance.case.language import parse
    from conformance.generated_suite import GeneratedLimit, check_generated
    from conformance.report.hit_rates import HitRates

    for op in FAULTS:
        with pytest.raises(GeneratedLimit) as failed:
            check_generated(parse(f"a = torch.ones(2)\nb = torch.{op}(a)"), load_engine(ENGINE),
                            load_engine("torch"), HitRates(), None)
        assert str(failed.value).startswith(f"a generated program was stopped: {REASONS[op]}")
        assert f"    b = torch.{op}(a)" in str(failed.value)


@pytest.mark.usefixtures("ctrl_c")  # tests/ctrl_c.py
@pytest.mark.parametrize("xdist", [False, True], ids=["in-process", "xdist"])
def test_a_ctrl_c_the_engine_swallows_still_ends_the_run(pytester: pytest.Pytester,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         xdist: bool) -> None:
    write_cases(pytester.path, "log")
    args = ("cases", "--engine", INTERRUPT, "--conformance-report", "out", "-p",
            "no:cacheprovider")
    if xdist:
        monkeypatch.setenv("PYTHONPATH", str(ROOT))
        result = pytester.runpytest_subprocess(*args, "-n", "2")
    else:
        result = pytester.runpytest_inprocess(*args, no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data, _ = records(pytester.path / "out")
    assert data["run_info"]["interrupted"] is True
    assert data["status"]["outcome"] == "INCOMPLETE"


def test_a_sigterm_the_engine_swallows_still_ends_the_run(pytester: pytest.Pytester) -> None:
    # in process, where the plugin makes SIGTERM a KeyboardInterrupt (a worker has no such
    # handler: SIGTERM ends it, and its item is a crashed worker's error)
    write_cases(pytester.path, "sqrt", "tanh")
    result = pytester.runpytest_inprocess("cases", "--engine", INTERRUPT,
                                          "--conformance-report", "out", "-p",
                                          "no:cacheprovider", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data, items = records(pytester.path / "out")
    assert data["run_info"]["interruption"] == ("terminated (SIGTERM); running then: "
                                                "cases/family/sqrt.yaml::cpu-float32")
    assert list(items) == []  # the item was cut short; tanh never ran


def test_ctrl_c_raises_where_the_suite_was_started_with_sigint_ignored() -> None:
    """The Ctrl-C tests' fixture (tests/ctrl_c.py): a background start's SIG_IGN made them
    see their runs pass."""
    ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.kill(os.getpid(), signal.SIGINT)  # ignored: nothing happens
        with ctrl_c_raises(), pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler runs at the next bytecode; never reached
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # restored
    finally:
        signal.signal(signal.SIGINT, ignored)
