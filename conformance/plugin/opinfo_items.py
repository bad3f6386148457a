"""OpInfo items in the plugin's collection: one per covered entry x dtype
(conformance/opinfo/item.py), under a collector `opinfo` and one per entry (`opinfo/<entry>`),
so that `-k matmul`, `-k opinfo` and `-k "not opinfo"` select them by name.

Which entries are covered is read from the map and the registry, the same on every xdist
worker; OpInfo itself (and torch) is read only when an item runs, so a machine without
expecttest collects the same items and reports each `skipped` with the install hint.

Whether a run has them (`opinfo_selected`): `--opinfo` or `--no-opinfo`; else the ini option
`conformance_opinfo` (this project's pyproject.toml sets it) in a run of the configured
suite, with no paths named on the command line (naming a file is no request for them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conformance.opinfo import ids
from conformance.plugin.items import ConformanceItem, fail
from conformance.plugin.options import named, opinfo_samples
from conformance.plugin.shared import EXPECTATIONS

INI = "conformance_opinfo"


def opinfo_selected(config: pytest.Config) -> bool:
    given = config.getoption("--opinfo")
    if given is not None:
        return bool(given)
    return bool(config.getini(INI)) and not named(config)


class OpInfoCollector(pytest.Collector):
    """`opinfo`: the covered entries of the map; a map that does not load fails here alone."""

    def collect(self) -> Iterator[pytest.Collector]:
        from conformance.opinfo import item, opmap

        try:
            keys = item.covered()
        except opmap.MapError as e:
            raise self.CollectError(f"{item.MAP_SHOWN}: {e}") from None
        for key in keys:
            yield OpInfoEntry.from_parent(self, name=key, nodeid=ids.file_of(key))


class OpInfoEntry(pytest.Collector):
    def collect(self) -> Iterator[pytest.Item]:
        for dtype in ids.DTYPES:
            yield OpInfoItem.from_parent(self, name=f"{ids.DEVICE}-{dtype}",
                                         nodeid=ids.item_id(self.name, dtype), dtype=dtype)


def collect(session: pytest.Session) -> list[pytest.Item]:
    root = OpInfoCollector.from_parent(session, name=ids.PREFIX, nodeid=ids.PREFIX)
    return [i for i in session.genitems(root) if isinstance(i, pytest.Item)]


class OpInfoItem(ConformanceItem):
    def __init__(self, *, dtype: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.key = self.parent.name if self.parent is not None else ""
        self.dtype = dtype
        self.judged: Any = None  # item.Judged, once run
        self.user_properties.extend([("features", ids.FEATURE), ("device", ids.DEVICE),
                                     ("dtype", dtype)])

    def runtest(self) -> None:
        from conformance.opinfo import database, item
        from conformance.opinfo.entry_check import Limit
        from conformance.plugin.engine_under_test import configured_engine
        from conformance.run.decision import decide
        from conformance.run.limits import ItemTimeout, RunLimit, contained
        from conformance.run.runner import torch_engine
        from conformance.run.verdicts import Verdict

        known = self.config.stash[EXPECTATIONS]
        entries = known.applying(self.nodeid, ids.DEVICE, self.dtype)
        skip = next((e for e in entries if e.skip), None)
        if skip is not None:  # never run (the engine hangs or crashes on it)
            reason = f"skipped by {skip.where(known.path)}: {skip.reason}"
            self.judged = item.Judged(Verdict.SKIPPED.value, reason, Verdict.SKIPPED.value)
            pytest.skip(reason)
        engine = configured_engine(self.config)
        try:
            # read before the item's time limit starts: importing OpInfo is the harness's
            # cost (most of 14 s in a process's first item, more under load), not the item's
            database.autograd_entries()
        except database.OpInfoUnavailable as e:
            self.judged = item.Judged(Verdict.SKIPPED.value, str(e), Verdict.SKIPPED.value)
            pytest.skip(str(e))
        try:
            # the limit is each sample's, as a case program's (check.run_plan says why)
            limit = Limit(float(self.config.getoption("--item-timeout")),
                          f"the OpInfo item {self.nodeid}")
            with contained():
                self.judged = judged = item.judge(self.key, self.dtype, engine,
                                                  torch_engine(), entries, known.path, limit,
                                                  opinfo_samples(self.config))
        except RunLimit as stopped:  # its time limit, an engine's KeyboardInterrupt, ...
            decision = decide(Verdict.ERROR.value, str(stopped), entries,
                              timed_out=isinstance(stopped, ItemTimeout), listed_in=known.path)
            self.judged = judged = item.Judged(decision.verdict, decision.reason,
                                               decision.status)
        if judged.passes_now:
            fail(f"{self.nodeid}: {judged.passes_now}")
        more = f"\nfailing parts:\n{judged.report}" if judged.report else ""
        self.conclude(judged.verdict, judged.reason, lambda: (
            f"{self.nodeid}: {engine.name} {judged.verdict}: {judged.reason}{more}\n"
            f"rerun: {item.repro(self.key, self.dtype, engine.name)}"))

    def record(self, outcome: str, longrepr: str) -> dict[str, Any]:
        from conformance.opinfo import item

        return item.record(self.key, self.dtype, str(self.config.getoption("--engine")),
                           self.judged, outcome, longrepr)
