"""The pytest plugin: YAML cases become test items, one per case x device x dtype.

Registered through the `pytest11` entry point, so the plugin is active in every pytest run
of the environment; it collects `*.yaml` only under the paths of the `conformance_cases` ini
option (this project's pyproject.toml: `cases`) and under paths named on the command line,
never other projects' YAML. A malformed file fails collection of that file alone, with
file, line and fix, and is an `error` record in the report; the other files' items still
run, even without `--continue-on-collection-errors`. Item ids look like
`cases/retain_graph/backward_twice.yaml::cpu-float32`: the case file's id (case/paths.py:
relative to its project, never to pytest's rootdir) is the pytest node id of its file.

This module holds the hooks and fixtures; what they do is in the modules beside it
(`options`, `collection`, `items`, `opinfo`, `known`, `controller`, `reporting`, `shared`,
`session`), imported by each hook when it is first called: importing the plugin imports
neither torch nor an engine. A run that is no conformance run (options.is_conformance_run:
its ini names no case paths, it gives no conformance option and names no YAML) loads nothing
more: every hook returns at once.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# Only what every hook shares is imported here (stash keys, record properties): the plugin is
# loaded in every pytest run of the environment, most of which never run a case, so the
# harness (and through it the reference engine, torch, hypothesis) is imported by the hooks
# that use it, when first called (tests/conformance/test_layers.py holds that).
from conformance.plugin.shared import (
    ACTIVE,
    CAMPAIGN,
    EXPECTATIONS,
    GENERATED_LOG,
    HITS_PROPERTY,
    LOAD_ERROR_ATTRIBUTE,
    LOAD_ERRORS,
    MATCHED,
    MATCHED_PROPERTY,
    PROFILE,
    REPORT_OUTCOME,
    RESULT_PROPERTY,
    SHARD_SEED,
    STARTED,
    active,
    is_generated,
)

if TYPE_CHECKING:
    from conformance.gen import progress
    from conformance.report.hit_rates import HitRates
    from conformance.run import expectations
    from conformance.run.engine import Engine

__all__ = ["REPORT_OUTCOME"]  # cli/final_line reads it from here


def pytest_addoption(parser: pytest.Parser) -> None:
    # The profiles (dev, ci, nightly, default) are registered with hypothesis on import, and
    # must be before hypothesis' own pytest_configure loads `--hypothesis-profile NAME`: here,
    # where this plugin is registered (imports hypothesis, not the harness or an engine).
    from conformance.gen import profiles  # noqa: F401
    from conformance.plugin.options import add_options

    add_options(parser)


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix != ".yaml" or not active(parent.config):
        return None
    from conformance.plugin.collection import case_file_collector, is_case_path

    if not is_case_path(parent.config, file_path):
        return None
    return case_file_collector(parent, file_path)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None
                            ) -> Generator[None, object, object]:
    """The black box names the item running (should its process die in it)."""
    if not active(item.config):
        return (yield)
    from conformance.plugin.collection import CaseItem
    from conformance.run import blackbox

    case = item.black_box_case() if isinstance(item, CaseItem) else None
    with blackbox.running(item.nodeid, case, is_generated(item)):
        return (yield)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[None]:
    outcome = yield
    if not active(item.config):
        return
    rep = outcome.get_result()  # type: ignore[attr-defined]
    from conformance.plugin.collection import CaseItem
    from conformance.plugin.opinfo_items import OpInfoItem
    from conformance.report import generated as generated_report
    from conformance.report import records

    matched = item.config.stash[MATCHED]
    if rep.when == "call" and matched:
        rep.user_properties.append((MATCHED_PROPERTY, json.dumps(sorted(matched))))
    if is_generated(item) and rep.when == "call":
        rep.user_properties.append((HITS_PROPERTY, json.dumps(GENERATED_LOG.as_dict())))
        rep.user_properties.append((RESULT_PROPERTY, json.dumps(generated_report.record(
            item, call, rep, item.config.stash[PROFILE]))))
    if isinstance(item, CaseItem) and rep.when == "call":
        # user_properties travel from xdist workers to the controller, so the report
        # written there sees every worker's results.
        record = records.item_record(item.conformance_item, item.result, rep.outcome,
                                     str(rep.longrepr) if rep.failed else "")
        if item.status is not None:
            record["status"] = item.status
        rep.user_properties.append((RESULT_PROPERTY, json.dumps(record)))
    if isinstance(item, OpInfoItem) and rep.when == "call":
        rep.user_properties.append((RESULT_PROPERTY, json.dumps(item.record(
            rep.outcome, str(rep.longrepr) if rep.failed else ""))))


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector
                               ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    rep = yield
    if not active(collector.config):
        return rep
    from conformance.plugin.collection import CaseFile, unreadable_entries
    from conformance.report.records import collection_error_record

    if isinstance(collector, pytest.Dir) and rep.passed:
        rep.result.extend(unreadable_entries(collector))
    if isinstance(collector, CaseFile) and rep.failed:
        text = str(rep.longrepr)
        e = collector.load_error
        record = collection_error_record(
            rep.nodeid, rep.nodeid if e is None else e.file, None if e is None else e.line,
            text if e is None else e.message, text)
        setattr(rep, LOAD_ERROR_ATTRIBUTE, json.dumps(record))
        stash = collector.config.stash
        stash[LOAD_ERRORS] = stash.get(LOAD_ERRORS, 0) + 1
    return rep


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    """A case file that fails to load is an error of its own (its record, pytest's "ERROR
    collecting"); the other files' items still run, as with `--continue-on-collection-errors`
    but for case files only: pytest aborts the whole run on any collection error, and a
    user's project does not set that flag. Other files' collection errors abort as pytest's
    configuration says (counting every error). The errors count again once the items have
    run, so the exit status is a failure."""
    loads = session.config.stash.get(LOAD_ERRORS, 0)
    hidden = session.testsfailed if session.testsfailed <= loads else 0
    session.testsfailed -= hidden
    try:
        return (yield)
    finally:
        session.testsfailed += hidden


# ---- generated programs -----------------------------------------------------------------


@pytest.fixture(scope="session")
def conformance_engine(pytestconfig: pytest.Config) -> Engine:
    """The engine under test (--engine)."""
    from conformance.plugin.collection import configured_engine

    return configured_engine(pytestconfig)


@pytest.fixture(scope="session")
def torch_engine() -> Engine:
    from conformance.run.runner import torch_engine

    return torch_engine()


@pytest.fixture(scope="session")
def conformance_item_timeout(pytestconfig: pytest.Config) -> float:
    """--item-timeout: seconds one generated program may run (0: none)."""
    return float(pytestconfig.getoption("--item-timeout"))


@pytest.fixture(scope="session")
def conformance_strict_messages(pytestconfig: pytest.Config) -> bool:
    """A message text alone that differs diverges (a generated program's, as a case
    item's), unless --lenient-messages."""
    return not pytestconfig.getoption("--lenient-messages")


@pytest.fixture(scope="session")
def generated_log() -> HitRates:
    return GENERATED_LOG


@pytest.fixture(scope="session")
def generated_progress(pytestconfig: pytest.Config) -> progress.Progress:
    """Counts and rates of generated programs, printed while a long run goes on."""
    from conformance.gen import progress

    return progress.Progress(progress.terminal_writer(pytestconfig))


@pytest.fixture(scope="session")
def known_divergences(pytestconfig: pytest.Config) -> expectations.Expectations:
    return pytestconfig.stash[EXPECTATIONS]


@pytest.fixture(scope="session")
def matched_expectations(pytestconfig: pytest.Config) -> set[int]:
    return pytestconfig.stash[MATCHED]


@pytest.fixture(scope="session")
def save_divergences(pytestconfig: pytest.Config) -> str | None:
    value = pytestconfig.getoption("--save-divergences")
    return None if value is None else str(value)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if is_generated(item):
        GENERATED_LOG.programs = 0
        GENERATED_LOG.counts.clear()


# After hypothesis' own pytest_configure, which loads --hypothesis-profile and sets
# --hypothesis-seed: the profile loaded here (with the example database) must be the last.
@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from conformance.plugin.options import is_conformance_run

    if not is_conformance_run(config):  # another project's run: load nothing more
        return
    config.stash[ACTIVE] = True
    from conformance.case.vocabulary import FEATURES
    from conformance.gen import campaign, profiles
    from conformance.plugin import reporting
    from conformance.plugin.collection import Selection, configured_engine
    from conformance.plugin.controller import COLLECTOR, Collector
    from conformance.plugin.known import load_expectations, start_baseline
    from conformance.plugin.opinfo_items import opinfo_selected
    from conformance.plugin.options import devices_option
    from conformance.report import files as report
    from conformance.run import blackbox
    from conformance.run.engine import DEFAULT_ENGINE

    for name, meaning in FEATURES.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")
    try:
        spec = config.getoption("--hypothesis-db")
        database = None if spec is None else campaign.open_database(str(spec))
        config.stash[PROFILE] = profiles.load(config.getoption("hypothesis_profile", None),
                                               database)
        _start_shard(config, None if spec is None else str(spec))
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    try:  # once, here: a wrong --engine is one usage error, not a traceback per item
        # (this package's own engine is imported when first used: the plugin is loaded in
        # every pytest run of the environment, and most never run a case)
        if config.getoption("--engine") != DEFAULT_ENGINE:
            configured_engine(config)
        config.pluginmanager.register(Selection(
            config.getoption("--generated-programs"), devices_option(config),
            opinfo_selected(config)), "conformance-selection")
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    in_use = load_expectations(config)
    config.stash[MATCHED] = set()  # this session's matches
    box = getattr(config, "workerinput", {}).get(blackbox.WORKER_INPUT)
    if box is not None:  # an xdist worker: its black box, named by the controller
        blackbox.assign(str(box))
    if not hasattr(config, "workerinput"):
        collector = Collector(config.stash[EXPECTATIONS], config.getoption("--engine"))
        config.add_cleanup(collector.boxes.remove)
        config.stash[COLLECTOR] = collector
        config.pluginmanager.register(collector, "conformance-collector")
        config.stash[STARTED] = report.now()
        start_baseline(config, collector, in_use)
        reporting.start_report(config)


def _start_shard(config: pytest.Config, database: str | None) -> None:
    """--shard: the seed hypothesis tests of this run draw from (None: hypothesis' own)."""
    from hypothesis import core, settings

    from conformance.gen import campaign

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
    config.stash[SHARD_SEED] = seed
    config.stash[CAMPAIGN] = campaign.describe(database, shard, seed)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A hypothesis test of a shard draws from the shard's seed, as with `@seed(...)`, but
    keeping the example database (`@seed` turns it off). A test with a seed of its own keeps
    it. The seed is set for this call only, so the test function is left as it was."""
    seed = item.config.stash.get(SHARD_SEED, None)
    if seed is None:
        yield
        return
    from hypothesis import is_hypothesis_test

    obj = getattr(item, "obj", None)
    test: Any = getattr(obj, "__func__", obj)  # a method's function holds the attributes
    if not is_hypothesis_test(test) or \
            getattr(test, "_hypothesis_internal_use_seed", None) is not None:
        yield
        return
    test._hypothesis_internal_use_seed = seed  # what hypothesis' @seed sets
    try:
        yield
    finally:
        test._hypothesis_internal_use_seed = None


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not active(session.config):
        return
    from conformance.plugin import reporting

    reporting.finish(session)
