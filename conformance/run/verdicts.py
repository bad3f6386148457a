"""The verdict vocabulary: every verdict an item or a file can get, in one place, each with
what it means (its pytest outcome, whether it fails a run, its place in the status line).

The runner decides verdicts (run/decision.py); the status line, the reports and the page read
what a verdict means from here, never from a list of their own. The JSON schema's `verdict`
and `status` enums are written from here (`python -m conformance.report.schema_enums`), and
tests/test_verdicts.py holds them and README's list equal to these.
"""
from __future__ import annotations

from collections.abc import Iterable
from enum import Enum


class Verdict(str, Enum):
    # value, what it is to pytest (`passed`, `skipped`, `xfailed`: an expected failure,
    # listed in the expectations or masked by the engine; `failed`), its rank in the
    # status line (counted in that order: what needs attention first), and what an
    # expectations entry may do with it as an item's status: `expected` (an entry may name
    # it in `status:`), `written` (and a baseline writes an entry for it: a failure an
    # entry can excuse), or "" (no entry names it)
    PASS = "pass", "passed", 6, "expected"  # only beside another status: intermittent
    DIVERGES = "diverges", "failed", 0, "written"
    CASE_WRONG = "case_disagrees_with_torch", "failed", 1, ""
    SKIPPED = "skipped", "skipped", 7, ""
    KNOWN = "known", "xfailed", 4, ""  # a divergence listed in the expectations file
    MASKED = "masked", "xfailed", 5, ""  # differs only in fields the engine declares unmatched
    ERROR = "error", "failed", 2, "written"  # (and `timeout`, the error a time limit caused)
    # the engine lacks an API the case uses (runner.ItemResult.missing_api names it): not a
    # divergence to debug but an API to add; never a pass. Expected by hand only, never by
    # a baseline: an entry says the engine cannot have the API by design, which no run tells
    UNSUPPORTED = "unsupported", "failed", 3, "expected"

    _value_: str
    outcome: str
    rank: int
    listing: str

    # (the defaults are never used: they let `Verdict(value)`, a lookup, type-check)
    def __new__(cls, value: str, outcome: str = "", rank: int = -1, listing: str = ""
                ) -> Verdict:
        member = str.__new__(cls, value)
        member._value_ = value
        member.outcome = outcome
        member.rank = rank
        member.listing = listing
        return member

    @property
    def expectable(self) -> bool:
        """An expectations entry may name it as a status it expects."""
        return self.listing in ("expected", "written")

    @property
    def baselined(self) -> bool:
        """A baseline (--write-expectations) writes a new entry for an item with it."""
        return self.listing == "written"

    @property
    def failing(self) -> bool:
        """Makes a run FAIL (a `known` divergence and a `masked` field are expected, so they
        do not; an `unsupported` item does: the engine has not shown the behaviour)."""
        return self.outcome == "failed"

    @property
    def passing(self) -> bool:
        """Does not count against a cell of the page or its "failing" filter."""
        return self.outcome in ("passed", "skipped")

    @property
    def agrees(self) -> bool:
        """The engine showed torch's behaviour: a pass, or masked (it differs only in fields
        it declares it does not match). Not a skip (nothing was shown), nor a `known`
        failure: an entry that expects a failure of an item that agrees is listed but
        passes now (run/decision.py), and so is an OpInfo map line whose parts agree."""
        return self is Verdict.PASS or self is Verdict.MASKED


# The verdict names as plain strings (what the records and the JSON report carry).
PASS = Verdict.PASS.value
DIVERGES = Verdict.DIVERGES.value
CASE_WRONG = Verdict.CASE_WRONG.value
SKIPPED = Verdict.SKIPPED.value
KNOWN = Verdict.KNOWN.value  # a divergence listed in the expectations file
MASKED = Verdict.MASKED.value  # only fields the engine masks (engines.Engine.masks) differ
ERROR = Verdict.ERROR.value
UNSUPPORTED = Verdict.UNSUPPORTED.value  # the engine lacks an API the case uses

# Verdicts that do not count against a cell or the page's "failing" filter.
PASSING: tuple[str, ...] = tuple(v.value for v in Verdict if v.passing)
# Verdicts that make a run fail.
FAILING: tuple[str, ...] = tuple(v.value for v in Verdict if v.failing)
# Verdicts in which the engine showed torch's behaviour (Verdict.agrees).
AGREEING: tuple[str, ...] = tuple(v.value for v in Verdict if v.agrees)
# The order verdicts are counted in the status line: what needs attention first.
ORDER: tuple[str, ...] = tuple(v.value for v in sorted(Verdict, key=lambda v: v.rank))

# An item's status: its verdict before the expectations file is consulted
# (run/expectations.py), with `timeout` carved from `error` (the error a time limit caused).
TIMEOUT = "timeout"


def statuses(verdicts: Iterable[Verdict]) -> tuple[str, ...]:
    """The statuses of items with these verdicts, in the verdicts' order."""
    return tuple(status for v in verdicts
                 for status in ((v.value, TIMEOUT) if v is Verdict.ERROR else (v.value,)))


# Every status an item can have (the report schema's item `status` enum, written from this):
# each verdict but `known`, the expectations' own.
ITEM_STATUSES = statuses(v for v in Verdict if v is not Verdict.KNOWN)
# The statuses a baseline writes a new entry for: the failures an entry can excuse.
EXCUSABLE = statuses(v for v in Verdict if v.baselined)
