"""Drift between two recordings (conformance/report/recording.py): every behaviour and message that
changed, per item and statement.

Steps are compared by the comparator's own function (`compare.step_diffs`: tolerances per
dtype, signed zeros, NaN agreement, engine-made tensors without `_version`/`_is_view()`,
once-per-process warnings compared where both runs were under warn-always), with
`every=True`: every difference of every step is listed, not only the first.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from conformance.report.recording import RAN, RecordingError
from conformance.report.trace_codec import trace_from_json
from conformance.run.compare import compared_once, step_diffs

# Change categories, in the order the summary lists them.
CATEGORIES = ("item", "error_kind", "message", "warnings", "events", "values", "grad",
              "graph", "version", "metadata", "steps")
MAX_SHOWN = 300  # characters of one value in the reports


@dataclass
class Change:
    category: str
    field: str
    old: Any
    new: Any
    step: int | None = None
    line: int | None = None  # file line (old recording's)
    statement: str | None = None
    message: bool = False  # only an exact message text changed


@dataclass
class ItemDrift:
    id: str
    changes: list[Change] = field(default_factory=list)


@dataclass
class Drift:
    old: dict[str, Any]  # headers
    new: dict[str, Any]
    items: list[ItemDrift]
    only_old: list[str]
    only_new: list[str]
    compared: int

    @property
    def identical(self) -> bool:
        return not (self.items or self.only_old or self.only_new)

    def counts(self) -> Counter[str]:
        return Counter(c.category for i in self.items for c in i.changes)

    def as_json(self) -> dict[str, Any]:
        return {
            "identical": self.identical, "old": self.old, "new": self.new,
            "items_compared": self.compared, "items_changed": len(self.items),
            "only_in_old": self.only_old, "only_in_new": self.only_new,
            "changes_by_category": dict(sorted(self.counts().items())),
            "items": [{"id": i.id, "changes": [
                {**asdict(c), "old": _jsonable(c.old), "new": _jsonable(c.new)}
                for c in i.changes]} for i in self.items],
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def category(field_name: str) -> str:
    if field_name.startswith("outcome."):
        return "message" if field_name == "outcome.text" else "error_kind"
    if field_name.startswith("warnings"):
        return "message" if field_name == "warnings.text" else "warnings"
    if field_name.startswith("events"):
        return "events"
    if field_name in ("statement", "steps"):
        return "steps"
    last = field_name.rsplit(".", 1)[-1]
    if ".grad." in field_name or last in ("grad", "grad_read_error"):
        return "grad"
    if last in ("values", "signed_zero", "value"):
        return "values"
    if last in ("grad_fn", "graph"):
        return "graph"
    if last in ("version", "is_view"):
        return "version"
    return "metadata"


def _item_changes(item_id: str, old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    if old.get("status") != new.get("status") or old.get("status") != RAN:
        if old.get("status") == new.get("status") and old.get("reason") == new.get("reason"):
            return []
        return [Change("item", "status", f"{old.get('status')}: {old.get('reason', '')}",
                       f"{new.get('status')}: {new.get('reason', '')}")]
    try:
        dtype = old["dtype"]
        old_steps, new_steps = old["trace"]["steps"], new["trace"]["steps"]
        e, a = trace_from_json(old["trace"]), trace_from_json(new["trace"])
    except (KeyError, TypeError, ValueError, IndexError) as error:  # a hand-edited file
        raise RecordingError(f"{item_id}: a stored trace cannot be read: "
                             f"{type(error).__name__}: {error}") from None
    changes: list[Change] = []
    for i, (es, as_) in enumerate(zip(e.steps, a.steps, strict=False)):
        where = old_steps[i]
        for name, ev, av, strict in step_diffs(es, as_, dtype, every=True,
                                               once=compared_once(e, a)):
            changes.append(Change(category(name), name, ev, av, i, where["file_line"],
                                  where["statement"], strict))
        if es.line != as_.line:
            break  # the programs no longer run the same statements: later steps don't align
    else:
        if len(e.steps) != len(a.steps):
            i = min(len(e.steps), len(a.steps))
            where = (old_steps if len(old_steps) > i else new_steps)[i]
            changes.append(Change("steps", "steps", f"{len(e.steps)} steps",
                                  f"{len(a.steps)} steps", i, where["file_line"],
                                  where["statement"]))
    return changes


def diff(old: dict[str, Any], new: dict[str, Any]) -> Drift:
    """The drift from recording `old` to recording `new` (both as loaded)."""
    old_items, new_items = old["items"], new["items"]
    items = []
    common = [k for k in old_items if k in new_items]
    for item_id in common:
        changes = _item_changes(item_id, old_items[item_id], new_items[item_id])
        if changes:
            items.append(ItemDrift(item_id, changes))
    return Drift(old["header"], new["header"], items,
                 [k for k in old_items if k not in new_items],
                 [k for k in new_items if k not in old_items], len(common))


# ---- rendering ---------------------------------------------------------------------------
def show(value: Any, limit: int = MAX_SHOWN) -> str:
    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=8, threshold=64).replace("\n", " ")
    elif isinstance(value, str):
        text = value
    else:
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def show_pair(old: Any, new: Any, limit: int = MAX_SHOWN) -> tuple[str, str]:
    """Both values for display; two long texts are cut to show where they start to differ."""
    if not (isinstance(old, str) and isinstance(new, str)) or max(len(old), len(new)) <= limit:
        return show(old, limit), show(new, limit)
    start = next((i for i, (x, y) in enumerate(zip(old, new, strict=False)) if x != y),
                 min(len(old), len(new)))
    start = max(0, start - limit // 4)
    prefix = "..." if start else ""
    return show(prefix + old[start:], limit), show(prefix + new[start:], limit)


HEADER_KEYS = ("torch_version", "engine", "python_version", "numpy_version", "devices",
               "date", "git_revision")


def summary(d: Drift, old_name: str, new_name: str) -> str:
    lines = [f"old: {old_name} ({_who(d.old)})", f"new: {new_name} ({_who(d.new)})"]
    if d.identical:
        lines.append(f"no drift: {d.compared} items, identical behaviour and messages")
        return "\n".join(lines)
    counts = d.counts()
    parts = [f"{len(d.items)} of {d.compared} items changed"]
    if d.items:
        parts.append(", ".join(f"{c}: {counts[c]}" for c in CATEGORIES if counts[c]))
    if d.only_old:
        parts.append(f"only in old: {len(d.only_old)}")
    if d.only_new:
        parts.append(f"only in new: {len(d.only_new)}")
    lines.append("; ".join(parts))
    for item in d.items:
        lines.append(f"{item.id}")
        for c in item.changes:
            at = "" if c.line is None else f"line {c.line} `{c.statement}`: "
            old, new = show_pair(c.old, c.new, 120)
            lines.append(f"  {at}[{c.category}] `{c.field}`: {old} -> {new}")
    lines += [f"only in old: {k}" for k in d.only_old]
    lines += [f"only in new: {k}" for k in d.only_new]
    return "\n".join(lines)


def _who(h: dict[str, Any]) -> str:
    return (f"engine {h.get('engine')}, torch {h.get('torch_version')}, "
            f"recorded {h.get('date')}")


def _cell(text: str) -> str:
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def markdown(d: Drift, old_name: str, new_name: str) -> str:
    lines = [f"# Autograd drift: `{old_name}` → `{new_name}`", "",
             "| | old | new |", "|---|---|---|"]
    for key in HEADER_KEYS:
        lines.append(f"| {key} | {d.old.get(key)} | {d.new.get(key)} |")
    lines.append("")
    if d.identical:
        lines.append(f"No drift: {d.compared} items have identical behaviour and messages.")
        return "\n".join(lines) + "\n"
    counts = d.counts()
    lines += [f"{len(d.items)} of {d.compared} items changed.", "",
              "| category | changes |", "|---|---|"]
    lines += [f"| {c} | {counts[c]} |" for c in CATEGORIES if counts[c]]
    if d.only_old or d.only_new:
        lines += ["", "## Items present in one recording only", ""]
        lines += [f"- only in old: `{k}`" for k in d.only_old]
        lines += [f"- only in new: `{k}`" for k in d.only_new]
    for item in d.items:
        lines += ["", f"## `{item.id}`", "",
                  "| line | statement | category | field | old | new |",
                  "|---|---|---|---|---|---|"]
        for c in item.changes:
            statement = "" if c.statement is None else _cell(show(c.statement))
            old, new = show_pair(c.old, c.new)
            lines.append(f"| {c.line if c.line is not None else ''} | {statement} | "
                         f"{c.category} | `{c.field}` | {_cell(old)} | {_cell(new)} |")
    return "\n".join(lines) + "\n"


def write_json(d: Drift, path: str | Path) -> None:
    Path(path).write_text(json.dumps(d.as_json(), indent=1, allow_nan=False) + "\n")


def write_markdown(d: Drift, path: str | Path, old_name: str, new_name: str) -> None:
    Path(path).write_text(markdown(d, old_name, new_name))
