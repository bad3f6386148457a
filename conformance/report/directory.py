"""The report directory: its files replaced as one set, and one run at a time.

A reader (a CI step, a browser reloading index.html) sees the previous report or the new one,
never half of a file, and a failed write (a full disk, `ulimit -f`, a directory that refuses
new files) leaves the previous set whole: every file is first written to a temporary file in
the same directory, and only when all are written are they renamed over the old ones (an old
file is kept under a temporary name until the last rename succeeded, and put back if one
fails). Two runs into one directory would leave a mix of both runs' files, so a run holds an
exclusive lock on `DIR/.lock` from its start to its end and a second run is refused at once,
with the fix.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # Windows: no advisory locks through fcntl; runs are not serialized
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".lock"


@dataclass
class ReportOutcome:
    """What one run did with its report directory (the plugin's account, for `run`'s last
    line: cli/final_line)."""

    written: bool = False
    status: str | None = None  # the run's status line, written or not
    torch_version: str | None = None
    error: str | None = None  # why nothing was written
    refused: bool = False  # another run holds the directory


def shown(path: Path | str) -> str:
    """A path as a message line shows it: quoted, with escapes, when it holds a newline, an
    escape sequence or the like, which would end the line or redraw the terminal."""
    text = str(path)
    return text if text.isprintable() else json.dumps(text)


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8) so that no reader ever sees a partial file."""
    write_set(path.parent, {path.name: text})


def write_set(directory: Path, files: dict[str, str]) -> list[Path]:
    """Replace the files `files` names in `directory` (name -> UTF-8 text) as one set: all or
    none. On an OSError nothing of the new set stays, the old files are as they were, and no
    temporary file is left; the error is raised again."""
    temps: dict[str, str] = {}
    try:
        for name, text in files.items():
            temps[name] = _temporary(directory, name, text)
    except BaseException:
        _remove(temps.values())
        raise
    kept: dict[str, str | None] = {}  # name -> the old file's second name (None: no file)
    replaced: list[str] = []
    try:
        for name, temp in temps.items():
            target = directory / name
            kept[name] = _keep(target) if target.exists() else None
            os.replace(temp, target)
            replaced.append(name)
    except BaseException:
        _roll_back(directory, kept, replaced)
        _remove(temps.values())
        raise
    _remove(k for k in kept.values() if k is not None)
    return [directory / name for name in files]


def _temporary(directory: Path, name: str, text: str) -> str:
    fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, 0o644)  # mkstemp's 0600 would hide the report from a web server
    except BaseException:
        _remove([temp])
        raise
    return temp


def _keep(target: Path) -> str:
    """A second name for the old file (a hard link, so `target` never goes missing for a
    reader), under which it can be put back."""
    # the run holds the directory's lock: a name of its own per process is free of races
    kept = str(target.parent / f".{target.name}.{os.getpid()}.old")
    _remove([kept])  # left by a run killed mid-write
    try:
        os.link(target, kept)
    except OSError:  # a file system without hard links: a copy
        try:
            shutil.copy2(target, kept)
        except BaseException:
            _remove([kept])
            raise
    return kept


def _roll_back(directory: Path, kept: dict[str, str | None], replaced: list[str]) -> None:
    """Put the old files back over the new ones already renamed in. Best effort: an old file
    that cannot be put back keeps its second name beside the new one (nothing is lost), and
    the caller sees the original error."""
    for name, old in kept.items():
        if name in replaced:
            try:
                if old is None:
                    os.unlink(directory / name)  # there was none before this run
                else:
                    os.replace(old, directory / name)
            except OSError:
                pass
            continue
        if old is not None:
            _remove([old])


def _remove(paths: Iterable[str]) -> None:
    for p in list(paths):
        with contextlib.suppress(OSError):
            os.unlink(p)


class ReportDirBusy(Exception):
    pass


class ReportLock:
    """An exclusive, non-blocking lock on DIR/.lock, held by one run until `release`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.created = not directory.exists()
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        """Raises ReportDirBusy (naming the holder's pid and the fix) when another run
        holds the lock, OSError when the directory cannot be made."""
        self.directory.mkdir(parents=True, exist_ok=True)
        f = open(self.directory / LOCK_NAME, "a+", encoding="utf-8")  # noqa: SIM115
        if fcntl is not None:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.seek(0)
                holder = f.read().strip() or "unknown"
                f.close()
                raise ReportDirBusy(
                    f"--conformance-report {shown(self.directory)}: another run (pid {holder}) is "
                    "writing its report there; wait for it to finish, or give this run a "
                    "directory of its own (--conformance-report OTHER_DIR, or "
                    "autograd-conformance run --report-dir OTHER_DIR)") from None
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        self._file = f

    def release(self, wrote: bool) -> None:
        """Unlock. A directory this run made and wrote nothing into is removed again, so a
        run that collected nothing leaves no trace."""
        if self._file is None:
            return
        if not wrote and self.created:
            # still holding the lock, so no other run is inside the directory
            with contextlib.suppress(OSError):
                (self.directory / LOCK_NAME).unlink()
                self.directory.rmdir()
        self._file.close()  # closing drops the flock
        self._file = None
