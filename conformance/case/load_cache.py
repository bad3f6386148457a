"""Loaded case files kept between collections: every pytest process (each xdist worker, each
subprocess run) loads every case file, and loading (PyYAML's pure-Python composer, the
program's parse into the IR) was a third of collection; unpickling the loaded Case costs
about a fifth of it.

An entry is found by a key that holds everything the loaded Case depends on, so a stale one
is never found: the file's text as read, the name it is loaded under (its id: a Case names
it, and so do its errors), and the code that loads it (every source file of the case
format's package and of the reference engine, whose registry is the case language's API
table, with the versions of Python, PyYAML and NumPy). A file or a loader that changes
gives a new key; an entry that cannot be read back as the Case of that name and text is
loaded afresh and written again. Only a file that loads is kept: a CaseError is raised
afresh every time, from the file. The loaded Case is the same object either way, compared
field by field (tests/conformance/test_load_cache.py): collection is identical on every
worker, with or without entries.

The entries live in the user's cache directory, `$XDG_CACHE_HOME/autograd-conformance/cases`
(`~/.cache/...` without it), in a folder per fingerprint of the code (the 8 most recently made
are kept: a change of the engine or the case format starts a new one), or in the folder
AUTOGRAD_CONFORMANCE_CACHE names; set empty, nothing is kept. Unpickling an entry trusts
that folder as much as the code that runs: it is the user's own, as is ~/.cache/pip's, and a
folder another user owns or can write to is not used at all.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import pickle
import platform
import shutil
import tempfile
from pathlib import Path

import numpy
import yaml

from conformance.case.loader import Case, load_case, read_case_text

# The packages whose code makes a loaded Case: the case format's, and the reference engine's
# (its registry is the case language's API table, conformance.case.api).
_CODE = (Path(__file__).resolve().parent, "reference_engine")


@functools.cache
def code_fingerprint() -> str:  # read when this module is imported (below)
    """A digest of the code and versions a loaded Case depends on (see the module)."""
    digest = hashlib.sha256(
        f"{platform.python_version()}\0{yaml.__version__}\0{numpy.__version__}\0".encode())
    for where in _CODE:
        if isinstance(where, str):  # a package found without importing it here
            spec = importlib.util.find_spec(where)
            roots: list[str | Path] = [] if spec is None else \
                list(spec.submodule_search_locations or ())
        else:
            roots = [where]
        for root in map(Path, roots):
            for source in sorted(root.rglob("*.py")):
                digest.update(str(source.relative_to(root)).encode() + b"\0")
                digest.update(source.read_bytes() + b"\0")
    return digest.hexdigest()


# Read now, with the code of this process just loaded (the loader and the reference engine are
# imported above), not at a later first use: an edit in between would be read as the code
# that made the entries.
code_fingerprint()

# The folders of other fingerprints kept beside the current one.
KEPT_FINGERPRINTS = 8
CACHE_VARIABLE = "AUTOGRAD_CONFORMANCE_CACHE"


@functools.cache
def cache_directory() -> Path | None:
    """This process's folder of entries (made if need be), or None: no entries."""
    configured = os.environ.get(CACHE_VARIABLE)
    if configured is not None:
        if not configured:
            return None
        root = Path(configured)
    else:
        home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = Path(home) / "autograd-conformance" / "cases"
    directory = root / code_fingerprint()[:32]
    try:
        if not directory.is_dir():
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            _prune(root, directory)
        status = directory.stat()
    except OSError:  # a read-only home: every file loaded afresh
        return None
    # Entries are unpickled: a folder that another user owns or can write to (a cache
    # variable pointing into /tmp, say) could hold what they planted, so none is read.
    if status.st_uid != os.getuid() or status.st_mode & 0o022:
        return None
    return directory


def _prune(root: Path, current: Path) -> None:
    """Remove the folders of all but the KEPT_FINGERPRINTS most recently made other
    fingerprints (another process may still read one: it then loads afresh)."""
    try:
        others = sorted((p for p in root.iterdir() if p.is_dir() and p != current),
                        key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in others[KEPT_FINGERPRINTS:]:
        shutil.rmtree(old, ignore_errors=True)


def load_case_cached(name: str, path: Path, directory: Path | None) -> Case:
    """`load_case(name, read_case_text(path, name))`, from an entry in `directory` when one
    was kept for this text, name and code (None: no entry is read or written)."""
    text = read_case_text(path, name)
    if directory is None:
        return load_case(name, text)
    key = hashlib.sha256(f"{code_fingerprint()}\0{name}\0{text}".encode()).hexdigest()
    entry = directory / f"{key}.pickle"
    try:
        case = pickle.loads(entry.read_bytes())
    except Exception:  # none yet, or unreadable: loaded afresh below
        case = None
    if isinstance(case, Case) and case.path == name:  # (the key holds the text)
        return case
    case = load_case(name, text)  # a CaseError goes to the caller, and nothing is kept
    try:
        data = pickle.dumps(case, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a program holding a value pickle refuses: loaded every time
        return case
    _write(entry, data)
    return case


def _write(entry: Path, data: bytes) -> None:
    """`data` into `entry` whole or not at all (another worker may read or write it at the
    same time: each writes a file of its own, then renames it into place); a failure to
    write (a read-only tree, a full disk) only means no entry."""
    try:
        fd, temporary = tempfile.mkstemp(dir=entry.parent, prefix=".case-")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, entry)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
