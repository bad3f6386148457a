"""A run's one-line status, PASS, FAIL or INCOMPLETE with its counts: the first line of
summary.md, the banner of index.html and `status` in conformance.json are this one text.

A report never looks greener than the run was: what failed to load, crashed, timed out or was
interrupted counts here, and a run that did not execute everything it collected is
INCOMPLETE whatever its verdicts say.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from conformance.run.verdicts import ERROR, SKIPPED

# What fails a run and the order verdicts are counted in the line are the verdicts' own
# (run/verdicts.py): an `unsupported` item fails the run, and the line counts those items
# apart from divergences.
from conformance.run.verdicts import FAILING as FAILING
from conformance.run.verdicts import ORDER as ORDER

PASSED, FAILED, INCOMPLETE = "PASS", "FAIL", "INCOMPLETE"
# run_info.options of a run that set none of them (the plugin records the ones given).
DEFAULT_OPTIONS: dict[str, Any] = {"keyword": None, "markexpr": None, "lenient_messages": False,
                                   "strict_expectations": False, "devices": None, "maxfail": 0,
                                   "opinfo_samples": 0}


@dataclass
class RunFacts:
    """What shaped a run and how far it got, beyond its items' verdicts."""

    collected: int = 0  # items selected to run (after -k, -m, --devices)
    executed: int = 0  # of those, items that reported a result (any verdict)
    interrupted: bool = False  # Ctrl-C, KeyboardInterrupt, -x / --maxfail, a stopped worker
    interruption: str | None = None  # pytest's reason, e.g. "stopping after 1 failures"
    exit_status: int = 0
    options: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_OPTIONS))


def is_load_error(record: dict[str, Any]) -> bool:
    """A record that stands for a file that failed to collect: it has no device (no item)."""
    return record.get("verdict") == ERROR and not record.get("device")


def outcome(records: list[dict[str, Any]], run: dict[str, Any]) -> str:
    """PASS, FAIL or INCOMPLETE for the records and the run_info of one report."""
    if run.get("interrupted") or run.get("executed", 0) < run.get("collected", 0):
        return INCOMPLETE
    failing = any(r.get("verdict") in FAILING for r in records)
    # a non-zero exit without a failing record (a failed non-case test, a stale
    # expectations entry under --strict-expectations) is a failure too
    return FAILED if failing or run.get("exit_status", 0) not in (0, None) else PASSED


def line(records: list[dict[str, Any]], run: dict[str, Any]) -> tuple[str, str]:
    """(outcome, the status line without markup), e.g. ("FAIL", "FAIL: 3 diverges, 1 error
    (1 case file failed to load), 760 pass, 784 skipped of 1548 collected; 1548 executed")."""
    word = outcome(records, run)
    counts = Counter(str(r.get("verdict")) for r in records)
    loads = sum(is_load_error(r) for r in records)
    parts = []
    for verdict in (*ORDER, *sorted(set(counts) - set(ORDER))):
        if counts[verdict]:
            text = f"{counts[verdict]} {verdict}"
            if verdict == ERROR and loads:
                text += f" ({loads} file{'s' if loads > 1 else ''} failed to load)"
            parts.append(text)
    text = f"{word}: " + (", ".join(parts) if parts else "no results")
    text += f" of {run.get('collected', 0)} collected; {run.get('executed', 0)} executed"
    # plain pytest tests run beside the cases (pytest tests/ cases/) have no record
    others = run.get("executed", 0) - (len(records) - loads)
    if others > 0:
        text += f" ({others} without a conformance record: tests other than cases)"
    if run.get("interrupted"):
        text += "; interrupted" + (f" ({run['interruption']})" if run.get("interruption")
                                   else "")
    if run.get("exit_status", 0) not in (0, None):
        text += f"; pytest exit status {run['exit_status']}"
    return word, text


def hidden_devices(records: list[dict[str, Any]]) -> dict[str, str]:
    """Devices on which nothing could run (every item skipped, e.g. cuda on a machine without
    it), each with the note saying why: summary.md and index.html leave their columns out."""
    hidden = {}
    for device in sorted({str(r["device"]) for r in records if r.get("device")}):
        on = [r for r in records if r.get("device") == device]
        if all(r.get("verdict") == SKIPPED for r in on):
            reason = Counter(str(r.get("reason") or "") for r in on).most_common(1)[0][0]
            hidden[device] = (f"{device}: nothing could run ({len(on)} items skipped"
                              + (f": {reason}" if reason else "") + ")")
    return hidden


def failure_group(record: dict[str, Any]) -> str:
    """Failures of one case on one device that differ at the same statement and field (or
    end with the same reason) have one group: summary.md and index.html show each group once,
    naming its dtypes."""
    if is_load_error(record):
        return json.dumps(["load", record.get("id")])
    d = record.get("divergence") or record.get("message_divergence")
    where = [d.get("line"), d.get("statement"), d.get("field")] if isinstance(d, dict) \
        else record.get("reason") or record.get("id")
    return json.dumps([record.get("file"), record.get("device"), record.get("verdict"), where])


def not_written(status: str) -> str:
    """The status line of a run whose report could not be written: its counts, under a word
    that no reader takes for a verdict (a run without its report is no PASS)."""
    return f"NOT WRITTEN: {status.partition(': ')[2]}"
