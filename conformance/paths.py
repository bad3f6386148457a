"""Where the command line and the plugin look for the case library and expectations files.

Paths a user gives (cases, `--expectations`, `--report-dir`) are taken relative to the
working directory, as any command's are. What is found without being named:

- the case library: `./cases`, else the `cases/` of the source checkout this package runs
  from (a clone, installed editable); an installed wheel ships no cases, so they are named;
- `expectations/<engine>.yaml`: looked for, in order, in pytest's rootdir (a clone's root:
  its pyproject.toml), the working directory and the source checkout; the first that exists
  is used. Its `items` patterns match item ids, which are relative to pytest's rootdir.
"""

from __future__ import annotations

from pathlib import Path

import conformance

CASES = "cases"


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
