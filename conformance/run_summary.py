"""The one line that ends `autograd-conformance run`: engine, torch version, where the report
is and its status line, read back from the report the run wrote (never from a report an
earlier run left there)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

PREFIX = "autograd-conformance:"
REPORT = "conformance.json"


def _report(directory: Path, started: float) -> dict[str, Any] | None:
    path = directory / REPORT
    try:
        if path.stat().st_mtime < started - 1:  # an earlier run's report (1 s: mtime rounding)
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def final_line(engine: str, directory: Path, started: float, exit_code: int) -> str:
    data = _report(directory, started)
    if data is None:
        return f"{PREFIX} engine {engine}: no report written to {directory}/ " \
               f"(pytest exit code {exit_code})"
    torch = data.get("run_info", {}).get("torch_version", "?")
    # the report's own status line (run_status), so the terminal says what the report says
    status = data.get("status", {}).get("line")
    if not status:
        verdicts = Counter(str(r.get("verdict")) for r in data.get("items", []))
        status = ", ".join(f"{v}: {n}" for v, n in sorted(verdicts.items())) or "no items"
        status += f"; exit code {exit_code}"
    return f"{PREFIX} engine {engine} vs torch {torch}: {status}; report in {directory}/"
