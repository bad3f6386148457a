"""The report of a run: its directory taken for this run alone (the report lock, with the
run's progress tracked for the status line), and the report written there when the session
finishes (conformance.json, summary.md, index.html)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.case import paths
from conformance.plugin.controller import COLLECTOR
from conformance.plugin.options import named, run_options
from conformance.plugin.session import RunState, terminate_as_interrupt
from conformance.plugin.shared import (
    CAMPAIGN,
    PROFILE,
    REPORT_OUTCOME,
    RUN_STATE,
    STARTED,
)
from conformance.report import directory as report_dir
from conformance.report import files as report
from conformance.report.status_line import not_written


def start_report(config: pytest.Config) -> None:
    """Track how far the run gets, and take the report directory for this run alone."""
    state = RunState()
    config.stash[RUN_STATE] = state
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
        outcome.error = (f"--conformance-report {report_dir.shown(directory)}: cannot use "
                         f"it as the report directory ({e}); name a writable directory")
        raise pytest.UsageError(outcome.error) from None
    config.add_cleanup(lambda: lock.release(wrote=config.stash[REPORT_OUTCOME].written))
    config.add_cleanup(terminate_as_interrupt())


def finish(session: pytest.Session) -> None:
    """The session's end in the controller: --strict-expectations judged, the report written."""
    config = session.config
    collector = config.stash.get(COLLECTOR, None)
    if collector is None:
        return
    if config.getoption("--strict-expectations") and collector.stale() and \
            session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if not config.getoption("--conformance-report"):
        return
    directory = Path(config.getoption("--conformance-report"))
    state = config.stash[RUN_STATE]
    facts = state.facts(session, run_options(config))
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
            started=config.stash[STARTED], profile=config.stash[PROFILE],
            generated=collector.hits, known=collector.known,
            unmatched=[k for k, _ in collector.stale()],
            seed=config.getoption("hypothesis_seed", None), run=facts,
            campaign=config.stash.get(CAMPAIGN, None),
            case_sources=paths.case_sources(named(config) or config.getini("conformance_cases"),
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
        reporter.write_sep("-", "conformance report: " +
                           ", ".join(report_dir.shown(p) for p in written))
        reporter.write_line(outcome.status)
