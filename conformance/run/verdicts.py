"""The verdict vocabulary: every verdict an item or a file can get, in one place.

The runner, the reports and the page use these values; the JSON schema's `verdict` enum,
the page's template and the README are tested to name exactly these (tests/test_verdicts.py).
"""
from __future__ import annotations

from enum import Enum


class Verdict(str, Enum):
    PASS = "pass"
    DIVERGES = "diverges"
    CASE_WRONG = "case_disagrees_with_torch"
    SKIPPED = "skipped"
    KNOWN = "known"  # a divergence listed in the expectations file
    MASKED = "masked"  # differs only in fields the engine declares it does not match
    ERROR = "error"
    # the engine lacks an API the case uses (runner.ItemResult.missing_api names it): not a
    # divergence to debug but an API to add; never a pass
    UNSUPPORTED = "unsupported"

    @property
    def outcome(self) -> str:
        """What the verdict is to pytest: `passed`, `skipped`, `xfailed` (an expected
        failure: listed in the expectations, or masked by the engine) or `failed`."""
        return _OUTCOMES.get(self, "failed")


_OUTCOMES = {Verdict.PASS: "passed", Verdict.SKIPPED: "skipped", Verdict.KNOWN: "xfailed",
             Verdict.MASKED: "xfailed"}


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
PASSING: tuple[str, ...] = (Verdict.PASS.value, Verdict.SKIPPED.value)
