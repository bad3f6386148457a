"""In the pytest controller: how far a run got (collected, executed, interrupted), for the
report's status and run_info; and the record of a file that failed to collect.

Registered by the plugin beside its record collector; it only listens, so a run's pytest
outcome is unchanged by it.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from conformance.report.status_line import RunFacts

# "cases/x.yaml:8: message": the loader's errors name their file and line first.
_FILE_LINE = re.compile(r"^(?P<file>[^\s:][^:\n]*):(?P<line>\d+): (?P<message>.*)", re.S)
MAX_MESSAGE = 2000


# An interrupted run names at most this many of the items that were running (one per worker).
MAX_RUNNING_NAMED = 8


class RunState:
    def __init__(self) -> None:
        self.executed: set[str] = set()
        self.started: dict[str, None] = {}  # started, in order, and not yet ended
        self.keyboard_interrupt: str | None = None

    def pytest_runtest_logstart(self, nodeid: str, location: object) -> None:
        # under xdist the controller hears of each item a worker starts, too
        self.started[nodeid] = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # An item that ran to its end has a teardown report (a skipped or failed setup too);
        # xdist reports an item whose worker died as phase "???". An item cut short by a
        # KeyboardInterrupt has neither, and is not counted.
        if report.when in ("teardown", "???"):
            self.executed.add(report.nodeid)
            self.started.pop(report.nodeid, None)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]
                                  ) -> None:
        self.keyboard_interrupt = str(excinfo.value) or excinfo.typename

    def facts(self, session: pytest.Session, options: dict[str, Any]) -> RunFacts:
        exit_status = int(session.exitstatus)
        stopped = session.shouldstop or session.shouldfail
        interrupted = (exit_status == pytest.ExitCode.INTERRUPTED or bool(stopped)
                       or self.keyboard_interrupt is not None)
        reason = self.keyboard_interrupt or (str(stopped) if stopped else None)
        if interrupted and reason is None:
            reason = "interrupted"
        if interrupted and self.started:  # which item hung, when a CI timeout ends the run
            running = list(self.started)
            named = ", ".join(running[:MAX_RUNNING_NAMED])
            more = len(running) - MAX_RUNNING_NAMED
            reason = f"{reason}; running then: {named}" + (f" and {more} more" if more > 0
                                                            else "")
        return RunFacts(collected=int(getattr(session, "testscollected", 0) or 0),
                        executed=len(self.executed), interrupted=interrupted,
                        interruption=reason, exit_status=exit_status, options=options)


def terminate_as_interrupt() -> Callable[[], None]:
    """Make SIGTERM (a CI job's timeout or cancel, `kill`) end the run as Ctrl-C does, so it
    still writes its report, marked interrupted, instead of dying and leaving the previous
    run's report in place. Returns the function that puts the old handler back. Only where
    SIGTERM has its default action and in the main thread (signal handlers live there)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return lambda: None

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt("terminated (SIGTERM)")

    def restore() -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    signal.signal(signal.SIGTERM, interrupt)
    return restore


def collection_error(nodeid: str, text: str) -> dict[str, Any]:
    """The record of a file that failed to collect: no item, no device, no dtype; file,
    line (where the message names one) and message."""
    path = nodeid.split("::")[0] or nodeid
    line: int | None = None
    message = text.strip()
    found = _FILE_LINE.match(message)
    named = found["file"] if found else ""
    # the loader names the file as it read it, which may be absolute where the node id is
    # relative to pytest's rootdir
    if found and (named == path or named.endswith("/" + path) or path.endswith("/" + named)):
        path, line, message = named, int(found["line"]), found["message"]
    elif message.startswith(f"{path}: "):  # an error of the whole file, e.g. unreadable
        message = message[len(path) + 2:]
    else:  # a Python traceback: its last line says what went wrong
        lines = [s for s in message.splitlines() if s.strip()]
        message = lines[-1].strip() if lines else "collection failed"
    return {"id": nodeid or path, "file": path, "line": line, "message": message[:MAX_MESSAGE],
            "features": ["unknown"], "device": None, "dtype": None, "engine": None,
            "verdict": "error", "pytest_outcome": "failed", "reason": text[-MAX_MESSAGE:],
            "report": text[-20000:]}
