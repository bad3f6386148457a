"""Where the command line and the plugin look for the case library and expectations files,
and what a case file's id is.

Paths a user gives (cases, `--expectations`, `--report-dir`) are taken relative to the
working directory, as any command's are. What is found without being named:

- the case library: `./cases`, else the `cases/` of the source checkout this package runs
  from (a clone, installed editable); an installed wheel ships no cases, so they are named;
- `expectations/<engine>.yaml`: looked for, in order, in pytest's rootdir (`run` sets it to
  the working directory), the working directory and the source checkout; the first that
  exists is used.

**Ids.** A case file's id is its path relative to the project it belongs to: the nearest
directory at or above it that holds one of PROJECT_FILES (a clone of this repository: its
root, so `cases/ops/exp.yaml`). A file in no project is named relative to the working
directory when it is under it, else relative to the parent of the outermost path named (on
the command line) that holds it. So an id depends on where the file is, never on the working
directory (within a project), the report directory, the hypothesis database or the other
paths given: `run`, plain `pytest`, `record`, `explain`, `merge`, expectations and the
reports all see the same id. An item's id is `<file id>::<device>-<dtype>`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import conformance

CASES = "cases"
# What marks a project's root: pytest's configuration files (where pytest itself looks),
# packaging files, and a git checkout.
PROJECT_FILES = ("pyproject.toml", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg",
                 "setup.py", ".git")


def source_checkout() -> Path | None:
    """The clone this package runs from, if it runs from one (it has the case library)."""
    root = Path(conformance.__file__).resolve().parents[1]
    return root if (root / CASES).is_dir() and (root / "pyproject.toml").is_file() else None


def default_cases(cwd: Path) -> Path | None:
    if (cwd / CASES).is_dir():
        return Path(CASES)
    checkout = source_checkout()
    return checkout / CASES if checkout is not None else None


def expectation_roots(rootdir: Path, cwd: Path) -> list[Path]:
    roots = [rootdir, cwd]
    checkout = source_checkout()
    if checkout is not None:
        roots.append(checkout)
    unique: list[Path] = []
    for r in roots:
        if r.resolve() not in [u.resolve() for u in unique]:
            unique.append(r)
    return unique


def _absolute(path: str | Path) -> Path:
    """Absolute, symlinks kept (as pytest keeps them in the paths it collects)."""
    return Path(os.path.abspath(path))


def project_of(directory: Path) -> Path | None:
    """The nearest directory at or above `directory` that holds one of PROJECT_FILES."""
    for d in (directory, *directory.parents):
        if any(os.path.lexists(d / name) for name in PROJECT_FILES):
            return d
    return None


class CaseIds:
    """The ids of the case files under `roots` (the paths named), seen from `cwd`: the rule
    of this module's docstring. Each directory's anchor is looked up once."""

    def __init__(self, roots: Iterable[str | Path], cwd: str | Path) -> None:
        self.cwd = _absolute(cwd)
        # outermost first: a file under several named paths is named from the outermost
        self.roots = sorted({_absolute(r) for r in roots}, key=lambda r: len(r.parts))
        self._anchors: dict[Path, Path] = {}

    def anchor(self, file: str | Path) -> Path:
        """The directory `file`'s id is relative to."""
        directory = _absolute(file).parent
        if directory not in self._anchors:
            self._anchors[directory] = self._find_anchor(directory)
        return self._anchors[directory]

    def _find_anchor(self, directory: Path) -> Path:
        project = project_of(directory)
        if project is not None:
            return project
        if directory.is_relative_to(self.cwd):
            return self.cwd
        return next((r.parent for r in self.roots if directory.is_relative_to(r)), directory)

    def of(self, file: str | Path) -> str:
        """The id of the case file `file`: a relative POSIX path."""
        return _absolute(file).relative_to(self.anchor(file)).as_posix()


def locate(path: str, cwd: str | Path) -> list[Path]:
    """Where the case file a user names by `path` (a path, or a file's id) may be: from
    `cwd`, from the project holding `cwd` (ids are relative to it), from the source
    checkout (the library's ids). The places that hold a file come first."""
    cwd = _absolute(cwd)
    bases = [cwd, project_of(cwd), source_checkout()]
    places = list(dict.fromkeys(_absolute(b / path) for b in bases if b is not None))
    return sorted(places, key=lambda p: not p.is_file())


def rerun_path(file: str | Path, cwd: str | Path) -> str:
    """`file` as a command started in `cwd` names it: relative to `cwd` (`../x` included),
    or absolute where the two share no directory but the filesystem's root."""
    file, cwd = _absolute(file), _absolute(cwd)
    if Path(os.path.commonpath([file, cwd])) == Path(file.anchor):
        return file.as_posix()
    return Path(os.path.relpath(file, cwd)).as_posix()


def git_revision(directory: Path) -> tuple[str | None, str | None]:
    """(HEAD's commit of the git repository holding `directory`, None) or (None, why not)."""
    try:
        out = subprocess.run(["git", "-C", str(directory), "rev-parse", "HEAD"],
                             capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as e:
        return None, f"git could not be run ({e})"
    if out.returncode != 0:
        lines = (out.stderr or "").strip().splitlines()
        return None, lines[0] if lines else f"git rev-parse exited {out.returncode}"
    return out.stdout.strip() or None, None


def case_sources(roots: Iterable[str | Path], cwd: str | Path) -> list[dict[str, Any]]:
    """Each directory the case ids of `roots` are relative to, with the git revision of its
    repository (null with the reason where there is none): what the cases ran at."""
    ids = CaseIds(roots, cwd)
    anchors: list[Path] = []
    for root in ids.roots:
        anchor = ids.anchor(root / "x" if root.is_dir() else root)
        if anchor not in anchors:
            anchors.append(anchor)
    sources = []
    for anchor in anchors:
        revision, reason = git_revision(anchor)
        sources.append({"directory": str(anchor), "git_revision": revision, "reason": reason})
    return sources


def revision_of(sources: list[dict[str, Any]]) -> str | None:
    """The case library's revision: the revisions of `sources`, comma-separated."""
    revisions = sorted({str(s["git_revision"]) for s in sources if s.get("git_revision")})
    return ", ".join(revisions) or None
