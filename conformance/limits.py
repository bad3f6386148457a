"""Bounds on one item: every case program ends, in bounded time and memory, with a verdict.

Two sorts of limit. Per-operation limits of the case language (`**` of two numbers, integer
size, sequence length, tensor element counts) refuse one statement before it computes
anything huge: the statement's outcome is `limit` (`LimitRefused`), like a failed case
assertion, never an engine error kind. Whole-run limits (executed statements, elements of
the tensors the program keeps, snapshot memory, wall-clock time) end the run (`RunLimit`, a
BaseException so that no `except Exception` in the interpreter or in an engine swallows
it); the runner turns them into an `error` verdict naming the case's file:line. Every
default is documented, with the case library's measured maxima, in docs/case-format.md
("Limits").
"""

from __future__ import annotations

import contextlib
import faulthandler
import math
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

# Executed statements per run: top-level, loop and `with` bodies, Function method bodies, and
# each evaluation of a lambda. The library's largest run executes 54 (see the docs).
MAX_STATEMENTS = 10_000
# A Python integer result (of `**`, `*`, `+`, ...) may have at most this many bits.
MAX_INT_BITS = 4096
# A str, list or tuple built by `*` or `+` may have at most this many items.
MAX_SEQUENCE_LENGTH = 100_000
# A tensor an operation would allocate, or is given, may have at most this many elements,
# checked before it runs (conformance/predict.py; a view such as `expand` allocates nothing
# and may be made beyond it, but not operated on).
MAX_TENSOR_ELEMENTS = 1 << 24
# Elements of the tensors a run's operations made that are alive at once (views and
# in-place results are not new; a module's parameters count): 8 tensors at
# MAX_TENSOR_ELEMENTS, at most 1 GB in float64 whatever the program keeps. A whole-run limit.
MAX_LIVE_ELEMENTS = 1 << 27
# Tensors with more elements than this are observed as a summary (shape, dtype, checksum,
# statistics) instead of a copy of their values.
SUMMARY_THRESHOLD = 1 << 16
# Snapshot memory of one run's whole trace (values copied, plus a fixed estimate per
# snapshot for the Python objects around them).
MAX_TRACE_BYTES = 256 << 20
SNAPSHOT_OVERHEAD_BYTES = 512
# Wall-clock seconds per item (both engines' runs and the comparison): `--item-timeout`.
DEFAULT_ITEM_TIMEOUT = 60.0


def watchdog_grace(seconds: float) -> float:
    """How much longer than the limit the watchdog waits before it ends the process (a hang
    in C code that the timer's signal cannot interrupt): half the limit, at least 5 s."""
    return max(5.0, seconds / 2)


class LimitRefused(Exception):
    """One statement would exceed a per-operation limit of the case language."""


class RunLimit(BaseException):
    """A whole-run limit ended the run; `line` is the program line running at the time."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return self.message


class ItemTimeout(RunLimit):
    pass


# ---- per-operation checks ----------------------------------------------------------------
def check_pow(base: Any, exponent: Any) -> None:
    """Refuse `base ** exponent` of two numbers whose result would exceed MAX_INT_BITS bits
    in magnitude (estimated from the operands, before computing it)."""
    if not (isinstance(base, (int, float)) and isinstance(exponent, (int, float))) or \
            exponent <= 1:
        return
    magnitude = abs(base)
    if magnitude <= 1:
        return
    bits = float(exponent) * math.log2(magnitude)
    if bits > MAX_INT_BITS:
        raise LimitRefused(
            f"`{short(base)} ** {short(exponent)}` would be a number of about {bits:.3g} "
            f"bits; the case language allows {MAX_INT_BITS} (use a smaller exponent)")


def check_repeat(left: Any, right: Any) -> None:
    """Refuse `sequence * n` (either order) whose result would exceed MAX_SEQUENCE_LENGTH."""
    for seq, n in ((left, right), (right, left)):
        if isinstance(seq, (str, list, tuple)) and isinstance(n, int):
            length = len(seq) * max(n, 0)
            if length > MAX_SEQUENCE_LENGTH:
                raise LimitRefused(
                    f"repeating a {type(seq).__name__} of length {len(seq)} {n} times would "
                    f"make {length} items; the case language allows {MAX_SEQUENCE_LENGTH}")


def check_result(value: Any) -> Any:
    """`value`, unless it is an integer or sequence beyond its limit (results of `*`, `+`
    and their in-place forms grow at most twofold per step, so this bounds loops)."""
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise LimitRefused(f"an integer of {value.bit_length()} bits; the case language "
                           f"allows {MAX_INT_BITS}")
    if isinstance(value, (str, list, tuple)) and len(value) > MAX_SEQUENCE_LENGTH:
        raise LimitRefused(f"a {type(value).__name__} of {len(value)} items; the case "
                           f"language allows {MAX_SEQUENCE_LENGTH}")
    return value


def check_elements(count: int, what: str) -> None:
    if count > MAX_TENSOR_ELEMENTS:
        raise LimitRefused(f"{what} would have {count} elements; the case language allows "
                           f"{MAX_TENSOR_ELEMENTS} per tensor")


def short(v: Any) -> str:
    """`v` for a message, long numbers cut."""
    text = repr(v)
    return text if len(text) <= 24 else f"{text[:10]}...({len(text)} digits)"


# ---- the per-item wall-clock limit ---------------------------------------------------------
def timer_available() -> bool:
    """Whether `deadline` can interrupt: POSIX interval timers, in the main thread."""
    return hasattr(signal, "setitimer") and \
        threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def deadline(seconds: float, what: str = "item") -> Iterator[bool]:
    """Raise ItemTimeout in the running code after `seconds` (0 or less: no limit), and end
    the process `watchdog_grace(seconds)` later if that did not end it (code that a signal
    cannot interrupt). Yields whether the limit is armed: without POSIX timers or outside the
    main thread nothing is armed (the caller runs unbounded, as documented). Not nestable:
    there is one interval timer and one watchdog per process."""
    if seconds <= 0 or not timer_available():
        yield False
        return

    def expire(signum: int, frame: Any) -> None:
        # Disarm here, not only on leaving: the exception may land anywhere, even in the
        # `finally` below before it has disarmed, and a watchdog left armed would end the
        # process later.
        _disarm(previous)
        raise ItemTimeout(f"{what} ran longer than the time limit of {seconds:g} s "
                          "(--item-timeout)")

    previous = signal.signal(signal.SIGALRM, expire)
    # The watchdog writes every thread's traceback to stderr and exits the process; under
    # xdist the controller records the item as crashed and a new worker takes over.
    faulthandler.dump_traceback_later(seconds + watchdog_grace(seconds), exit=True,
                                      file=sys.__stderr__ or sys.stderr)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield True
    finally:
        _disarm(previous)


def _disarm(previous: Any) -> None:
    """Stop the timer and the watchdog and restore the previous handler (idempotent)."""
    signal.setitimer(signal.ITIMER_REAL, 0)
    faulthandler.cancel_dump_traceback_later()
    signal.signal(signal.SIGALRM, previous)
