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
import time
from collections.abc import Iterator
from typing import Any

from conformance.run import blackbox

# Executed statements per run: top-level, loop and `with` bodies, Function method bodies, and
# each evaluation of a lambda. The library's largest run executes 54 (see the docs).
MAX_STATEMENTS = 10_000
# Calls of the program's own lambdas and Function methods nested in one another (a lambda
# calling itself, `f = lambda g: g(g)`): refused here, a limit, before Python's recursion
# limit would raise a RecursionError that reads like the case disagreeing with torch.
MAX_CALL_DEPTH = 32
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
# After the limit, the timer fires again every REFIRE seconds until the block exits: Python
# swallows an exception raised where nothing can propagate it (a gc callback such as
# hypothesis', a `__del__`, a weakref callback: "Exception ignored in ..."), and a timeout
# raised there must not be the last word.
REFIRE = 0.1


def timer_available() -> bool:
    """Whether `deadline` can interrupt: POSIX interval timers, in the main thread."""
    return hasattr(signal, "setitimer") and \
        threading.current_thread() is threading.main_thread()


class deadline:  # lower case, as contextlib.suppress: `with deadline(60):`
    """Raise ItemTimeout in the running code after `seconds` (0 or less: no limit), and end
    the process `watchdog_grace(seconds)` later if nothing ended the block by then (code that
    a signal cannot interrupt, or that swallows every timeout). The timer and the watchdog
    stay armed until the block exits: a timeout swallowed on the way is raised again REFIRE
    seconds later, and one due inside an import is raised when the import is done
    (`_importing`). `with deadline(s) as armed`: without POSIX timers or outside the main
    thread nothing is armed (the caller runs unbounded, as documented).

    While the block runs, sys.unraisablehook (where Python reports what it swallowed) drops
    this deadline's own timeouts, which are raised again anyway, and passes the others on
    to the previous hook, with no timeout raised inside it (pytest's hook would record it
    as an error of the test: a second, spurious error beside the item's own).

    An interval timer already running (pytest-timeout's `--timeout`, signal method) is
    honoured: if it would fire first, the block ends then, with an ItemTimeout naming it;
    on exit it is set again with the time it has left. Not nestable otherwise: there is one
    watchdog per process."""

    def __init__(self, seconds: float, what: str = "item",
                 option: str = "--item-timeout") -> None:
        self.seconds, self.what, self.option = seconds, what, option
        self.armed = self.leaving = self.outer_first = self.reporting = False
        self.raised: list[ItemTimeout] = []

    def __enter__(self) -> bool:
        if self.seconds <= 0 or not timer_available():
            return False
        self.previous = signal.getsignal(signal.SIGALRM)
        self.outer = signal.getitimer(signal.ITIMER_REAL)  # (seconds left, interval)
        self.started = time.monotonic()
        first = self.seconds
        if 0 < self.outer[0] < self.seconds:
            first, self.outer_first = self.outer[0], True
        self.first = first
        self.previous_hook = sys.unraisablehook
        sys.unraisablehook = self._unraisable
        signal.signal(signal.SIGALRM, self._expire)
        # The watchdog writes every thread's traceback and exits the process. The black box
        # notes the deadline and takes the dump to whoever outlives the process: under xdist
        # the controller records the item as a timeout naming its line, and a new worker
        # takes over; in process a sentinel prints the dump and the line (conformance.blackbox).
        dump = blackbox.deadline_armed(self._message())
        faulthandler.dump_traceback_later(first + watchdog_grace(self.seconds), exit=True,
                                          file=dump or sys.__stderr__ or sys.stderr)
        signal.setitimer(signal.ITIMER_REAL, first, REFIRE)
        self.armed = True
        return True

    def __exit__(self, *exc: object) -> None:
        # First: from here on a late signal does nothing (_expire also knows this frame, for
        # a signal handled before this line runs: _QUIET_CODE).
        self.leaving = True
        if not self.armed:
            return
        signal.setitimer(signal.ITIMER_REAL, 0)
        faulthandler.cancel_dump_traceback_later()
        blackbox.deadline_ended()
        signal.signal(signal.SIGALRM, self.previous)
        sys.unraisablehook = self.previous_hook
        left, interval = self.outer
        if left > 0 and not (self.outer_first and self.raised):  # not delivered: set again
            left -= time.monotonic() - self.started
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-3), interval)

    def _unraisable(self, unraisable: Any) -> None:
        if any(unraisable.exc_value is e for e in self.raised):
            return
        self.reporting = True
        try:
            self.previous_hook(unraisable)
        finally:
            self.reporting = False

    def _expire(self, signum: int, frame: Any) -> None:
        if self.leaving or self.reporting or \
                (frame is not None and frame.f_code in _QUIET_CODE):
            return  # (reporting: the next firing raises it, outside the hook)
        if any(e is sys.exc_info()[1] for e in self.raised):
            return  # the timeout is on its way out, through a `finally` or an `except`
        if _importing(frame):
            return  # the next firing raises it, once the import is done
        if time.monotonic() - self.started < self.first - EARLY:
            # not the timer: an engine's own SIGALRM (os.kill, signal.alarm) before the
            # limit was said to be the item running "longer than 60 s"; ignored (its
            # default action would end the process)
            return
        self.raised.append(ItemTimeout(self._message()))
        raise self.raised[-1]

    def _message(self) -> str:
        """What this deadline's timeout says."""
        if self.outer_first:
            limit = ("pytest-timeout's --timeout" if getattr(self.previous, "__module__", "")
                     == "pytest_timeout" else "the interval timer armed around it")
            return f"{self.what} ran into the time limit around it ({limit})"
        return f"{self.what} ran longer than the time limit of {self.seconds:g} s ({self.option})"


# How much earlier than the limit a SIGALRM may arrive and still be the timer's (the timer
# counts real time, the check monotonic time).
EARLY = 0.05

# A signal handled in these does nothing: leaving the block, reporting what Python swallowed.
_QUIET_CODE = (deadline.__exit__.__code__, deadline._unraisable.__code__)


def _importing(frame: Any) -> bool:
    """Whether `frame` runs inside an import (a module's body, or importlib finding it). A
    timeout raised there would leave the process broken for every later item: the package
    is dropped from sys.modules but the submodules it had imported stay, so importing it
    again gives a module without them ("partially initialized module 'torch._dynamo' has no
    attribute 'decorators'"; torch imports dynamo and inductor lazily, at a program's first
    dispatch mode or compile, which took over a minute on a loaded machine). A hang inside
    an import is still ended by the watchdog."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


# ---- an engine's KeyboardInterrupt, SystemExit and MemoryError -----------------------------
class EngineFault(RunLimit):
    """The code run under `contained` raised KeyboardInterrupt that no signal caused,
    SystemExit or MemoryError: its item is an error naming the line, and the run goes on."""


@contextlib.contextmanager
def contained() -> Iterator[None]:
    """Turn an engine's KeyboardInterrupt, SystemExit and MemoryError into EngineFault.

    A KeyboardInterrupt is the user's when the Python handler of SIGINT (Ctrl-C) or SIGTERM
    (which the plugin makes one: plugin/session.terminate_as_interrupt) raised it during the
    block: that one passes, and if the code running swallowed it or raised something else
    instead, it is raised again as the block ends. So a real interrupt always ends the run,
    and an engine's own KeyboardInterrupt ends only its item."""
    interrupts: list[KeyboardInterrupt] = []  # raised by the handlers of signals that came
    handlers = _note_interrupts(interrupts)
    delivered = False
    try:
        yield
    except KeyboardInterrupt as e:
        if interrupts:
            delivered = True
            raise
        raise EngineFault(f"it raised {_one_line(e)}, and no SIGINT or SIGTERM did (a real "
                          "Ctrl-C ends the run)") from e
    except SystemExit as e:
        raise EngineFault(f"it raised {_one_line(e)} (an engine must not end the process)"
                          ) from e
    except MemoryError as e:
        raise EngineFault(f"it raised {_one_line(e)}") from e
    except BaseException as e:
        # any other BaseException of an engine's (its own subclass, GeneratorExit) would
        # leave the item, and in-process the run, without a verdict; the harness's own
        # (RunLimit, the interpreter's control flow) and pytest's outcomes pass
        if isinstance(e, Exception) or type(e).__module__.split(".")[0] in (
                "conformance", "_pytest", "pytest"):
            raise
        raise EngineFault(f"it raised {_one_line(e)}, a BaseException that is not an "
                          "Exception") from e
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        if interrupts and not delivered:
            raise interrupts[0]  # in place of whatever the block ended with


def _note_interrupts(interrupts: list[KeyboardInterrupt]) -> dict[int, Any]:
    """Wrap the Python handlers of SIGINT and SIGTERM so that the KeyboardInterrupt they
    raise is appended to `interrupts`; the handlers replaced, by signal (none outside the
    main thread, where signals are not handled)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    replaced: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(signum)
        if callable(handler):  # not SIG_DFL or SIG_IGN, which raise nothing in Python

            def noting(num: int, frame: Any, handler: Any = handler) -> None:
                try:
                    handler(num, frame)
                except KeyboardInterrupt as e:
                    interrupts.append(e)
                    raise

            replaced[signum] = handler
            signal.signal(signum, noting)
    return replaced


def _one_line(e: BaseException) -> str:
    # imported here, not at the top: the plugin's options import this module in every pytest
    # run of the environment, and classify loads the case API and with it the reference
    # engine (tests/conformance/test_layers.py: another project's run loads no harness)
    from conformance.case import classify

    text = classify.text_of(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:200]}" if text else type(e).__name__
