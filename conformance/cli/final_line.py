"""The one line that ends `autograd-conformance run`: engine, torch version, where the report
is and its status line; or, when this run wrote no report (it was refused the report
directory, the directory could not be written, nothing was collected), that it wrote none and
why. It says only what this run did: never the status of a report another run left in the
directory (the plugin tells `run` what it wrote, through the `Observer` plugin `run` gives
pytest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.report.directory import ReportOutcome, shown
from conformance.report.status_line import not_written

PREFIX = "autograd-conformance:"


class Observer:
    """A pytest plugin object `run` passes to pytest.main: it keeps the run's config, whose
    stash holds what the conformance plugin did with the report directory."""

    def __init__(self) -> None:
        self.config: Any = None

    def pytest_configure(self, config: Any) -> None:
        self.config = config

    def outcome(self) -> ReportOutcome | None:
        if self.config is None:  # pytest stopped before configuring (a usage error)
            return None
        from conformance.plugin import REPORT_OUTCOME

        return self.config.stash.get(REPORT_OUTCOME, None)


def final_line(engine: str, directory: Path, outcome: ReportOutcome | None,
               exit_code: int) -> str:
    if outcome is None:
        return f"{PREFIX} engine {engine}: no report written to {shown(f'{directory}/')} " \
               f"(pytest exit code {exit_code})"
    if outcome.refused:
        return f"{PREFIX} engine {engine}: REFUSED, no report written: {outcome.error} " \
               f"(pytest exit code {exit_code})"
    torch = f" vs torch {outcome.torch_version}" if outcome.torch_version else ""
    if outcome.written and outcome.status:
        # the report's own status line (status_line), so the terminal says what it says
        where = shown(f"{directory}/")
        return f"{PREFIX} engine {engine}{torch}: {outcome.status}; report in {where}"
    counts = f"{not_written(outcome.status)}; " if outcome.status else ""
    return f"{PREFIX} engine {engine}{torch}: {counts}{outcome.error or 'no report written'}" \
           f" (pytest exit code {exit_code})"
