"""The controller's collector: every item's record (from the workers' user properties, or made
here for an item whose worker died: its black box read), the generated programs' hit counts,
the expectations entries generated programs matched, and stale entries named at the end."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.opinfo import ids as opinfo_ids
from conformance.plugin.session import collection_error
from conformance.plugin.shared import (
    CASE_ID,
    GENERATED_TEST,
    HITS_PROPERTY,
    LOAD_ERROR_ATTRIBUTE,
    MATCHED_PROPERTY,
    RESULT_PROPERTY,
)
from conformance.report import baseline
from conformance.report.hit_rates import HitRates
from conformance.report.records import error_record, generated_record, item_record
from conformance.run import blackbox, crash, expectations, verdicts
from conformance.run.decision import decide
from conformance.run.runner import ERROR, ItemResult


class Collector:
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
        elif CASE_ID.search(crashitem):
            result = self._crashed_case(crashitem, report, account, text)
        elif opinfo_ids.ID.match(crashitem):
            result = self._opinfo_error(crashitem, text)
            result["reason"] = crash.reason(account)
        else:
            return
        report.user_properties.append((RESULT_PROPERTY, json.dumps(result)))

    def _crashed_case(self, nodeid: str, report: pytest.TestReport,
                      account: blackbox.Account, text: str) -> dict[str, Any]:
        status = verdicts.TIMEOUT if account.timed_out else None  # else: no verdict
        item = crash.crashed_item(account)
        if item is None:  # the box ran another item, or the case no longer loads
            record = error_record(nodeid, crash.reason(account))
            record["report"] = text
        else:
            result = ItemResult(item, self.engine, ERROR, crash.reason(account),
                                timed_out=account.timed_out)
            if status is not None:
                # as CaseItem.runtest; only a timeout is judged (a crash has no verdict)
                decision = decide(ERROR, result.reason, self.known.applying(
                    item.id, item.device, item.dtype), timed_out=True,
                    listed_in=self.known.path)
                if decision.known:
                    result.verdict, result.reason = decision.verdict, decision.reason
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
            if CASE_ID.search(report.nodeid):
                self.records.append(error_record(report.nodeid, str(report.longrepr)))
            elif report.nodeid.endswith("::" + GENERATED_TEST):
                record = generated_record(report.nodeid, self.engine, "failed",
                                          str(report.longrepr))
                record["reason"] = str(report.longrepr)[-2000:]  # "worker 'gw0' crashed..."
                self.records.append(record)
            elif opinfo_ids.ID.match(report.nodeid):
                self.records.append(self._opinfo_error(report.nodeid, str(report.longrepr)))

    def _opinfo_error(self, nodeid: str, text: str) -> dict[str, Any]:
        """The record of an OpInfo item that ended without a verdict (its worker died)."""
        found = opinfo_ids.ID.match(nodeid)
        assert found is not None
        return {"id": nodeid, "file": opinfo_ids.file_of(found["key"]),
                "features": [opinfo_ids.FEATURE], "device": opinfo_ids.DEVICE,
                "dtype": found["dtype"], "engine": self.engine, "verdict": ERROR,
                "pytest_outcome": "failed", "reason": text[-2000:], "report": text[-20000:]}

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


COLLECTOR: pytest.StashKey[Collector] = pytest.StashKey()  # the controller's, stashed
