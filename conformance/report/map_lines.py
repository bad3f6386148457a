"""What the coverage maps share (the autograd test files' maps, report/coverage_map.py, and
the OpInfo op map, opinfo/opmap.py): the statuses an entry has and how its map line is read,
`todo`, `out of scope: <category>[: detail]` or `{left out: [<item>, ...]}`, each map
checking its own categories and left-out items. A map may also let a todo say why it is
not done yet (`todo: <reason>`)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

TODO = "todo"
OUT_OF_SCOPE = "out of scope"
COVERED = "covered"
PARTLY = "partly covered"
LEFT_OUT = "left out"
STATUSES = (COVERED, PARTLY, TODO, OUT_OF_SCOPE)  # the tables' order


class MapError(ValueError):
    """The map file breaks its format."""


@dataclass(frozen=True)
class MapForm:
    """How one map's lines are written, for its error messages."""

    left_out_entry: str  # what has items left out, e.g. "a covered entry with parts left out"
    item: str  # an item's form, e.g. "<part>: <reason>"
    covered_from: str  # where `covered` is derived from, e.g. "reference_engine/registry.py"


@dataclass(frozen=True)
class Line:
    status: str  # TODO (in scope, maybe with items left out) or OUT_OF_SCOPE
    reason: str = ""  # OUT_OF_SCOPE: "<category>[: detail]"; TODO: why it is not done yet
    left_out: tuple[object, ...] = ()  # the items as written, for the map to read


def read_line(key: str, value: object, form: MapForm, categories: Collection[str], *,
              todo_reasons: bool = False) -> Line:
    """The status of the entry `key` written `value`; MapError naming it if it is none.
    With `todo_reasons`, `todo: <reason>` is a todo that says why it is not done yet."""
    if value == TODO:
        return Line(TODO)
    todo_prefix = TODO + ": "
    if todo_reasons and isinstance(value, str) and value.startswith(todo_prefix):
        reason = value[len(todo_prefix):].strip()
        if not reason:
            raise MapError(f"{key}: `{value}` gives no reason; write `{TODO}` or "
                           f"`\"{TODO}: <why it is not done yet>\"`")
        return Line(TODO, reason)
    if isinstance(value, dict):
        items = value.get(LEFT_OUT)
        if set(value) != {LEFT_OUT} or not isinstance(items, list) or not items:
            raise MapError(f"{key}: {form.left_out_entry} is "
                           f"`{{{LEFT_OUT}: [\"{form.item}\", ...]}}` (a non-empty list)")
        return Line(TODO, left_out=tuple(items))
    prefix = OUT_OF_SCOPE + ": "
    if not isinstance(value, str) or not value.startswith(prefix):
        hint = f" (covered is derived from {form.covered_from})" if value == COVERED else ""
        raise MapError(f"{key}: `{value}` is not a status{hint}; write `{TODO}`, "
                       f"`\"{OUT_OF_SCOPE}: <category>[: detail]\"` or "
                       f"`{{{LEFT_OUT}: [\"{form.item}\", ...]}}`")
    reason = value[len(prefix):].strip()
    category = reason.split(":", 1)[0]
    if category not in categories:
        raise MapError(f"{key}: unknown category `{category}`; "
                       f"use one of {', '.join(sorted(categories))}")
    return Line(OUT_OF_SCOPE, reason)
