"""The records of a run report, one per item (or per file that failed to load): plain
JSON-able dicts built on whichever process ran the item (an xdist worker or the controller)
and merged in the controller (report/files.py writes them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.run.compare import Divergence
from conformance.run.runner import (
    ERROR,
    PASS,
    SKIPPED,
    Item,
    ItemResult,
    describe_failure,
    statement_text,
)
from conformance.run.trace import TensorSnapshot, Trace


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())   # complex elements become their repr, below
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def _divergence(result: ItemResult, d: Divergence | None) -> dict[str, Any] | None:
    if d is None:
        return None
    case = result.item.case
    return divergence_record(d, d.line + case.line_offset, statement_text(case, d.line),
                             result.torch_trace, result.engine_trace)


def divergence_record(d: Divergence, line: int, statement: str, torch_trace: Trace | None,
                      engine_trace: Trace | None) -> dict[str, Any]:
    """A first divergence as records carry it (a case item's, a generated program's): the
    line in the program's file, the statement, the field, both values and, for a field of
    a tensor, both engines' graph signatures of that tensor (what the HTML report draws)."""
    return {
        "line": line, "statement": statement,
        "field": d.field, "torch": _jsonable(d.expected), "engine": _jsonable(d.actual),
        "strict": d.strict, "graphs": _graphs(d, torch_trace, engine_trace),
    }


def _graphs(d: Divergence, torch_trace: Trace | None, engine_trace: Trace | None
            ) -> dict[str, str | None] | None:
    """The graph signatures (tensor_read.graph_signature) of the tensor the divergent field
    belongs to, in both traces at the divergent step."""
    traces = (torch_trace, engine_trace)
    if any(t is None or d.step >= len(t.steps) for t in traces):
        return None
    graphs: dict[str, str | None] = {}
    for side, trace in zip(("torch", "engine"), traces, strict=True):
        assert trace is not None
        names = trace.steps[d.step].names
        # the longest name path that prefixes the field: "a.grad.values" -> "a"
        owner = max((p for p in names if d.field.startswith(p + ".")), key=len, default=None)
        snap = names.get(owner) if owner else None
        graphs[side] = snap.graph if isinstance(snap, TensorSnapshot) else None
    return graphs if any(graphs.values()) else None


def item_record(item: Item, result: ItemResult | None, outcome: str, longrepr: str
                ) -> dict[str, Any]:
    case = item.case
    record: dict[str, Any] = {
        "id": item.id, "file": case.path, "features": list(case.features),
        "device": item.device, "dtype": item.dtype,
        "description": case.description, "source": case.source,
        "engine": None if result is None else result.engine,
        "verdict": ERROR if result is None else result.verdict,
        "pytest_outcome": outcome,
        "reason": "" if result is None else result.reason,
    }
    if result is None:
        record["reason"] = longrepr[-2000:]
        return record
    record["divergence"] = _divergence(result, result.divergence or result.masked)
    record["message_divergence"] = _divergence(result, result.message_divergence)
    if result.missing_api:
        record["missing_api"] = list(result.missing_api)
    if outcome == "failed":
        record["report"] = describe_failure(result)
        record["repro"] = result.repro()
        record["program"] = case.source_text
        record["program_first_line"] = case.line_offset + 1
    return record


def error_record(nodeid: str, longrepr: str) -> dict[str, Any]:
    """The record of a case item that ended without a verdict (its worker crashed)."""
    path, _, name = nodeid.rpartition("::")
    device, _, dtype = name.partition("-")
    return {"id": nodeid, "file": path, "features": ["unknown"], "device": device,
            "dtype": dtype, "engine": None, "verdict": ERROR, "pytest_outcome": "failed",
            "reason": longrepr[-2000:]}


def collection_error_record(nodeid: str, file: str, line: int | None, message: str,
                            text: str) -> dict[str, Any]:
    """The record of a case file that failed to load: it has no items, so it stands for
    them (device and dtype null), with the loader's file, line, message and whole text."""
    return {"id": nodeid, "file": file, "line": line, "message": message,
            "features": ["unknown"], "device": None, "dtype": None, "engine": None,
            "verdict": ERROR, "pytest_outcome": "failed", "reason": text[-2000:],
            "report": text[-20000:]}


GENERATED_DESCRIPTION = ("Random programs drawn by conformance.gen.strategies (hypothesis), run on "
                         "torch and the engine; a failure is shrunk to a minimal program")


def generated_record(nodeid: str, engine: str, outcome: str, report: str = "", *,
                     verdict: str | None = None, fields: dict[str, Any] | None = None,
                     repro: str | None = None) -> dict[str, Any]:
    """The record of a generated-program item: one per run, over all its programs. A
    failure's record has a case item's failure fields (`fields`: program, divergence, the
    ready YAML case; generated_report), its `report` text and `repro` command; a failure
    without them (a crashed worker) is an `error`."""
    record: dict[str, Any] = {
        "id": nodeid, "file": nodeid.split("::")[0], "features": ["generated"],
        "device": "cpu", "dtype": "float32", "description": GENERATED_DESCRIPTION,
        "engine": engine,
        "verdict": verdict or {"passed": PASS, "skipped": SKIPPED}.get(outcome, ERROR),
        "pytest_outcome": outcome, "reason": "",
    }
    if outcome == "failed":
        record.update(fields or {})
        record["report"] = report[-20000:]
        if repro:
            record["repro"] = repro
    return record
