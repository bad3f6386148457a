"""The verdict vocabulary: every verdict an item or a file can get, in one place, each with
what it means (its pytest outcome, whether it fails a run, its place in the status line).

The runner decides verdicts (run/decision.py); the status line, the reports and the page read
what a verdict means from here, never from a list of their own. The JSON schema's `verdict`
and `status` enums are written from here (`python -m conformance.report.schema_enums`), and
tests/test_verdicts.py holds them and README's list equal to these.
"""
from __future__ import annotations

from enum import Enum


class Verdict(str, Enum):
    # value, what it is to pytest (`passed`, `skipped`, `xfailed`: an expected failure,
    # listed in the expectations or masked by the engine; `failed`), and its rank in the
    # status line (counted in that order: what needs attention first)
    PASS = "pass", "passed", 6
    DIVERGES = "diverges", "failed", 0
    CASE_WRONG = "case_disagrees_with_torch", "failed", 1
    SKIPPED = "skipped", "skipped", 7
    KNOWN = "known", "xfailed", 4  # a divergence listed in the expectations file
    MASKED = "masked", "xfailed", 5  # differs only in fields the engine declares unmatched
    ERROR = "error", "failed", 2
    # the engine lacks an API the case uses (runner.ItemResult.missing_api names it): not a
    # divergence to debug but an API to add; never a pass
    UNSUPPORTED = "unsupported", "failed", 3

    _value_: str
    outcome: str
    rank: int

    # (the defaults are never used: they let `Verdict(value)`, a lookup, type-check)
    def __new__(cls, value: str, outcome: str = "", rank: int = -1) -> Verdict:
        member = str.__new__(cls, value)
        member._value_ = value
        member.outcome = outcome
        member.rank = rank
        return member

    @property
    def failing(self) -> bool:
        """Makes a run FAIL (a `known` divergence and a `masked` field are expected, so they
        do not; an `unsupported` item does: the engine has not shown the behaviour)."""
        return self.outcome == "failed"

    @property
    def passing(self) -> bool:
        """Does not count against a cell of the page or its "failing" filter."""
        return self.outcome in ("passed", "skipped")


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
# The order verdicts are counted in the status line: what needs attention first.
ORDER: tuple[str, ...] = tuple(v.value for v in sorted(Verdict, key=lambda v: v.rank))
