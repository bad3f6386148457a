"""What the plugin's items share (case items, plugin/collection.py; OpInfo items,
plugin/opinfo_items.py): a verdict made a pytest outcome, and a failure shown as its own text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

from conformance.run.verdicts import Verdict


class ConformanceFailure(Exception):
    """A failing verdict (or a listed failure that passes now): its text is the report."""


class ConformanceItem(pytest.Item):
    # the line of the item's source that pytest names for it (a case file's first line)
    source_line = 0

    def conclude(self, verdict: str, reason: str, failure: Callable[[], str]) -> None:
        """End the item as its verdict is to pytest (Verdict.outcome): passed, skipped,
        xfailed (with `reason`) or failed (with the text `failure()`)."""
        outcome = Verdict(verdict).outcome
        if outcome == "skipped":
            pytest.skip(reason)
        if outcome == "xfailed":
            pytest.xfail(reason)
        if outcome == "failed":
            fail(failure())

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)  # type: ignore[return-value]

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.source_line, self.nodeid


def fail(text: str) -> NoReturn:
    raise ConformanceFailure(text)
