"""`autograd-conformance explain ID`: one item's traces on torch and on an engine, side by
side, statement by statement, ending with the first divergence.

Differences are exactly those of the comparator (`compare.step_diffs` and
`compare.snapshot_diffs`, which the verdict is taken from), but every differing field of a
name is shown, where the comparator stops at the first; what it does not compare (the
`_version` of an engine-made tensor, a warning torch gives once per process where the engine
has no warn-always) is never marked as a difference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from conformance.case import paths
from conformance.case.loader import Case, load_case, read_case_text
from conformance.run import compare
from conformance.run.compare import ENGINE_MADE_FIELDS, TENSOR_FIELDS, step_diffs
from conformance.run.engine import Engine
from conformance.run.interpreter import run_program
from conformance.run.runner import (
    CASE_WRONG,
    SKIPPED,
    UNSUPPORTED,
    Item,
    ItemResult,
    describe_failure,
    items_of,
    run_item,
    statement_text,
    torch_engine,
)
from conformance.run.trace import Event, Snapshot, Step, ValueSnapshot

WIDTH = 100  # characters of one shown value


class ExplainError(ValueError):
    pass


def find_item(item_id: str, cwd: Path | None = None) -> Item:
    """The item named `path::device-dtype` (or `path`: its first item torch can run), where
    `path` is a case file's path from `cwd` (default: the working directory) or its id
    (paths.locate). The item has the id a run gives it."""
    path, _, name = item_id.partition("::")
    cwd = Path.cwd() if cwd is None else cwd
    places = paths.locate(path, cwd)
    file = places[0]
    if not file.is_file():
        raise ExplainError(f"{path}: no such case file (looked for "
                           f"{', '.join(str(p) for p in places)}); name the file by its "
                           "path, or by its id from the project or the clone holding it")
    case_id = paths.CaseIds([file], cwd).of(file)
    case = load_case(case_id, read_case_text(file, case_id))
    items = items_of(case, paths.rerun_path(file, cwd))
    if not name:
        runnable = [i for i in items if torch_engine().device_available(i.device)]
        if not runnable:
            raise ExplainError(f"{path}: no item of this case can run here")
        return runnable[0]
    for item in items:
        if item.name == name:
            return item
    raise ExplainError(f"{path} has no item `{name}`; its items: "
                       f"{', '.join(i.name for i in items)}")


def _show(value: Any, width: int = WIDTH) -> str:
    if isinstance(value, np.ndarray):
        text = np.array2string(value, precision=6, threshold=16, separator=", ")
        text = " ".join(text.split())
    else:
        text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= width else text[:width - 3] + "..."


def summarise(s: Snapshot) -> str:
    """One line for a snapshot that is equal on both sides."""
    if isinstance(s, ValueSnapshot):
        if s.kind == "NoneType":
            return "None"
        return s.kind if s.value is None else f"{s.kind} {s.value!r}"
    flags = ["leaf" if s.is_leaf else "nonleaf"]
    if s.requires_grad:
        flags.append("requires_grad")
    if s.retains_grad:
        flags.append("retains_grad")
    if s.is_view:
        flags.append("view")
    if s.alias:
        flags.append(f"is {s.alias}")
    parts = [f"{s.type}{list(s.shape)} {s.dtype.removeprefix('torch.')} {s.device}",
             " ".join(flags), f"v{s.version}"]
    if s.grad_fn:
        parts.append(f"grad_fn={s.grad_fn}")
    parts.append(f"values={_show(s.values, 48)}")
    if s.grad is not None:
        parts.append(f"grad={_show(s.grad.values, 40)}")
    if s.grad_read_error:
        parts.append(f"grad raises: {_show(s.grad_read_error, 40)}")
    return ", ".join(parts)


def name_diffs(path: str, e: Snapshot | None, a: Snapshot | None, dtype: str,
               fields: tuple[str, ...] = TENSOR_FIELDS) -> list[tuple[str, Any, Any]]:
    """Every compared field of one name that differs, by the comparator's own rules."""
    if e is None or a is None:
        return [(path, "absent" if e is None else summarise(e),
                 "absent" if a is None else summarise(a))]
    return list(compare.snapshot_diffs({path: e}, {path: a}, dtype, "", fields, every=True))


def _names(lines: list[str], e: dict[str, Snapshot], a: dict[str, Snapshot], dtype: str,
           indent: str, fields: tuple[str, ...] = TENSOR_FIELDS,
           before: dict[str, Snapshot] | None = None) -> None:
    """Each name: the fields that differ, or one line when equal. With `before` (the
    previous step's names), equal names unchanged since then are only listed by name."""
    unchanged = []
    for path in list(e) + [p for p in a if p not in e]:
        diffs = name_diffs(path, e.get(path), a.get(path), dtype, fields)
        if not diffs:
            if before is not None and path in before and not name_diffs(
                    path, before[path], e[path], dtype, fields):
                unchanged.append(path)
            else:
                lines.append(f"{indent}  {path}: {summarise(e[path])}")
            continue
        lines.append(f"{indent}! {path}: differs")
        for f, ev, av in diffs:
            lines.append(f"{indent}    {f}")
            lines.append(f"{indent}      torch:  {_show(ev)}")
            lines.append(f"{indent}      engine: {_show(av)}")
    if unchanged:
        lines.append(f"{indent}  unchanged: {', '.join(unchanged)}")


def _events(lines: list[str], e: list[Event], a: list[Event], dtype: str) -> None:
    for i in range(max(len(e), len(a))):
        ee = e[i] if i < len(e) else None
        ae = a[i] if i < len(a) else None
        if ee is None or ae is None or ee.source != ae.source:
            lines.append(f"  ! event {i}: torch {ee.source if ee else 'none'}, "
                         f"engine {ae.source if ae else 'none'}")
            continue
        lines.append(f"    event {i}: {ee.source}")
        for label, ex, ac in (("received", ee.received, ae.received),
                              ("returned", ee.returned, ae.returned)):
            if ex or ac:
                lines.append(f"      {label}:")
                _names(lines, ex, ac, dtype, "      ", ENGINE_MADE_FIELDS)


def _outcome(step: Step | None) -> str:
    return "(not run)" if step is None else step.outcome.describe()


def _warnings(step: Step | None) -> list[str]:
    return [] if step is None else [f"{w.category} [{w.kind}]: {w.text}"
                                    for w in step.warnings]


def render_steps(case: Case, dtype: str, torch_steps: list[Step],
                 engine_steps: list[Step] | None, *, all_names: bool = False,
                 once: bool = True) -> list[str]:
    lines: list[str] = []
    before: dict[str, Snapshot] | None = None if all_names else {}
    shown = engine_steps if engine_steps is not None else []
    for i in range(max(len(torch_steps), len(shown))):
        e = torch_steps[i] if i < len(torch_steps) else None
        a = shown[i] if i < len(shown) else None
        step = e or a
        assert step is not None
        marks = [] if e is None or a is None else list(step_diffs(e, a, dtype, every=True,
                                                                  once=once))
        marked = {field for field, *_ in marks}
        mark = "!!" if ((e is None or a is None) and engine_steps is not None) or any(
            not strict for *_, strict in marks) else ("~ " if marks else "  ")
        lines.append(f"{mark}[{i}] line {step.line + case.line_offset}: "
                     f"{statement_text(case, step.line)}")
        # both engines ran this statement: the comparator's differences say what differs
        aligned = e is not None and a is not None and "statement" not in marked
        if e is not None and a is not None and not aligned:
            lines.append(f"  ! statement: the engine ran line {a.line + case.line_offset}: "
                         f"{statement_text(case, a.line)}")
        if engine_steps is None:
            lines.append(f"    outcome: {_outcome(e)}")
        elif aligned and not any(f.startswith("outcome.") for f in marked):
            lines.append(f"    outcome: {_outcome(e)} (both)")
        else:
            lines += [f"  ! outcome: torch:  {_outcome(e)}",
                      f"             engine: {_outcome(a)}"]
        ew, aw = _warnings(e), _warnings(a)
        if engine_steps is None or ew == aw:
            lines += [f"    warning{'' if engine_steps is None else ' (both)'}: {w}"
                      for w in ew]
        elif not aligned or marked & {"warnings", "warnings.text"}:
            lines += [f"  ! warning, torch:  {w}" for w in ew] or ["  ! warning, torch:  none"]
            lines += [f"  ! warning, engine: {w}" for w in aw] or ["  ! warning, engine: none"]
        else:  # they differ only in warnings the comparator leaves out
            lines += [f"    warning, torch:  {w}" for w in ew] or ["    warning, torch:  none"]
            lines += [f"    warning, engine: {w}" for w in aw] or ["    warning, engine: none"]
            lines.append("    (not compared: torch gives these warnings once per process, and "
                         "the engine has no set_warn_always)")
        if engine_steps is None:
            if e is not None:
                _events(lines, e.events, e.events, dtype)
                _names(lines, e.names, e.names, dtype, "  ", before=before)
        elif e is not None and a is not None:
            _events(lines, e.events, a.events, dtype)
            if "names" in marked and set(e.names) == set(a.names):
                lines.append("  ! names: the same, in a different order")
            _names(lines, e.names, a.names, dtype, "  ", before=before)
        if before is not None and e is not None:
            before = e.names
    return lines


def explain(item: Item, engine: Engine, *, all_names: bool = False
            ) -> tuple[str, ItemResult]:
    """The side-by-side text for `item`, and its verdict."""
    case = item.case
    result = run_item(item, engine)
    head = [f"{item.id}: torch ({torch_engine().module.__version__}) vs {engine.name}",
            f"  {case.description}",
            f"  features: {', '.join(case.features)}; seed {case.seed}",
            "  legend: `!!` a step that diverges, `~` only a message text differs, "
            "`!` the differing part; names are shown when new or changed",
            ""]
    if result.verdict == SKIPPED:
        return "\n".join([*head, f"skipped: {result.reason}"]), result
    if result.torch_trace is None:  # a whole-run limit stopped it (conformance.run.limits)
        return "\n".join([*head, f"{result.verdict}: {result.reason}"]), result
    torch_trace = result.torch_trace
    assert torch_trace is not None
    engine_trace = result.engine_trace
    if engine_trace is None:  # the case disagrees with torch; show the engine anyway
        engine_trace = run_program(engine, case.program, seed=case.seed, dtype=item.dtype,
                                   device=item.device)
    body = render_steps(case, item.dtype, torch_trace.steps, engine_trace.steps,
                        all_names=all_names, once=compare.compared_once(torch_trace,
                                                                        engine_trace))
    tail = [""]
    if result.verdict == CASE_WRONG:
        tail.append(f"the case itself fails on torch: {result.reason}")
    elif result.verdict == UNSUPPORTED:
        tail.append(f"unsupported: {result.reason}")
    elif result.divergence is None and result.message_divergence is None:
        tail.append(f"no divergence: {engine.name} agrees with torch on all "
                    f"{len(torch_trace.steps)} steps")
    else:
        d = result.divergence or result.message_divergence
        assert d is not None
        tail.append(f"first divergence at step [{d.step}]:")
        tail.append(describe_failure(result))
    return "\n".join(head + body + tail), result
