"""The report directory: files replaced atomically, and one run at a time.

A reader (a CI step, a browser reloading index.html) sees either the previous file or the
new one, never half of one: each file is written to a temporary file in the same directory
and renamed over the old one. Two runs into one directory would leave a mix of both runs'
files (or, before, only the last one's items), so a run holds an exclusive lock on
`DIR/.lock` from its start to its end and a second run is refused at once, with the fix.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # Windows: no advisory locks through fcntl; runs are not serialized
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".lock"


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8) so that no reader ever sees a partial file."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, 0o644)  # mkstemp's 0600 would hide the report from a web server
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


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
                    f"--conformance-report {self.directory}: another run (pid {holder}) is "
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
