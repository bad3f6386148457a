"""The pytest plugin: YAML cases become test items, one per case x device x dtype.

Registered through the `pytest11` entry point, so `pytest cases/` (and `pytest` at the
project root) collects every `cases/**/*.yaml`. A malformed file fails collection of that
file alone, with file, line and fix. Item ids look like
`cases/retain_graph/backward_twice.yaml::cpu-float32`.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance import expectations, limits, profiles, report
from conformance.diagnostics import CaseError
from conformance.engines import DEFAULT_ENGINE, Engine, load_engine
from conformance.generated import HitRates
from conformance.loader import Case, load_case
from conformance.report import error_record
from conformance.runner import (
    DIVERGES,
    KNOWN,
    PASS,
    SKIPPED,
    Item,
    ItemResult,
    describe_failure,
    items_of,
    run_item,
    torch_version,
)
from conformance.runner import torch_engine as torch_engine_
from conformance.vocabulary import FEATURES

RESULT_PROPERTY = "conformance_result"
# ids of case items: path.yaml::device-dtype
_CASE_ID = re.compile(r"\.yaml::(cpu|cuda)-float(32|64)$")
HITS_PROPERTY = "conformance_generated_hits"
MATCHED_PROPERTY = "conformance_known_matched"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("autograd-conformance")
    group.addoption("--engine", default=DEFAULT_ENGINE,
                    help="importable module of the engine under test (default: %(default)s)")
    group.addoption("--conformance-report", default=None, metavar="DIR",
                    help="write conformance.json and summary.md for this run into DIR")
    group.addoption("--lenient-messages", action="store_true",
                    help="pass items whose only difference from torch is an exact "
                         "error/warning text (kinds must still agree)")
    group.addoption("--expectations", default=None, metavar="FILE",
                    help="known divergences of the engine under test (default: "
                         "expectations/<engine>.yaml when it exists)")
    group.addoption("--strict-expectations", action="store_true",
                    help="fail the run when an expectations entry matches nothing")
    group.addoption("--save-divergences", default=None, metavar="DIR",
                    help="write each shrunk divergence of a generated program to DIR as a "
                         "ready YAML case")
    group.addoption("--item-timeout", type=float, default=limits.DEFAULT_ITEM_TIMEOUT,
                    metavar="SECONDS",
                    help="wall-clock limit of one case item, or of one generated program "
                         "(both engines' runs); an item over it is an error naming the line "
                         "running (default: %(default)s; 0: none)")


def _in_cases_dir(path: Path) -> bool:
    return "cases" in path.parts[:-1]


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix == ".yaml" and _in_cases_dir(file_path):
        return CaseFile.from_parent(parent, path=file_path)
    return None


class CaseFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        rel = Path(self.config.rootpath)
        try:
            path = self.path.relative_to(rel)
        except ValueError:
            path = self.path
        try:
            case = load_case(path.as_posix() if not path.is_absolute() else path,
                             self.path.read_text(encoding="utf-8"))
        except CaseError as e:
            raise self.CollectError(str(e)) from None
        for item in items_of(case):
            yield CaseItem.from_parent(self, name=item.name, case=case, device=item.device,
                                       dtype=item.dtype)


_ENGINES: dict[str, Engine] = {}


def _engine(config: pytest.Config) -> Engine:
    name = config.getoption("--engine")
    if name not in _ENGINES:
        _ENGINES[name] = load_engine(name)
    return _ENGINES[name]


class ConformanceFailure(Exception):
    pass


class CaseItem(pytest.Item):
    def __init__(self, *, case: Case, device: str, dtype: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.conformance_item = Item(case, device, dtype)
        self.result: ItemResult | None = None
        self.user_properties.extend([
            ("features", ",".join(case.features)), ("device", device), ("dtype", dtype),
        ])
        for feature in case.features:
            self.add_marker(feature)

    def runtest(self) -> None:
        engine = _engine(self.config)
        item = self.conformance_item
        self.result = result = run_item(
            item, engine, strict_messages=not self.config.getoption("--lenient-messages"),
            item_timeout=self.config.getoption("--item-timeout"))
        if result.verdict == SKIPPED:
            pytest.skip(result.reason)
        expectations = self.config.stash[_EXPECTATIONS]
        known = expectations.for_item(item.id, item.device, item.dtype, torch_version())
        if known is not None:
            _MATCHED.add(known.index)
            where = known.where(expectations.path)
            if result.verdict == DIVERGES:
                result.verdict = KNOWN
                result.reason = f"known divergence ({where}): {known.reason}"
                pytest.xfail(result.reason)
            if result.verdict == PASS:
                raise ConformanceFailure(
                    f"{item.id}: listed as a known divergence at {where}, but it passes now: "
                    "remove or narrow the entry")
        if result.verdict != PASS:
            raise ConformanceFailure(describe_failure(result))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)  # type: ignore[return-value]

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.conformance_item.case.line_offset, self.nodeid


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[None]:
    outcome = yield
    rep = outcome.get_result()  # type: ignore[attr-defined]
    if rep.when == "call" and _MATCHED:
        rep.user_properties.append((MATCHED_PROPERTY, json.dumps(sorted(_MATCHED))))
    if _is_generated(item) and rep.when == "call":
        rep.user_properties.append((HITS_PROPERTY, json.dumps(_GENERATED_LOG.as_dict())))
        rep.user_properties.append((RESULT_PROPERTY, json.dumps(
            report.generated_record(item.nodeid, item.config.getoption("--engine"),
                                    rep.outcome, str(rep.longrepr) if rep.failed else ""))))
    if isinstance(item, CaseItem) and rep.when == "call":
        # user_properties travel from xdist workers to the controller, so the report
        # written there sees every worker's results.
        record = report.item_record(item.conformance_item, item.result, rep.outcome,
                                    str(rep.longrepr) if rep.failed else "")
        rep.user_properties.append((RESULT_PROPERTY, json.dumps(record)))


class _Collector:
    """In the controller: every item's record and the generated programs' hit counts."""

    def __init__(self, known: expectations.Expectations) -> None:
        self.records: list[dict[str, Any]] = []
        self.hits = HitRates()
        self.known = known
        self.matched: set[int] = set()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        recorded = False
        for name, value in report.user_properties:
            if name == RESULT_PROPERTY:
                self.records.append(json.loads(str(value)))
                recorded = True
            elif name == HITS_PROPERTY:
                self.hits.merge(HitRates.from_dict(json.loads(str(value))))
            elif name == MATCHED_PROPERTY:
                self.matched.update(json.loads(str(value)))
        # An item that failed without a record of its own (an xdist worker that crashed
        # under it, an error in setup) still appears in the report, as an error.
        if report.failed and not recorded and _CASE_ID.search(report.nodeid):
            self.records.append(error_record(report.nodeid, str(report.longrepr)))

    def unmatched(self) -> list[expectations.Known]:
        return [k for k in self.known.known if k.index not in self.matched]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.hits.programs:
            terminalreporter.write_sep("-", "generated programs: hit rates")
            terminalreporter.write_line(self.hits.table())
        for k in self.unmatched():
            terminalreporter.write_line(
                f"expectations: the entry at {k.where(self.known.path)} matched nothing in "
                "this run (remove it if the divergence is gone)")


# ---- generated programs -----------------------------------------------------------------
# Hit counts of the generated-program items run in this process (reset per item).
_GENERATED_LOG = HitRates()


@pytest.fixture(scope="session")
def conformance_engine(pytestconfig: pytest.Config) -> Engine:
    """The engine under test (--engine)."""
    return _engine(pytestconfig)


@pytest.fixture(scope="session")
def torch_engine() -> Engine:
    return torch_engine_()


@pytest.fixture(scope="session")
def conformance_item_timeout(pytestconfig: pytest.Config) -> float:
    """--item-timeout: seconds one generated program may run (0: none)."""
    return float(pytestconfig.getoption("--item-timeout"))


@pytest.fixture(scope="session")
def generated_log() -> HitRates:
    return _GENERATED_LOG


@pytest.fixture(scope="session")
def known_divergences(pytestconfig: pytest.Config) -> expectations.Expectations:
    return pytestconfig.stash[_EXPECTATIONS]


@pytest.fixture(scope="session")
def matched_expectations() -> set[int]:
    return _MATCHED


@pytest.fixture(scope="session")
def save_divergences(pytestconfig: pytest.Config) -> str | None:
    value = pytestconfig.getoption("--save-divergences")
    return None if value is None else str(value)


def _is_generated(item: pytest.Item) -> bool:
    return "generated_log" in getattr(item, "fixturenames", ())


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _is_generated(item):
        _GENERATED_LOG.programs = 0
        _GENERATED_LOG.counts.clear()


def pytest_configure(config: pytest.Config) -> None:
    for name, meaning in FEATURES.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")
    try:
        config.stash[_PROFILE] = profiles.load(config.getoption("hypothesis_profile", None))
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    config.stash[_EXPECTATIONS] = _load_expectations(config)
    _MATCHED.clear()  # one session's matches (a process may run several, e.g. pytester)
    if not hasattr(config, "workerinput"):
        collector = _Collector(config.stash[_EXPECTATIONS])
        config.stash[_COLLECTOR] = collector
        config.pluginmanager.register(collector, "conformance-collector")
        config.stash[_STARTED] = report.now()


def _load_expectations(config: pytest.Config) -> expectations.Expectations:
    explicit = config.getoption("--expectations")
    path = Path(explicit) if explicit else expectations.default_path(
        Path(config.rootpath), config.getoption("--engine"))
    if not explicit and not path.exists():
        return expectations.NONE
    with contextlib.suppress(ValueError):  # outside the project: keep it as given
        path = path.resolve().relative_to(Path(config.rootpath).resolve())
    try:
        return expectations.load(path)
    except CaseError as e:
        raise pytest.UsageError(str(e)) from None


# Indices of expectations entries matched by items run in this process.
_MATCHED: set[int] = set()
_EXPECTATIONS = pytest.StashKey[expectations.Expectations]()
_COLLECTOR = pytest.StashKey[_Collector]()
_PROFILE = pytest.StashKey[str]()
_STARTED = pytest.StashKey[float]()


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    collector = config.stash.get(_COLLECTOR, None)
    if collector is None:
        return
    if config.getoption("--strict-expectations") and collector.unmatched() and \
            session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if not config.getoption("--conformance-report"):
        return
    directory = Path(config.getoption("--conformance-report"))
    paths = report.write(directory, collector.records,
                         engine=config.getoption("--engine"), started=config.stash[_STARTED],
                         profile=config.stash[_PROFILE], generated=collector.hits,
                         known=collector.known, unmatched=collector.unmatched(),
                         seed=config.getoption("hypothesis_seed", None))
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_sep("-", f"conformance report: {', '.join(str(p) for p in paths)}")
