"""The pytest plugin: YAML cases become test items, one per case x device x dtype.

Registered through the `pytest11` entry point, so the plugin is active in every pytest run
of the environment; it collects `*.yaml` only under the paths of the `conformance_cases` ini
option (this project's pyproject.toml: `cases`) and under paths named on the command line,
never other projects' YAML. A malformed file fails collection of that file alone, with
file, line and fix, and is an `error` record in the report; the other files' items still
run, even without `--continue-on-collection-errors`. Item ids look like
`cases/retain_graph/backward_twice.yaml::cpu-float32`: the case file's id (case/paths.py:
relative to its project, never to pytest's rootdir) is the pytest node id of its file.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import is_hypothesis_test

from conformance import options
from conformance.case import paths
from conformance.case.diagnostics import CaseError
from conformance.case.loader import load_case, read_case_text
from conformance.case.vocabulary import FEATURES, parse_devices
from conformance.gen import campaign, profiles, progress
from conformance.plugin.session import RunState, collection_error, terminate_as_interrupt
from conformance.report import baseline
from conformance.report import directory as report_dir
from conformance.report import files as report
from conformance.report import generated as generated_report
from conformance.report.files import (
    collection_error_record,
    error_record,
    generated_record,
    item_record,
)
from conformance.report.hit_rates import HitRates
from conformance.report.status import not_written
from conformance.run import blackbox, crash, expectations
from conformance.run.engine import DEFAULT_ENGINE, Engine, load_engine
from conformance.run.runner import (
    DIVERGES,
    ERROR,
    KNOWN,
    MASKED,
    PASS,
    SKIPPED,
    Item,
    ItemResult,
    describe_failure,
    items_of,
    run_item,
)
from conformance.run.runner import torch_engine as torch_engine_

RESULT_PROPERTY = "conformance_result"
# ids of case items: path.yaml::device-dtype
_CASE_ID = re.compile(r"\.yaml::(cpu|cuda)-float(32|64)$")
HITS_PROPERTY = "conformance_generated_hits"
MATCHED_PROPERTY = "conformance_known_matched"
# The record of a case file that failed to load, carried on its CollectReport (whose extra
# attributes travel from xdist workers to the controller).
LOAD_ERROR_ATTRIBUTE = "conformance_load_error"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("autograd-conformance")
    options.add_to_pytest(group)  # those `run` shares (conformance/options.py)
    group.addoption("--conformance-report", default=None, metavar="DIR",
                    help="write conformance.json and summary.md for this run into DIR")
    group.addoption("--generated-programs", action="store_true",
                    help="also run the generated-program suite (conformance/"
                         "generated_suite.py), wherever the package is installed")
    if importlib.util.find_spec("pytest_timeout") is None:
        # this project's pyproject.toml sets pytest-timeout's backstop (a dev dependency):
        # known here, so that a run without it installed does not warn of an unknown option
        parser.addini("timeout", "pytest-timeout's limit per test (not installed: unused)")
    parser.addini("conformance_cases", type="paths", default=[],
                  help="where YAML case files are collected from (relative to the ini "
                       "file); YAML under paths named on the command line is collected too")


def _named(config: pytest.Config) -> list[Path]:
    """The paths named on the command line (not testpaths: naming a folder there is no
    request for its YAML)."""
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        return []
    return [config.invocation_params.dir / arg.split("::")[0] for arg in config.args]


def _case_roots(config: pytest.Config) -> tuple[Path, ...]:
    """The configured case paths and the paths named on the command line, absolute,
    symlinks kept as pytest keeps them in collected paths."""
    roots = config.stash.get(_CASE_ROOTS, None)
    if roots is None:
        given = [*config.getini("conformance_cases"), *_named(config)]
        roots = tuple(Path(os.path.abspath(p)) for p in given)
        config.stash[_CASE_ROOTS] = roots
    return roots


def _is_case_path(config: pytest.Config, path: Path) -> bool:
    path = Path(os.path.abspath(path))
    return any(path == root or root in path.parents for root in _case_roots(config))


def _case_ids(config: pytest.Config) -> paths.CaseIds:
    ids = config.stash.get(_IDS, None)
    if ids is None:
        ids = config.stash[_IDS] = paths.CaseIds(_case_roots(config),
                                                 config.invocation_params.dir)
    return ids


def _case_file(parent: pytest.Collector, path: Path) -> CaseFile:
    """The collector of the case file `path`, under its id as node id (not one derived from
    pytest's rootdir, which moves with every path on the command line)."""
    ids = _case_ids(parent.config)
    nodeid = ids.of(path)
    case_file = CaseFile.from_parent(parent, path=path, nodeid=nodeid)
    taken = parent.config.stash.setdefault(_TAKEN_IDS, {})
    other = taken.setdefault(nodeid, path)
    if other != path:
        case_file.load_error = CaseError(
            f"{other} has the same id; ids must be unique", file=nodeid,
            fix="rename one of the files, or give one project a pyproject.toml of its own "
                "(ids are relative to the project holding the file)")
    return case_file


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix == ".yaml" and _is_case_path(parent.config, file_path):
        return _case_file(parent, file_path)
    return None


def _file_or_directory(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file() or entry.is_dir()
    except OSError:  # a symlink loop
        return False


def _unreadable_entries(directory: pytest.Dir) -> list[CaseFile]:
    """The `*.yaml` entries of a case directory that are neither files nor directories
    (FIFOs, devices, sockets, dangling symlinks): pytest passes over them without a word;
    here each becomes a case file that fails to load, naming what it is."""
    config = directory.config
    if not _is_case_path(config, directory.path) and \
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
                and _is_case_path(config, path) \
                and not directory.ihook.pytest_ignore_collect(collection_path=path,
                                                              config=config):
            found.append(_case_file(directory, path))
    return found


class CaseFile(pytest.File):
    load_error: CaseError | None = None

    def collect(self) -> Iterator[pytest.Item]:
        name = self.nodeid  # the file's id: errors and items name it
        try:
            if self.load_error is not None:
                raise self.load_error
            case = load_case(name, read_case_text(self.path, name))
        except CaseError as e:
            self.load_error = e
            raise self.CollectError(str(e)) from None
        # rerun commands name the file as reachable from where the run started
        file = paths.rerun_path(self.path, self.config.invocation_params.dir)
        for item in items_of(case, file):
            yield CaseItem.from_parent(self, name=item.name, item=item)


_ENGINES: dict[str, Engine] = {}


def _engine(config: pytest.Config) -> Engine:
    name = config.getoption("--engine")
    cached = _ENGINES.get(name)
    # pytester's in-process runs drop the modules they imported when they end: an engine
    # first imported inside one is imported again, or its lazy imports would build a second
    # copy of its classes beside the first and fail later items (isinstance checks)
    if cached is None or sys.modules.get(name) is not cached.module:
        # the invocation directory, also in xdist workers: `--engine my_engine` finds
        # my_engine.py there, as the printed rerun commands expect
        _ENGINES[name] = load_engine(name, Path(config.invocation_params.dir))
    return _ENGINES[name]


class ConformanceFailure(Exception):
    pass


class CaseItem(pytest.Item):
    def __init__(self, *, item: Item, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.conformance_item = item
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
        known = self.config.stash[_EXPECTATIONS]
        entries = known.applying(item.id, item.device, item.dtype)
        skip = next((e for e in entries if e.skip), None)
        if skip is not None:  # never run (the engine hangs or crashes on it)
            self.status = SKIPPED
            self.result = ItemResult(item, self.config.getoption("--engine"), SKIPPED,
                                     f"skipped by {skip.where(known.path)}: {skip.reason}")
            pytest.skip(self.result.reason)
        self.result = result = run_item(
            item, _engine(self.config),
            strict_messages=not self.config.getoption("--lenient-messages"),
            item_timeout=self.config.getoption("--item-timeout"))
        self.status = expectations.status_of(result.verdict, result.timed_out)
        if result.verdict == SKIPPED:
            pytest.skip(result.reason)
        decision = expectations.decide(self.status, entries)
        if decision.known and decision.entry is not None:
            result.verdict = KNOWN
            result.reason = _known(known, decision.entry, self.status, result.reason)
            pytest.xfail(result.reason)
        if decision.passes_now is not None:
            entry = decision.passes_now
            raise ConformanceFailure(
                f"{item.id}: listed at {entry.where(known.path)} as {entry.expects()}, but "
                f"it passes now{' but for masked fields' if result.verdict == MASKED else ''}"
                ": remove or narrow the entry")
        if result.verdict == MASKED:
            pytest.xfail(result.reason)
        if result.verdict != PASS:
            raise ConformanceFailure(describe_failure(result))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)  # type: ignore[return-value]

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.conformance_item.case.line_offset, self.nodeid

    def black_box_case(self) -> dict[str, Any]:
        """What the black box keeps of this item (blackbox.running), to load it again."""
        item = self.conformance_item
        return {"id": item.case.path, "path": str(self.path), "file": item.file,
                "device": item.device, "dtype": item.dtype, "offset": item.case.line_offset}


def _known(known: expectations.Expectations, entry: expectations.Known, status: str,
           reason: str) -> str:
    """The reason of an item whose status `entry` allows (its verdict is `known`)."""
    what = "divergence" if status == DIVERGES else status
    detail = "" if status == DIVERGES else f" [{reason}]"
    return f"known {what} ({entry.where(known.path)}): {entry.reason}{detail}"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None
                            ) -> Generator[None, object, object]:
    """The black box names the item running (should its process die in it)."""
    case = item.black_box_case() if isinstance(item, CaseItem) else None
    with blackbox.running(item.nodeid, case, _is_generated(item)):
        return (yield)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[None]:
    outcome = yield
    rep = outcome.get_result()  # type: ignore[attr-defined]
    if rep.when == "call" and _MATCHED:
        rep.user_properties.append((MATCHED_PROPERTY, json.dumps(sorted(_MATCHED))))
    if _is_generated(item) and rep.when == "call":
        rep.user_properties.append((HITS_PROPERTY, json.dumps(_GENERATED_LOG.as_dict())))
        rep.user_properties.append((RESULT_PROPERTY, json.dumps(generated_report.record(
            item, call, rep, item.config.stash[_PROFILE]))))
    if isinstance(item, CaseItem) and rep.when == "call":
        # user_properties travel from xdist workers to the controller, so the report
        # written there sees every worker's results.
        record = report.item_record(item.conformance_item, item.result, rep.outcome,
                                    str(rep.longrepr) if rep.failed else "")
        if item.status is not None:
            record["status"] = item.status
        rep.user_properties.append((RESULT_PROPERTY, json.dumps(record)))


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector
                               ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    rep = yield
    if isinstance(collector, pytest.Dir) and rep.passed:
        rep.result.extend(_unreadable_entries(collector))
    if isinstance(collector, CaseFile) and rep.failed:
        text = str(rep.longrepr)
        e = collector.load_error
        record = collection_error_record(
            rep.nodeid, rep.nodeid if e is None else e.file, None if e is None else e.line,
            text if e is None else e.message, text)
        setattr(rep, LOAD_ERROR_ATTRIBUTE, json.dumps(record))
        stash = collector.config.stash
        stash[_LOAD_ERRORS] = stash.get(_LOAD_ERRORS, 0) + 1
    return rep


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    """A case file that fails to load is an error of its own (its record, pytest's "ERROR
    collecting"); the other files' items still run, as with `--continue-on-collection-errors`
    but for case files only: pytest aborts the whole run on any collection error, and a
    user's project does not set that flag. Other files' collection errors abort as pytest's
    configuration says (counting every error). The errors count again once the items have
    run, so the exit status is a failure."""
    loads = session.config.stash.get(_LOAD_ERRORS, 0)
    hidden = session.testsfailed if session.testsfailed <= loads else 0
    session.testsfailed -= hidden
    try:
        return (yield)
    finally:
        session.testsfailed += hidden


class _Collector:
    """In the controller: every item's record and the generated programs' hit counts."""

    def __init__(self, known: expectations.Expectations, engine: str) -> None:
        self.engine = engine
        self.records: list[dict[str, Any]] = []
        self.hits = HitRates()
        self.known = known
        self.matched: set[int] = set()
        self.load_errors: set[str] = set()  # node ids of files that failed to collect
        self.merged_into_use = False  # --write-expectations names the file in use
        self.boxes = blackbox.Boxes()  # the xdist workers' black boxes

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Each xdist worker keeps a black box, read if it dies running an item."""
        box = self.boxes.new(str(node.workerinput["workerid"]))
        if box is not None:
            node.workerinput[blackbox.WORKER_INPUT] = box

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport,
                               sched: Any) -> None:
        """An xdist worker died running `crashitem`: its record, from the worker's black
        box, names the line and the cause (the watchdog past the item's time limit: status
        `timeout`, which the expectations may allow; else the worker's exit status)."""
        node = getattr(report, "node", None)
        box = (getattr(node, "workerinput", None) or {}).get(blackbox.WORKER_INPUT)
        record = None if box is None else blackbox.read(str(box))
        who = f"worker {getattr(getattr(node, 'gateway', None), 'id', '?')!r}"
        account = blackbox.account(record, crashitem, who, blackbox.exit_status(node))
        text = f"{crashitem}: error: {crash.reason(account)}"
        if record is not None and record.watchdog:
            text += f"\n\nthe watchdog's dump of the worker's threads:\n{record.dump}"
        report.longrepr = text
        if crashitem.endswith("::" + GENERATED_TEST):
            result = generated_record(crashitem, self.engine, "failed", text)
            result["reason"] = crash.reason(account)
        elif _CASE_ID.search(crashitem):
            result = self._crashed_case(crashitem, report, account, text)
        else:
            return
        report.user_properties.append((RESULT_PROPERTY, json.dumps(result)))

    def _crashed_case(self, nodeid: str, report: pytest.TestReport,
                      account: blackbox.Account, text: str) -> dict[str, Any]:
        status = expectations.TIMEOUT if account.timed_out else None  # else: no verdict
        item = crash.crashed_item(account)
        if item is None:  # the box ran another item, or the case no longer loads
            record = error_record(nodeid, crash.reason(account))
            record["report"] = text
        else:
            result = ItemResult(item, self.engine, ERROR, crash.reason(account),
                                timed_out=account.timed_out)
            if status is not None:
                decision = expectations.decide(
                    status, self.known.applying(item.id, item.device, item.dtype))
                if decision.known and decision.entry is not None:  # as CaseItem.runtest
                    result.verdict = KNOWN
                    result.reason = _known(self.known, decision.entry, status, result.reason)
                    report.outcome = "skipped"  # an expected failure (pytest.xfail's report)
                    report.wasxfail = result.reason
            record = item_record(item, result, report.outcome, text)
            record["report"] = text
        if status is not None:
            record["status"] = status
        return record

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
        # under it, a watchdog's kill, an error in setup) still appears in the report, as an
        # error: a case item, or the generated-program item.
        if report.failed and not recorded:
            if _CASE_ID.search(report.nodeid):
                self.records.append(error_record(report.nodeid, str(report.longrepr)))
            elif report.nodeid.endswith("::" + GENERATED_TEST):
                record = generated_record(report.nodeid, self.engine, "failed",
                                          str(report.longrepr))
                record["reason"] = str(report.longrepr)[-2000:]  # "worker 'gw0' crashed..."
                self.records.append(record)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # Every file that failed to collect is one error record: a case file's carries the
        # loader's file, line and message; any other's is read from pytest's text. Under
        # xdist every worker collects every file, and a file is recorded once.
        if not report.failed or report.nodeid in self.load_errors:
            return
        self.load_errors.add(report.nodeid)
        carried = getattr(report, LOAD_ERROR_ATTRIBUTE, None)
        self.records.append(json.loads(str(carried)) if carried is not None
                            else collection_error(report.nodeid, str(report.longrepr)))

    def stale(self) -> list[tuple[expectations.Known, str]]:
        """Entries that apply to items that ran, none of which needed them (an entry for
        items outside this run's selection is not judged)."""
        return baseline.usage(self.known, self.records, self.matched).stale

    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        if self.hits.programs and config.getoption("--hit-rates"):
            terminalreporter.write_sep("-", "generated programs: hit rates")
            terminalreporter.write_line(self.hits.table())
        elif self.hits.programs:
            terminalreporter.write_line(f"{self.hits.one_line()} (the table: --hit-rates, "
                                        "or the report's summary.md and conformance.json)")
        if self.merged_into_use:
            return  # the update listed them, with what it did
        for k, why in self.stale():
            terminalreporter.write_line(
                f"expectations: the entry at {k.where(self.known.path)} is stale: {why} "
                "(remove it; --write-expectations FILE --prune-expectations does)")


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
def generated_progress(pytestconfig: pytest.Config) -> progress.Progress:
    """Counts and rates of generated programs, printed while a long run goes on."""
    return progress.Progress(progress.terminal_writer(pytestconfig))


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


# The generated-program test's name (conformance/generated_suite.py); not imported here, as
# importing that module decorates the test with whatever hypothesis profile is loaded then.
GENERATED_TEST = "test_generated_programs_agree_with_torch"
GENERATED_ID = f"conformance/generated_suite.py::{GENERATED_TEST}"


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _is_generated(item):
        _GENERATED_LOG.programs = 0
        _GENERATED_LOG.counts.clear()


# After hypothesis' own pytest_configure, which loads --hypothesis-profile and sets
# --hypothesis-seed: the profile loaded here (with the example database) must be the last.
@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    for name, meaning in FEATURES.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")
    try:
        spec = config.getoption("--hypothesis-db")
        database = None if spec is None else campaign.open_database(str(spec))
        config.stash[_PROFILE] = profiles.load(config.getoption("hypothesis_profile", None),
                                               database)
        _start_shard(config, None if spec is None else str(spec))
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    try:  # once, here: a wrong --engine is one usage error, not a traceback per item
        # (this package's own engine is imported when first used: the plugin is loaded in
        # every pytest run of the environment, and most never run a case)
        if config.getoption("--engine") != DEFAULT_ENGINE:
            _engine(config)
        config.pluginmanager.register(_Selection(
            config.getoption("--generated-programs"), _devices(config)), "conformance-selection")
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    in_use = _load_expectations(config)
    _MATCHED.clear()  # one session's matches (a process may run several, e.g. pytester)
    box = getattr(config, "workerinput", {}).get(blackbox.WORKER_INPUT)
    if box is not None:  # an xdist worker: its black box, named by the controller
        blackbox.assign(str(box))
    if not hasattr(config, "workerinput"):
        collector = _Collector(config.stash[_EXPECTATIONS], config.getoption("--engine"))
        config.add_cleanup(collector.boxes.remove)
        config.stash[_COLLECTOR] = collector
        config.pluginmanager.register(collector, "conformance-collector")
        config.stash[_STARTED] = report.now()
        _start_baseline(config, collector, in_use)
        _start_report(config)


def _start_shard(config: pytest.Config, database: str | None) -> None:
    """--shard: the seed hypothesis tests of this run draw from (None: hypothesis' own)."""
    from hypothesis import core, settings

    text = config.getoption("--shard")
    shard = None if text is None else campaign.parse_shard(str(text))
    seed = None
    if shard is not None:
        given = config.getoption("hypothesis_seed", None)
        if given is not None:
            seed = campaign.shard_seed(shard, given)
            # hypothesis' plugin made --hypothesis-seed a forced seed, which turns the
            # example database off; here it names the campaign, the shard's seed replaces it
            core.global_force_seed = None
        elif settings().derandomize:  # the profile loaded above
            seed = campaign.shard_seed(shard)
    config.stash[_SHARD_SEED] = seed
    config.stash[_CAMPAIGN] = campaign.describe(database, shard, seed)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A hypothesis test of a shard draws from the shard's seed, as with `@seed(...)`, but
    keeping the example database (`@seed` turns it off). A test with a seed of its own keeps
    it. The seed is set for this call only, so the test function is left as it was."""
    seed = item.config.stash.get(_SHARD_SEED, None)
    obj = getattr(item, "obj", None)
    test: Any = getattr(obj, "__func__", obj)  # a method's function holds the attributes
    if seed is None or not is_hypothesis_test(test) or \
            getattr(test, "_hypothesis_internal_use_seed", None) is not None:
        yield
        return
    test._hypothesis_internal_use_seed = seed  # what hypothesis' @seed sets
    try:
        yield
    finally:
        test._hypothesis_internal_use_seed = None


def _start_report(config: pytest.Config) -> None:
    """Track how far the run gets, and take the report directory for this run alone."""
    state = RunState()
    config.stash[_RUN_STATE] = state
    config.pluginmanager.register(state, "conformance-run-state")
    directory = config.getoption("--conformance-report")
    if not directory:
        return
    lock = report_dir.ReportLock(Path(directory))
    outcome = config.stash[REPORT_OUTCOME] = report_dir.ReportOutcome()
    try:
        lock.acquire()
    except report_dir.ReportDirBusy as e:
        outcome.error, outcome.refused = str(e), True
        raise pytest.UsageError(str(e)) from None
    except OSError as e:
        outcome.error = (f"--conformance-report {directory}: cannot use it as the report "
                         f"directory ({e}); name a writable directory")
        raise pytest.UsageError(outcome.error) from None
    config.add_cleanup(lambda: lock.release(wrote=config.stash[REPORT_OUTCOME].written))
    config.add_cleanup(terminate_as_interrupt())


def _options(config: pytest.Config) -> dict[str, Any]:
    """The command-line options that shape which items ran and their verdicts (engine,
    hypothesis profile and seed, and the expectations file have their own run_info keys)."""
    devices = _devices(config)
    return {
        "keyword": config.getoption("keyword", "") or None,
        "markexpr": config.getoption("markexpr", "") or None,
        "lenient_messages": bool(config.getoption("--lenient-messages")),
        "strict_expectations": bool(config.getoption("--strict-expectations")),
        "devices": None if devices is None else list(devices),
        "maxfail": int(config.getoption("maxfail", 0) or 0),
    }


def _load_expectations(config: pytest.Config) -> Path | None:
    """Stash the expectations of this run; the file's path (None: no file)."""
    config.stash[_EXPECTATIONS] = expectations.NONE
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
        if any(k.engine_version for k in known.known):  # else no need to import the engine
            known = known.under(_environment(config))
    except CaseError as e:
        raise pytest.UsageError(str(e)) from None
    config.stash[_EXPECTATIONS] = known
    return path


def _environment(config: pytest.Config) -> expectations.Environment:
    """What entries' conditions are checked against: this process's torch, Python and
    platform, and the engine's version as the report's run_info records it."""
    try:
        version = report._engine_version(config.getoption("--engine"))
    except Exception:  # an engine without a version: conditions on it never hold
        version = None
    return expectations.Environment.current(version)


def _start_baseline(config: pytest.Config, collector: _Collector, in_use: Path | None
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


def _devices(config: pytest.Config) -> tuple[str, ...] | None:
    value = config.getoption("--devices")
    return None if value is None else parse_devices(str(value))


class _Selection:
    """--generated-programs and --devices. A registered object rather than a module-level
    hook, so that other collection hooks of this plugin can sit beside it."""

    def __init__(self, generated: bool, devices: tuple[str, ...] | None) -> None:
        self.generated, self.devices = generated, devices

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
        if self.devices is None:
            return
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            device = item.conformance_item.device if isinstance(item, CaseItem) else \
                "cpu" if _is_generated(item) else None  # generated programs run on cpu
            (keep if device is None or device in self.devices else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep


def generated_suite_path() -> str:
    spec = importlib.util.find_spec("conformance.generated_suite")
    assert spec is not None and spec.origin is not None
    return spec.origin


# Indices of generated-program expectations entries matched by programs run in this process
# (case items' entries are judged from their records: baseline.usage).
_MATCHED: set[int] = set()
_EXPECTATIONS = pytest.StashKey[expectations.Expectations]()
_COLLECTOR = pytest.StashKey[_Collector]()
_PROFILE = pytest.StashKey[str]()
_STARTED = pytest.StashKey[float]()
_CASE_ROOTS = pytest.StashKey[tuple[Path, ...]]()
_IDS = pytest.StashKey[paths.CaseIds]()
_TAKEN_IDS = pytest.StashKey[dict[str, Path]]()
_LOAD_ERRORS = pytest.StashKey[int]()  # case files that failed to load in this process
_RUN_STATE = pytest.StashKey[RunState]()
# What this run did with its report directory (`run` reads it: cli/final_line.Observer).
REPORT_OUTCOME = pytest.StashKey[report_dir.ReportOutcome]()
_SHARD_SEED = pytest.StashKey[int | None]()
_CAMPAIGN = pytest.StashKey[dict[str, Any]]()


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    collector = config.stash.get(_COLLECTOR, None)
    if collector is None:
        return
    if config.getoption("--strict-expectations") and collector.stale() and \
            session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if not config.getoption("--conformance-report"):
        return
    directory = Path(config.getoption("--conformance-report"))
    state = config.stash[_RUN_STATE]
    facts = state.facts(session, _options(config))
    records = collector.records
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    # The session ends mid progress line (`... [100%]`); pytest has no public test for it.
    if reporter is not None and getattr(reporter, "_width_of_current_line", None):
        reporter.write_line("")
    outcome = config.stash[REPORT_OUTCOME]
    if config.getoption("collectonly", False):
        outcome.error = f"nothing ran (--collect-only); {directory}/ left as it was"
        if reporter is not None:
            reporter.write_sep("-", f"conformance report: {outcome.error}")
        return
    if facts.collected == 0 and not records:
        # a run that matched nothing must not replace the last real report with an empty one
        outcome.error = f"no item was collected; {directory}/ left as it was"
        if reporter is not None:
            reporter.write_sep("-", f"conformance report: {outcome.error}")
        return
    try:
        written = report.write(
            directory, records, engine=config.getoption("--engine"),
            started=config.stash[_STARTED], profile=config.stash[_PROFILE],
            generated=collector.hits, known=collector.known,
            unmatched=[k for k, _ in collector.stale()],
            seed=config.getoption("hypothesis_seed", None), run=facts,
            campaign=config.stash.get(_CAMPAIGN, None),
            case_sources=paths.case_sources(_named(config) or config.getini("conformance_cases"),
                                            config.invocation_params.dir))
    except report.NotWritten as e:
        outcome.error, outcome.status, outcome.torch_version = str(e), e.status, \
            e.torch_version
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR  # whatever the items did
        if reporter is not None:
            reporter.write_sep("!", f"conformance report NOT written: {e}", red=True)
            reporter.write_line(not_written(e.status))
        return
    config.stash[REPORT_OUTCOME] = outcome = report.outcome_of(written[0])
    if reporter is not None:
        reporter.write_sep("-", f"conformance report: {', '.join(str(p) for p in written)}")
        reporter.write_line(outcome.status)
