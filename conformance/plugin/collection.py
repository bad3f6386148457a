"""Collection: case files under the configured paths and those named on the command line
become CaseFiles, each case a CaseItem per device x dtype; a case item's run and its verdict
(run/decision.py) made a pytest outcome; the generated-program suite, the OpInfo items
(plugin/opinfo_items.py) and --devices (the selection). The engine under test is loaded once per
process (plugin/engine_under_test.py)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.case import paths
from conformance.case.diagnostics import CaseError
from conformance.case.load_cache import cache_directory, load_case_cached
from conformance.plugin.engine_under_test import ENGINES, configured_engine  # noqa: F401 (tests patch it here)
from conformance.plugin.items import ConformanceItem, fail
from conformance.plugin.opinfo_items import OpInfoItem
from conformance.plugin.opinfo_items import collect as opinfo_items
from conformance.plugin.options import named
from conformance.plugin.shared import (
    CASE_ROOTS,
    EXPECTATIONS,
    GENERATED_ID,
    IDS,
    TAKEN_IDS,
    is_generated,
)
from conformance.run.decision import decide
from conformance.run.runner import (
    MASKED,
    SKIPPED,
    Item,
    ItemResult,
    describe_failure,
    items_of,
    run_item,
)


def _case_roots(config: pytest.Config) -> tuple[Path, ...]:
    """The configured case paths and the paths named on the command line, absolute,
    symlinks kept as pytest keeps them in collected paths."""
    roots = config.stash.get(CASE_ROOTS, None)
    if roots is None:
        given = [*config.getini("conformance_cases"), *named(config)]
        roots = tuple(Path(os.path.abspath(p)) for p in given)
        config.stash[CASE_ROOTS] = roots
    return roots


def is_case_path(config: pytest.Config, path: Path) -> bool:
    path = Path(os.path.abspath(path))
    return any(path == root or root in path.parents for root in _case_roots(config))


def _case_ids(config: pytest.Config) -> paths.CaseIds:
    ids = config.stash.get(IDS, None)
    if ids is None:
        ids = config.stash[IDS] = paths.CaseIds(_case_roots(config),
                                                 config.invocation_params.dir)
    return ids


def case_file_collector(parent: pytest.Collector, path: Path) -> CaseFile:
    """The collector of the case file `path`, under its id as node id (not one derived from
    pytest's rootdir, which moves with every path on the command line)."""
    ids = _case_ids(parent.config)
    nodeid = ids.of(path)
    case_file = CaseFile.from_parent(parent, path=path, nodeid=nodeid)
    taken = parent.config.stash.setdefault(TAKEN_IDS, {})
    other = taken.setdefault(nodeid, path)
    if other != path:
        case_file.load_error = CaseError(
            f"{other} has the same id; ids must be unique", file=nodeid,
            fix="rename one of the files, or give one project a pyproject.toml of its own "
                "(ids are relative to the project holding the file)")
    return case_file


def _file_or_directory(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file() or entry.is_dir()
    except OSError:  # a symlink loop
        return False


def unreadable_entries(directory: pytest.Dir) -> list[CaseFile]:
    """The `*.yaml` entries of a case directory that are neither files nor directories
    (FIFOs, devices, sockets, dangling symlinks): pytest passes over them without a word;
    here each becomes a case file that fails to load, naming what it is."""
    config = directory.config
    if not is_case_path(config, directory.path) and \
            not any(root.parent == directory.path for root in _case_roots(config)):
        return []
    try:
        entries = sorted(os.scandir(directory.path), key=lambda e: e.name)
    except OSError:  # gone or unreadable since pytest listed it: nothing more to add
        return []
    found = []
    for entry in entries:
        path = Path(entry.path)
        if entry.name.endswith(".yaml") and not _file_or_directory(entry) \
                and is_case_path(config, path) \
                and not directory.ihook.pytest_ignore_collect(collection_path=path,
                                                              config=config):
            found.append(case_file_collector(directory, path))
    return found


class CaseFile(pytest.File):
    load_error: CaseError | None = None

    def collect(self) -> Iterator[pytest.Item]:
        name = self.nodeid  # the file's id: errors and items name it
        try:
            if self.load_error is not None:
                raise self.load_error
            case = load_case_cached(name, self.path, cache_directory())
        except CaseError as e:
            self.load_error = e
            raise self.CollectError(str(e)) from None
        # rerun commands name the file as reachable from where the run started
        file = paths.rerun_path(self.path, self.config.invocation_params.dir)
        for item in items_of(case, file):
            yield CaseItem.from_parent(self, name=item.name, item=item)


class CaseItem(ConformanceItem):
    def __init__(self, *, item: Item, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.conformance_item = item
        self.source_line = item.case.line_offset
        case, device, dtype = item.case, item.device, item.dtype
        self.result: ItemResult | None = None
        self.status: str | None = None  # before the expectations (expectations.status_of)
        self.user_properties.extend([
            ("features", ",".join(case.features)), ("device", device), ("dtype", dtype),
        ])
        for feature in case.features:
            self.add_marker(feature)

    def runtest(self) -> None:
        item = self.conformance_item
        known = self.config.stash[EXPECTATIONS]
        entries = known.applying(item.id, item.device, item.dtype)
        skip = next((e for e in entries if e.skip), None)
        if skip is not None:  # never run (the engine hangs or crashes on it)
            self.status = SKIPPED
            self.result = ItemResult(item, self.config.getoption("--engine"), SKIPPED,
                                     f"skipped by {skip.where(known.path)}: {skip.reason}")
            pytest.skip(self.result.reason)
        self.result = result = run_item(
            item, configured_engine(self.config),
            strict_messages=not self.config.getoption("--lenient-messages"),
            item_timeout=self.config.getoption("--item-timeout"))
        decision = decide(result.verdict, result.reason, entries,
                          timed_out=result.timed_out, listed_in=known.path)
        self.status = decision.status
        result.verdict, result.reason = decision.verdict, decision.reason
        if decision.passes_now is not None:
            entry = decision.passes_now
            fail(f"{item.id}: listed at {entry.where(known.path)} as {entry.expects()}, but "
                 f"it passes now{' but for masked fields' if result.verdict == MASKED else ''}"
                 ": remove or narrow the entry")
        self.conclude(result.verdict, result.reason, lambda: describe_failure(result))

    def black_box_case(self) -> dict[str, Any]:
        """What the black box keeps of this item (blackbox.running), to load it again."""
        item = self.conformance_item
        return {"id": item.case.path, "path": str(self.path), "file": item.file,
                "device": item.device, "dtype": item.dtype, "offset": item.case.line_offset}


class Selection:
    """--generated-programs, --opinfo and --devices. A registered object rather than a
    module-level hook, so that other collection hooks of this plugin can sit beside it."""

    def __init__(self, generated: bool, devices: tuple[str, ...] | None,
                 opinfo: bool = False) -> None:
        self.generated, self.devices, self.opinfo = generated, devices, opinfo

    @pytest.hookimpl(tryfirst=True)  # before -k/-m deselect, so they apply to the suite too
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        if self.generated and not any(i.nodeid == GENERATED_ID for i in items):
            # Collected under a fixed id, not by path (it may also be named by path):
            # installed in site-packages, the file would move pytest's rootdir and so
            # every case id.
            module = pytest.Module.from_parent(session, path=Path(generated_suite_path()),
                                               nodeid=GENERATED_ID.split("::")[0])
            items.extend(i for i in session.genitems(module) if isinstance(i, pytest.Item))
        if self.opinfo and not any(isinstance(i, OpInfoItem) for i in items):
            items.extend(opinfo_items(session))
        if self.devices is None:
            return
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            # generated programs and OpInfo items run on cpu
            device = item.conformance_item.device if isinstance(item, CaseItem) else \
                "cpu" if is_generated(item) or isinstance(item, OpInfoItem) else None
            (keep if device is None or device in self.devices else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep


def generated_suite_path() -> str:
    spec = importlib.util.find_spec("conformance.generated_suite")
    assert spec is not None and spec.origin is not None
    return spec.origin
