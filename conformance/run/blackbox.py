"""The black box: what a process running items was doing when it ended, for whoever outlives it.

A hang that only the watchdog can end (C code holding the interpreter, a blocked SIGALRM), a
segfault, `os._exit` or the kernel's OOM killer ends the process with no chance to say where
it was. So a process that runs items keeps a small file current as it goes, a fixed-size
memory map (`SIZE`): the pytest item running and, for a case item, its file; which engine's
run; the program line the interpreter is at (a generated program: its statement number),
stored per statement by `LineStore` (one store into the map); and the deadline armed around
it. The watchdog's dump (faulthandler's: `Timeout (0:00:06)!` and every thread's stack) goes
to a reader too. Stores into a shared file mapping are in the page cache at once: they
outlive the process however it ends, and nothing needs flushing.

The box is opened when the first case or generated-program item starts, or the first
deadline is armed (`explain`); other pytest items are only noted. Who reads it:
- under xdist the controller names each worker's file (`WORKER_INPUT` in its workerinput);
  when a worker dies running an item, the controller reads the file and the watchdog's dump
  beside it (`read`), and records the item with the line and the cause (`account`): the
  watchdog and the deadline's message, else the worker's exit status (from its Popen);
- in a process without a controller (plain `pytest`, `explain`) opening the box starts a
  sentinel: a small child process, in a session of its own, that holds the read end of a
  pipe, which is also the watchdog's file (under pytest's capture, stderr would lose it).
  When this process ends, the sentinel reads what came through the pipe (the dump, if the
  watchdog fired) and, unless the process exited through Python's own exit (atexit), prints
  the dump and the same account on the stderr it inherited. It cannot know the exit status
  (the process is not its child), and no report can be written then: the records of the
  run died with the process.

Telling an account (the case loaded again, its line named as the runner names it) needs the
runner, which sits above this module: it is done in conformance/run/crash.py, which also
holds the sentinel's main.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import json
import mmap
import os
import signal
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

SIZE = 32 << 10
LINE_OFFSET = 0  # int32: the program line running (a generated program: statement number)
EXITED_OFFSET = 4  # int32: 1 once the process has exited through Python's atexit
# Text slots: offset and capacity of a UTF-8 text stored after its 4-byte length
SLOTS = {"engine": (64, 448), "item": (512, 16 << 10), "deadline": ((16 << 10) + 512, 4 << 10)}
DUMP_SUFFIX = ".watchdog"  # beside a worker's box: the watchdog's dump
WORKER_INPUT = "conformance_black_box"  # the workerinput key naming a worker's box
WATCHDOG_HEADER = "Timeout ("  # how faulthandler's dump_traceback_later dump starts

# ---- the process's own box ------------------------------------------------------------------
_map: mmap.mmap | None = None
_line = memoryview(bytearray(4)).cast("i")  # the map's line slot once open
_texts: dict[str, str] = {}  # the slots' texts, also before the box is open
_assigned: str | None = None  # a worker's box, named by the controller, opened on first use
_dump: IO[bytes] | None = None  # where the watchdog's dump goes (None: stderr, as before)
_sentinel: subprocess.Popen[bytes] | None = None
_engine: object = None  # the engine whose interpreter stored the line last
_tried = False  # _ensure_open ran (the box is open unless it could not be made)


def assign(path: str) -> None:
    """This process is a worker whose box is `path` (opened when an item first needs it)."""
    global _assigned
    _assigned = path


def _ensure_open() -> None:
    """Open the box: the one the controller assigned, else one of this process's own, read
    by a sentinel. Once per process; every slot written so far is written into it. Where it
    cannot be made (a full disk, `ulimit -f`), the run goes on without it, as before: a
    process that dies is then recorded with no line and no cause."""
    global _dump, _tried
    if _tried:
        return
    _tried = True
    try:
        if _assigned is not None:
            _open(_assigned)
            _dump = open(_assigned + DUMP_SUFFIX, "wb")  # noqa: SIM115 (the process's life)
            atexit.register(_close_dump)
            return
        path = os.path.join(tempfile.mkdtemp(prefix="autograd-conformance-box-"), "box")
        _open(path)
    except OSError:
        return
    _start_sentinel(path)


def _open(path: str) -> None:
    global _map, _line
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.ftruncate(fd, SIZE)
        _map = mmap.mmap(fd, SIZE)
    finally:
        os.close(fd)
    _line = memoryview(_map)[LINE_OFFSET:LINE_OFFSET + 4].cast("i")
    for slot, text in _texts.items():
        _put(slot, text)
    atexit.register(struct.pack_into, "<i", _map, EXITED_OFFSET, 1)


def _put(slot: str, text: str) -> None:
    _texts[slot] = text
    if _map is None:
        return
    offset, capacity = SLOTS[slot]
    data = text.encode()
    if len(data) > capacity - 4:
        data = b""  # too long to keep whole: left unknown
    struct.pack_into("<I", _map, offset, 0)  # a process ending mid-write leaves it empty
    _map[offset + 4:offset + 4 + len(data)] = data
    struct.pack_into("<I", _map, offset, len(data))


@contextlib.contextmanager
def running(nodeid: str, case: dict[str, Any] | None = None, generated: bool = False
            ) -> Iterator[None]:
    """The pytest item `nodeid` runs in the block; `case`: a case item's file and
    parameters (id, path, file, device, dtype, offset: Account.item loads it again);
    `generated`: the generated-program item. Either opens the box (any other item is noted,
    should it run a deadline). A session run inside an item (pytester) notes its own items
    and leaves the outer one noted again."""
    if case is not None or generated:
        _ensure_open()
    outer = _texts.get("item", "")
    _put("item", json.dumps({"nodeid": nodeid, "case": case, "generated": generated}))
    try:
        yield
    finally:
        _put("item", outer)


def deadline_armed(message: str) -> IO[bytes] | None:
    """A deadline is armed, whose timeout says `message`. Where the watchdog's dump should
    go (None: nowhere else than stderr, as no reader would show it)."""
    _ensure_open()
    _put("deadline", json.dumps({"message": message}))
    if _sentinel is not None and _sentinel.poll() is not None:
        return None  # the sentinel is gone: nobody would show the dump
    return _dump


def deadline_ended() -> None:
    _put("deadline", "")


def _note_engine(engine: Any) -> None:
    global _engine
    _engine = engine
    _put("engine", str(engine.name))


class LineStore:
    """The interpreter's `line` attribute, also stored in the black box: a data descriptor
    with no __get__, so that reading it is a plain instance attribute read, and storing it
    is one store into the map more (and notes the engine when another interpreter's engine
    stores a line: once per run)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __set__(self, interpreter: Any, line: int) -> None:
        interpreter.__dict__[self.name] = line
        _line[0] = line
        if interpreter.engine is not _engine:
            _note_engine(interpreter.engine)

    if TYPE_CHECKING:
        def __get__(self, interpreter: Any, owner: type | None = None) -> int: ...


# ---- the sentinel (a process without a controller) -------------------------------------------
def _start_sentinel(path: str) -> None:
    global _sentinel, _dump
    # its own session: a Ctrl-C to the run's process group does not end it; it finds this
    # package where this process found it
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [package_root, *filter(None, [os.environ.get("PYTHONPATH")])]))
    try:
        _sentinel = subprocess.Popen(
            [sys.executable, "-c", "from conformance.run.crash import sentinel; sentinel()",
             path, str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, start_new_session=True, env=env)
    except OSError:
        return  # no sentinel: the watchdog's dump goes to stderr, as it would without one
    _dump = _sentinel.stdin
    atexit.register(_release_sentinel)


def _close_dump() -> None:
    """At Python's own exit, close a worker's dump file (else the interpreter warns of an
    unclosed file as it ends), after cancelling the watchdog that would write to it."""
    faulthandler.cancel_dump_traceback_later()
    if _dump is not None:
        _dump.close()


def _release_sentinel() -> None:
    """At Python's own exit, nothing to tell: mark the box exited (this runs before the mark
    `_open` registered, atexit being last in, first out), then close the pipe so that the
    sentinel ends now, and reap it (else Popen's finalizer warns that it still runs)."""
    if _map is not None:
        struct.pack_into("<i", _map, EXITED_OFFSET, 1)
    if _sentinel is None or _sentinel.stdin is None:
        return
    faulthandler.cancel_dump_traceback_later()  # no watchdog may write to a closed pipe
    _sentinel.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        _sentinel.wait(timeout=5)


# ---- reading a box ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Record:
    """What a box held when its process ended."""
    line: int
    exited: bool  # through Python's atexit: an orderly end
    engine: str
    item: dict[str, Any] | None  # running's: nodeid, case, generated
    deadline: dict[str, Any] | None  # deadline_armed's: message
    dump: str  # the watchdog's dump ("" if it did not fire)

    @property
    def watchdog(self) -> bool:
        return self.dump.startswith(WATCHDOG_HEADER)


def read(path: str, dump: str | None = None) -> Record | None:
    """The box at `path` (None: missing or not a box); `dump`: the watchdog's dump, else
    read from the file beside it."""
    try:
        data = Path(path).read_bytes()
        if dump is None:
            dump_path = Path(path + DUMP_SUFFIX)
            dump = dump_path.read_text(errors="replace") if dump_path.exists() else ""
    except OSError:
        return None
    if len(data) != SIZE:
        return None
    texts = {}
    for slot, (offset, capacity) in SLOTS.items():
        (length,) = struct.unpack_from("<I", data, offset)
        texts[slot] = data[offset + 4:offset + 4 + min(length, capacity - 4)].decode(
            errors="replace")
    return Record(struct.unpack_from("<i", data, LINE_OFFSET)[0],
                  struct.unpack_from("<i", data, EXITED_OFFSET)[0] == 1, texts["engine"],
                  _json(texts["item"]), _json(texts["deadline"]), dump)


def _json(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class Account:
    """Why a process died running an item, from its box: the cause and, when the box was
    running that item, where (`line`, 0: before the first statement) and on which engine."""
    cause: str
    timed_out: bool  # the watchdog ended it, past the item's time limit
    line: int | None = None  # None: the box was not running this item
    engine: str = ""
    case: dict[str, Any] | None = None  # a case item's (running)
    generated: bool = False  # a generated program's item: the line is a statement number


def account(record: Record | None, nodeid: str, who: str, returncode: int | None
            ) -> Account:
    """`who` ("worker 'gw0'") died running the item `nodeid`, with `returncode` (Popen's:
    -N for signal N; None: not known); `record`: its box."""
    if record is not None and record.watchdog:
        limit = (record.deadline or {}).get("message")
        cause = (f"{limit}, and could not be interrupted: the watchdog ended {who}" if limit
                 else f"the watchdog ended {who}")
    else:
        cause = f"{who} crashed ({exit_description(returncode)})"
    timed_out = record is not None and record.watchdog and record.deadline is not None
    if record is None or record.item is None or record.item.get("nodeid") != nodeid:
        return Account(cause, timed_out)
    return Account(cause, timed_out, record.line, record.engine, record.item.get("case"),
                   bool(record.item.get("generated")))


def exit_description(returncode: int | None) -> str:
    if returncode is None:
        return "its exit status is unknown"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
        return f"signal {-returncode}, {name}"
    return f"exit code {returncode}"


def exit_status(node: Any, timeout: float = 30.0) -> int | None:
    """The exit status of the process behind an xdist worker `node`, once it ended (None if
    it cannot be known: a remote worker, or one still running after `timeout` seconds).
    execnet keeps the Popen of a local worker on its gateway's io (`_io.popen`: private, so
    looked up with care)."""
    popen = getattr(getattr(getattr(node, "gateway", None), "_io", None), "popen", None)
    if not isinstance(popen, subprocess.Popen):
        return None
    try:
        return popen.wait(timeout)
    except (subprocess.TimeoutExpired, OSError):
        return None


class Boxes:
    """In the xdist controller: a temporary directory with one box per worker started."""

    def __init__(self) -> None:
        self.directory: str | None = None
        self.started = 0

    def new(self, worker: str) -> str | None:
        """The path of a new worker's box (None: no directory for it can be made)."""
        if self.directory is None:
            try:
                self.directory = tempfile.mkdtemp(prefix="autograd-conformance-boxes-")
            except OSError:
                return None
        self.started += 1  # a replaced worker keeps its id: a box of its own all the same
        return os.path.join(self.directory, f"{worker}-{self.started}")

    def remove(self) -> None:
        if self.directory is None:
            return
        for name in os.listdir(self.directory):
            os.unlink(os.path.join(self.directory, name))
        os.rmdir(self.directory)
        self.directory = None

