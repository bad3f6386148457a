"""Threads an engine starts during a run and leaves running: found, stopped, named.

A thread the engine leaves behind can change process state after its item ended (round
five's probe set the default dtype a second later), and a later item's verdict would then
depend on when it ran. `watch` wraps one guarded run: it notes which threads existed, and
records who starts a thread while the run lasts (the first frame above `Thread.start` that
is not the standard library's). Afterwards every new thread still alive that was started
from code outside torch, the harness and the standard library (an engine's own code) is
asked to stop (`Stopped`, a SystemExit, raised in it at its next Python instruction) and
named, so that the item that left it is an error and no later item sees what it does.

Torch's own workers are left alone: inductor's compile pool, dynamo's and AOTAutograd's
threads are started from torch's code (even when an engine's call got torch to start them),
and the autograd engine's device threads are not Python threads at all. A thread started
without `threading.Thread.start` (`_thread.start_new_thread`) has no starter on record: it
is judged by the code it is running.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import sysconfig
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

_STDLIB = os.path.realpath(sysconfig.get_paths()["stdlib"])
_HARNESS = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
_STARTER = "_conformance_started_at"


def _stdlib(filename: str) -> bool:
    """Code of the standard library (frozen modules included; not its site-packages)."""
    if filename.startswith("<frozen "):
        return True
    path = os.path.realpath(filename)
    return path.startswith(_STDLIB + os.sep) and "-packages" + os.sep not in path


def _trusted(filename: str) -> bool:
    """Code of torch, of the harness, or of the standard library."""
    if _stdlib(filename):
        return True
    path = os.path.realpath(filename)
    torch_file = getattr(sys.modules.get("torch"), "__file__", None)
    roots = [_HARNESS]
    if isinstance(torch_file, str):
        roots.append(os.path.dirname(os.path.realpath(torch_file)))
    return any(path.startswith(r + os.sep) for r in roots)


def _first_untrusted(frame: FrameType | None) -> str | None:
    """`file:line function` of the innermost frame outside trusted code, None if none."""
    while frame is not None:
        code = frame.f_code
        if not _trusted(code.co_filename):
            return f"{os.path.basename(code.co_filename)}:{frame.f_lineno} `{code.co_name}`"
        frame = frame.f_back
    return None


def _starter(frame: FrameType | None) -> str | None:
    """Who called `Thread.start`: the first frame above it outside the standard library,
    `file:line function`, or None when that frame is torch's or the harness's."""
    while frame is not None and _stdlib(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None or _trusted(frame.f_code.co_filename):
        return None
    code = frame.f_code
    return f"{os.path.basename(code.co_filename)}:{frame.f_lineno} `{code.co_name}`"


_original_start = threading.Thread.start
_watching = [0]  # nesting depth of `watch`: Thread.start is wrapped while it is above 0


def _recording_start(self: threading.Thread) -> None:
    setattr(self, _STARTER, _starter(sys._getframe(1)))
    _original_start(self)


@dataclass(frozen=True)
class LeftThread:
    name: str
    where: str  # who started it, or the code it was running
    stopped: bool  # whether SystemExit could be raised in it

    def describe(self) -> str:
        text = f"a thread `{self.name}` running (started at {self.where})"
        return text if self.stopped else f"{text}, which could not be stopped"


class Stopped(SystemExit):
    """Raised in a thread the harness stops."""


def _quietly(thread: Any) -> None:
    """Have `thread` end on Stopped without a report: threading's own hook ignores
    SystemExit, but pytest's (and others') would report it as an unhandled exception."""
    invoke = getattr(thread, "_invoke_excepthook", None)
    if invoke is None:
        return

    def invoke_unless_stopped(t: threading.Thread) -> None:
        if not isinstance(sys.exc_info()[1], Stopped):
            invoke(t)
    thread._invoke_excepthook = invoke_unless_stopped


def _stop(ident: int, thread: Any) -> bool:
    """Raise Stopped in thread `ident` at its next Python instruction."""
    if thread is not None:
        _quietly(thread)
    done = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident),
                                                      ctypes.py_object(Stopped))
    return bool(done == 1)


def _left(before: set[int]) -> list[LeftThread]:
    by_ident = {t.ident: t for t in threading.enumerate()}
    left = []
    for ident, frame in sys._current_frames().items():
        if ident in before or ident == threading.get_ident():
            continue
        thread: Any = by_ident.get(ident)
        if thread is not None and hasattr(thread, _STARTER):
            where = getattr(thread, _STARTER)
        else:   # not started through Thread.start while watched: judged by its code
            where = _first_untrusted(frame)
        if where is None:
            continue
        if thread is not None and hasattr(thread, "cancel"):  # a Timer not yet fired
            thread.cancel()
        name = thread.name if thread is not None else f"thread {ident}"
        left.append(LeftThread(name, where, _stop(ident, thread)))
    return left


@contextlib.contextmanager
def watch() -> Iterator[list[LeftThread]]:
    """Around one run: on exit, the list holds the engine's threads left running (stopped)."""
    before = set(sys._current_frames())
    found: list[LeftThread] = []
    _watching[0] += 1
    threading.Thread.start = _recording_start  # type: ignore[method-assign]
    try:
        yield found
    finally:
        _watching[0] -= 1
        if not _watching[0]:
            threading.Thread.start = _original_start  # type: ignore[method-assign]
        found.extend(_left(before))
