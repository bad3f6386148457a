"""`--write-expectations FILE`: the current failures as an expectations file, the baseline an
engine author starts from (as array-api-tests' xfails file).

Every case item that diverged becomes one entry naming exactly that item, with a reason to
be rewritten that names where it diverged. Generated-program divergences and items that no
expectations entry can excuse (errors, cases torch itself breaks) are listed as comments, so
the file never claims more than the run showed. The file is in the format
`conformance/expectations.py` loads.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from conformance import expectations

DIVERGES = "diverges"


def _pattern(item_id: str) -> str:
    """An fnmatch pattern matching exactly `item_id`."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in item_id)


def _quoted(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar


def _where(record: dict[str, Any]) -> str:
    d = record.get("divergence") or record.get("message_divergence")
    if not d:
        return "diverges from torch"
    kind = "message text differs" if d.get("strict") else "diverges"
    return f"{kind} at {record.get('file')}:{d.get('line')} `{d.get('statement')}`, " \
           f"field `{d.get('field')}`"


def render(records: Iterable[dict[str, Any]], engine: str, torch_version: str) -> str:
    records = list(records)
    cases = [r for r in records if r.get("verdict") == DIVERGES and "divergence" in r]
    generated = [r for r in records if r.get("verdict") == DIVERGES and "divergence" not in r]
    unexcusable = [r for r in records if r.get("verdict") in (
        "error", "case_disagrees_with_torch", "unsupported")]
    lines = [
        f"# Known divergences of {engine} from torch {torch_version}: every case item that",
        f"# diverged in the run of {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())},",
        "# written by --write-expectations. Rewrite each reason: what differs, and what",
        "# modelling it would take. Widen `items` patterns (fnmatch) where one cause covers",
        "# several items.",
    ]
    for r in generated:
        lines.append(f"# {r.get('id')}: generated programs diverged; list such a divergence "
                     "by pattern, e.g.")
        lines.append('#   - generated: {field: "*.values", statement: "* = torch.exp(*"}')
        lines.append("#     reason: ...")
    if unexcusable:
        lines.append(f"# not listed ({len(unexcusable)}): items with verdict error, "
                     "case_disagrees_with_torch or unsupported (an API the engine lacks), "
                     "which no entry can excuse:")
        lines += [f"#   {r.get('id')}: {r.get('verdict')}" for r in unexcusable[:50]]
    if not cases:
        lines.append("known: []")
    else:
        lines.append("known:")
        for r in sorted(cases, key=lambda r: str(r.get("id"))):
            lines.append(f"  - items: {_quoted(_pattern(str(r.get('id'))))}")
            lines.append(f"    reason: {_quoted('TODO (written from a run): ' + _where(r))}")
    return "\n".join(lines) + "\n"


def write(path: Path, records: Iterable[dict[str, Any]], engine: str, torch_version: str
          ) -> int:
    """Write the file (atomically) and return the number of entries; it loads as written."""
    text = render(records, engine, torch_version)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return len(expectations.load(path).known)


class Writer:
    """Registered in the controller when --write-expectations is given."""

    def __init__(self, path: Path, records: Callable[[], list[dict[str, Any]]], engine: str
                 ) -> None:
        self.path, self.records, self.engine = path, records, engine

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from conformance.runner import torch_version

        count = write(self.path, self.records(), self.engine, torch_version())
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_sep("-", f"expectations: {count} divergent items written to "
                                    f"{self.path}")
