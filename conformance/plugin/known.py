"""The expectations of a run: the file found or named (--expectations), loaded once in
pytest_configure, its conditions checked against this run's environment; and
--write-expectations, which merges the run into a file when it ends (report/baseline)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.case import paths
from conformance.case.diagnostics import CaseError
from conformance.plugin.shared import EXPECTATIONS
from conformance.report import baseline
from conformance.report import files as report
from conformance.run import expectations

if TYPE_CHECKING:
    from conformance.plugin.controller import Collector


def load_expectations(config: pytest.Config) -> Path | None:
    """Stash the expectations of this run; the file's path (None: no file)."""
    config.stash[EXPECTATIONS] = expectations.NONE
    explicit = config.getoption("--expectations")
    root, cwd = Path(config.rootpath), Path(config.invocation_params.dir)
    path = cwd / explicit if explicit else expectations.find_default(  # explicit: from cwd
        config.getoption("--engine"), paths.expectation_roots(root, cwd))
    if path is None:
        return None
    target = config.getoption("--write-expectations")
    fills_it = bool(target) and (cwd / target).resolve() == path.resolve()
    if explicit and not path.exists() and fills_it:
        return path  # the first run of a baseline: nothing known yet, the file is created
    shown = str(explicit or path)
    with contextlib.suppress(ValueError):  # inside the project: named from its root
        shown = path.resolve().relative_to(root.resolve()).as_posix()
    try:
        known = expectations.load(path, shown, empty_ok=fills_it)
        # the engine is imported for its version only if an entry asks for it; its backend
        # is read when an entry's `backend:` condition is first checked
        known = known.under(_environment(config, any(k.engine_version for k in known.known)))
    except CaseError as e:
        raise pytest.UsageError(str(e)) from None
    config.stash[EXPECTATIONS] = known
    return path


def _environment(config: pytest.Config, version: bool = True) -> expectations.Environment:
    """What entries' conditions are checked against: this process's torch, Python and
    platform, the engine's version as the report's run_info records it (`version`: else
    none), and its backend (read when first needed)."""
    engine = config.getoption("--engine")
    try:
        engine_version = report.engine_version(engine) if version else None
    except Exception:  # an engine without a version: conditions on it never hold
        engine_version = None
    return expectations.Environment.current(engine_version, engine)


def start_baseline(config: pytest.Config, collector: Collector, in_use: Path | None
                    ) -> None:
    """--write-expectations FILE: merge the run into FILE when it ends."""
    target, prune = config.getoption("--write-expectations"), \
        config.getoption("--prune-expectations")
    if not target:
        if prune:
            raise pytest.UsageError("--prune-expectations goes with --write-expectations FILE "
                                    "(the file to remove stale entries from)")
        return
    path = Path(config.invocation_params.dir) / target  # as the user named it, from cwd
    collector.merged_into_use = in_use is not None and in_use.resolve() == path.resolve()
    config.pluginmanager.register(baseline.Writer(
        path, str(target), lambda: collector.records, lambda: collector.matched,
        config.getoption("--engine"), _environment(config), bool(prune),
        collector.merged_into_use), "conformance-baseline")
