"""The per-item wall-clock limit (conformance.run.limits.deadline), in process: an engine op
or a generated program that never returns is stopped with a verdict naming its statement; the
timer's signal is raised again where Python swallows it, and the timer and handler are
restored as the block exits. (End to end through pytest: test_item_timeout.py; the other
bounds on one item: test_limits.py.)"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.case.language import parse
from conformance.generated_suite import GeneratedLimit, check_generated
from conformance.report.hit_rates import HitRates
from conformance.run import limits
from conformance.run.engine import load_engine
from conformance.run.runner import ERROR
from tests.conformance.test_limits import PATH, TORCH, run_case, where

HANGS = "a = torch.rand(3)\nb = torch.exp(a)"


def test_an_engine_op_that_never_returns_is_stopped_by_the_item_timeout() -> None:
    hangs = load_engine("tests.conformance.engine_hangs")
    # the limit must outlast torch's run of the program, which comes first
    result = run_case(HANGS, hangs, item_timeout=1.0)
    assert result.verdict == ERROR
    assert result.reason == (
        f"stopped at {where(2)} `b = torch.exp(a)` on tests.conformance.engine_hangs: the item "
        f"{PATH}::cpu-float32 ran longer than the time limit of 1 s (--item-timeout)")


def test_a_generated_program_that_never_returns_is_stopped() -> None:
    from conformance.gen.program_check import cyclic_gc_paused

    hangs = load_engine("tests.conformance.engine_hangs")
    # The first generated program of a process first collects and freezes what is alive (a
    # second or more with this test file's 700,000 objects under load): not inside 1 s.
    with cyclic_gc_paused():
        pass
    with pytest.raises(GeneratedLimit, match=r"stopped at statement 2 .*time limit of 1 s"):
        check_generated(parse(HANGS), hangs, TORCH, HitRates(), None, item_timeout=1.0)


def test_the_timer_is_disarmed_and_the_handler_restored_when_the_block_exits() -> None:
    # also when it fired (and so as the guarded code ends, inside the cleanup): nothing of it
    # may stay armed. What was armed before (pytest-timeout's timer) is armed again.
    import signal
    import time

    before = signal.getsignal(signal.SIGALRM)
    outer = signal.getitimer(signal.ITIMER_REAL)

    def as_before() -> bool:
        left, interval = signal.getitimer(signal.ITIMER_REAL)
        return signal.getsignal(signal.SIGALRM) is before and interval == outer[1] and \
            left <= outer[0] and (left > 0) == (outer[0] > 0)

    with pytest.raises(limits.ItemTimeout), limits.deadline(0.2):
        for _ in range(3000):  # 30 s: a hang, as far as this test is concerned
            time.sleep(0.01)
    assert as_before()
    with limits.deadline(30.0) as armed:
        assert armed and signal.getitimer(signal.ITIMER_REAL)[1] == limits.REFIRE
    assert as_before()


# Where Python swallows an exception ("Exception ignored in ..."): each enters `landing`, where
# the timer's signal is delivered (it is blocked until then, so it lands nowhere else).
def in_a_gc_callback(landing: Callable[[], None]) -> None:
    import gc

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            landing()

    gc.callbacks.append(callback)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(callback)


def in_a_del(landing: Callable[[], None]) -> None:
    class Finalised:
        def __del__(self) -> None:
            landing()

    Finalised()  # dropped at once


def in_a_weakref_callback(landing: Callable[[], None]) -> None:
    import weakref

    class Target:
        pass

    target = Target()
    ref = weakref.ref(target, lambda r: landing())
    del target
    assert ref() is None


@pytest.mark.parametrize("swallowing", [in_a_gc_callback, in_a_del, in_a_weakref_callback])
def test_a_timeout_python_swallows_is_raised_again(
        swallowing: Callable[[Callable[[], None]], None],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The bug: the handler disarmed the timer and the watchdog, then raised; raised inside a
    # gc callback (hypothesis installs one), the timeout was swallowed and a hang ran on.
    import signal
    import sys
    import time

    unraisable: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: unraisable.append(u.exc_value))
    seen: list[BaseException] = []

    def landing() -> None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})
        try:
            time.sleep(60)  # no test waits this long: the signal ends it
        except BaseException as e:
            seen.append(e)
            raise

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        with pytest.raises(limits.ItemTimeout, match=r"time limit of 0\.2 s"), \
                limits.deadline(0.2):
            swallowing(landing)
            for _ in range(3000):  # 30 s: a hang, as far as this test is concerned
                time.sleep(0.01)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})
    assert [type(e) for e in seen] == [limits.ItemTimeout]
    # Python swallowed it; the deadline's own timeouts are not passed on to the hook there
    # before (pytest's would make each an error of the test)
    assert unraisable == []


def test_what_else_python_swallows_is_passed_on_with_no_timeout_inside(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import time

    class Broken:
        def __del__(self) -> None:
            raise ValueError("from __del__")

    reported: list[BaseException | None] = []

    def slow_hook(unraisable: sys.UnraisableHookArgs) -> None:
        for _ in range(50):  # 0.5 s: the timer fires (again) while this runs
            time.sleep(0.01)
        reported.append(unraisable.exc_value)

    monkeypatch.setattr(sys, "unraisablehook", slow_hook)
    with pytest.raises(limits.ItemTimeout), limits.deadline(0.2):
        Broken()
        for _ in range(3000):
            time.sleep(0.01)
    assert [str(e) for e in reported] == ["from __del__"]
    assert sys.unraisablehook is slow_hook


def test_a_timeout_the_code_catches_is_raised_again() -> None:
    # an engine's `except BaseException` (or a bare `except:`) that goes on running
    import time

    caught: list[BaseException] = []
    with pytest.raises(limits.ItemTimeout), limits.deadline(0.2):
        for _ in range(2):
            try:
                for _ in range(3000):
                    time.sleep(0.01)
            except BaseException as e:
                caught.append(e)
        for _ in range(3000):
            time.sleep(0.01)
    assert [type(e) for e in caught] == [limits.ItemTimeout] * 2


def test_a_timeout_on_its_way_out_is_not_raised_again_in_cleanup() -> None:
    import time

    cleaned: list[int] = []
    with pytest.raises(limits.ItemTimeout), limits.deadline(0.2):
        try:
            for _ in range(3000):
                time.sleep(0.01)
        finally:
            for i in range(50):  # 0.5 s: five times the interval of the timer's re-firing
                time.sleep(0.01)
                cleaned.append(i)
    assert len(cleaned) == 50


def test_the_watchdog_stays_armed_after_a_swallowed_timeout() -> None:
    # in a process of its own: the watchdog ends the process (a hang the timer's signal
    # cannot reach: blocked, after the first timeout was swallowed in a gc callback)
    import subprocess
    import sys

    script = """
import gc, signal, sys, threading, time
from conformance.run import limits

def callback(phase, info):
    if phase == "start":
        try:
            time.sleep(60)
        except BaseException as e:
            print("raised in the callback:", type(e).__name__, file=sys.stderr)
            raise

gc.callbacks.append(callback)
with limits.deadline(0.2):
    gc.collect()
    gc.callbacks.remove(callback)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    threading.Event().wait()
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 1, result.stderr  # faulthandler's exit
    assert "raised in the callback: ItemTimeout" in result.stderr
    assert "Timeout (0:00:05.2" in result.stderr  # the limit and its grace (watchdog_grace)


def test_an_interval_timer_armed_around_the_block_is_honoured() -> None:
    import signal
    import time

    fired: list[int] = []

    def outer(signum: int, frame: object) -> None:
        fired.append(signum)

    previous = signal.signal(signal.SIGALRM, outer)
    try:
        # later than the deadline: set again, with the time it has left, when the block exits
        signal.setitimer(signal.ITIMER_REAL, 100.0)
        with limits.deadline(30.0):
            pass
        assert signal.getsignal(signal.SIGALRM) is outer
        assert 90 < signal.getitimer(signal.ITIMER_REAL)[0] <= 100
        # sooner: the block ends then, with a timeout that names it (and it is not fired
        # again: it was delivered)
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(limits.ItemTimeout) as stopped, limits.deadline(30.0):
            for _ in range(3000):
                time.sleep(0.01)
        assert str(stopped.value) == ("item ran into the time limit around it (the interval "
                                      "timer armed around it)")
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0) and fired == []
        # sooner, but the block ends first: it fires as soon as the block has ended
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with limits.deadline(30.0):
            pass
        for _ in range(3000):
            if fired:
                break
            time.sleep(0.01)
        assert fired == [signal.SIGALRM]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_without_a_main_thread_timer_the_deadline_is_not_armed() -> None:
    armed: list[bool] = []

    def enter() -> None:
        with limits.deadline(1.0) as is_armed:
            armed.append(is_armed)

    thread = threading.Thread(target=enter)
    thread.start()
    thread.join()
    with limits.deadline(0) as unlimited:
        pass
    assert armed == [False] and unlimited is False


def test_a_timeout_waits_until_an_import_is_done(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # The bug: a timeout raised inside torch's lazy import of torch._dynamo (a program's
    # first dispatch mode, over a minute on a loaded machine) left the worker with the
    # package dropped and its submodules kept: every later item failed with "partially
    # initialized module 'torch._dynamo' has no attribute 'decorators'".
    import sys
    import time

    (tmp_path / "slow_to_import.py").write_text(
        "import time\nfor _ in range(50):  # 0.5 s: the timer fires meanwhile\n"
        "    time.sleep(0.01)\ndone = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slow_to_import", raising=False)
    with pytest.raises(limits.ItemTimeout), limits.deadline(0.2):
        import slow_to_import  # noqa: F401
        for _ in range(3000):  # 30 s: a hang, as far as this test is concerned
            time.sleep(0.01)
    assert sys.modules["slow_to_import"].done
    monkeypatch.delitem(sys.modules, "slow_to_import")
