"""Progress lines for generated programs: one test runs hundreds or thousands of programs, so
a long run says how far it is (count and rate) instead of sitting on one dot.

Lines go to stderr with pytest's capture suspended for the write, so they reach the terminal
in-process and from pytest-xdist workers alike (a worker's stderr is the controller's).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

# A line after this many programs or seconds since the last one, whichever comes first.
EVERY_PROGRAMS = 100
EVERY_SECONDS = 15.0


class Progress:
    def __init__(self, write: Callable[[str], None], clock: Callable[[], float] = time.monotonic,
                 every_programs: int = EVERY_PROGRAMS, every_seconds: float = EVERY_SECONDS
                 ) -> None:
        self.write = write
        self.clock = clock
        self.every_programs = every_programs
        self.every_seconds = every_seconds
        self.started = clock()
        self._last_count = 0
        self._last_time = self.started

    def tick(self, programs: int) -> None:
        """Called after each program with the count so far."""
        now = self.clock()
        if programs - self._last_count < self.every_programs and \
                now - self._last_time < self.every_seconds:
            return
        self._last_count, self._last_time = programs, now
        self.write(self.line(programs, now))

    def line(self, programs: int, now: float) -> str:
        elapsed = max(now - self.started, 1e-9)
        return (f"generated programs: {programs} checked in {elapsed:.0f} s "
                f"({programs / elapsed:.1f}/s)")


def terminal_writer(config: Any, stream: TextIO | None = None) -> Callable[[str], None]:
    """A writer of whole lines to stderr that pytest's output capture does not swallow."""
    capture = config.pluginmanager.getplugin("capturemanager")

    def write(line: str) -> None:
        suspended = capture.global_and_fixture_disabled() if capture is not None \
            else contextlib.nullcontext()
        with suspended:
            print(line, file=stream or sys.stderr, flush=True)

    return write
