"""Recordings: the traces of every case item on one engine, stored as JSON.

`autograd-conformance record` runs the case library on one engine (torch by default) and
writes each item's whole trace in a compact JSON-able form; `autograd-conformance diff`
(conformance/drift.py) compares two recordings, e.g. torch 2.13 against a newer release,
to list every behaviour and message that changed.

The form mirrors conformance/trace.py's dataclasses one to one, so a stored trace reads
back into the same Trace the comparator works on:

- step: `line` (program line), `file_line`, `statement`, `outcome` (status, kind, type,
  text; only the set fields), `warnings` ([kind, category, text]), `events`, `names`;
- tensor snapshot: `t: "tensor"`, the TensorSnapshot fields, `values` as nested lists
  (non-finite floats as the strings "nan", "inf", "-inf"; -0.0 stays -0.0) with their NumPy
  dtype in `values_dtype`, `grad` as a nested snapshot; None-valued optional fields left out;
- value snapshot: `t: "value"`, `kind`, `value`.

A file whose name ends in `.gz` is gzip-compressed.
"""

from __future__ import annotations

import datetime
import gzip
import json
import math
import platform
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from conformance.diagnostics import CaseError
from conformance.engines import TORCH, Engine, load_engine
from conformance.interpreter import run_program
from conformance.limits import RunLimit
from conformance.loader import Case, load_case
from conformance.report import git_revision
from conformance.runner import Item, items_of, statement_text, torch_engine
from conformance.trace import (
    Event,
    Outcome,
    Snapshot,
    Step,
    TensorSnapshot,
    TensorSummary,
    Trace,
    ValueSnapshot,
    WarningRecord,
)

FORMAT = "autograd-conformance-recording"
SCHEMA_VERSION = 1
RAN = "ran"
LOAD_ERROR = "load_error"  # the case file could not be loaded
CRASHED = "error"  # the harness itself raised while running the item

_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


# ---- values ----------------------------------------------------------------------------
def _encode_float(x: float) -> float | str:
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def _encode_nested(value: Any) -> Any:
    if isinstance(value, list):
        return [_encode_nested(v) for v in value]
    if isinstance(value, float):
        return _encode_float(value)
    return value


def _decode_nested(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode_nested(v) for v in value]
    if isinstance(value, str) and value in _NON_FINITE:
        return _NON_FINITE[value]
    return value


def encode_array(a: np.ndarray) -> Any:
    if a.dtype.kind == "c":
        return {"real": encode_array(a.real), "imag": encode_array(a.imag)}
    return _encode_nested(a.tolist())


def decode_array(data: Any, dtype: str, shape: Iterable[int]) -> np.ndarray:
    if isinstance(data, dict):
        real = decode_array(data["real"], dtype, shape)
        imag = decode_array(data["imag"], dtype, shape)
        return (real + 1j * imag).astype(dtype)
    return np.array(_decode_nested(data), dtype=dtype).reshape(tuple(shape))


def _encode_scalar(value: Any) -> Any:
    if isinstance(value, float):
        return _encode_float(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return repr(value)


# ---- snapshots, steps and traces ---------------------------------------------------------
def snapshot_to_json(s: Snapshot) -> dict[str, Any]:
    if isinstance(s, ValueSnapshot):
        return {"t": "value", "kind": s.kind, "value": _encode_scalar(s.value)}
    out: dict[str, Any] = {
        "t": "tensor", "type": s.type, "shape": list(s.shape), "dtype": s.dtype,
        "device": s.device, **_values_to_json(s.values), "requires_grad": s.requires_grad,
        "is_leaf": s.is_leaf, "grad_fn": s.grad_fn, "graph": s.graph,
        "retains_grad": s.retains_grad, "version": s.version, "is_view": s.is_view,
    }
    if s.alias is not None:
        out["alias"] = s.alias
    if s.grad is not None:
        out["grad"] = snapshot_to_json(s.grad)
    if s.grad_read_error is not None:
        out["grad_read_error"] = s.grad_read_error
    return out


def snapshot_from_json(d: dict[str, Any]) -> Snapshot:
    if d["t"] == "value":
        value = d["value"]
        if d["kind"] == "float" and isinstance(value, str):
            value = _NON_FINITE.get(value, value)
        return ValueSnapshot(d["kind"], value)
    shape = tuple(int(n) for n in d["shape"])
    return TensorSnapshot(
        type=d["type"], shape=shape, dtype=d["dtype"], device=d["device"],
        values=_values_from_json(d, shape),
        requires_grad=d["requires_grad"], is_leaf=d["is_leaf"], grad_fn=d["grad_fn"],
        graph=d["graph"], retains_grad=d["retains_grad"], version=d["version"],
        is_view=d["is_view"], alias=d.get("alias"),
        grad=_grad_from_json(d.get("grad")),
        grad_read_error=d.get("grad_read_error"),
    )


# A tensor observed as a summary (limits.SUMMARY_THRESHOLD) is stored as its statistics.
_SUMMARY = "summary"


def _values_to_json(values: np.ndarray | TensorSummary) -> dict[str, Any]:
    if isinstance(values, TensorSummary):
        return {"values": {k: _encode_scalar(v) for k, v in vars(values).items()},
                "values_dtype": _SUMMARY}
    return {"values": encode_array(values), "values_dtype": str(values.dtype)}


def _values_from_json(d: dict[str, Any], shape: tuple[int, ...]
                      ) -> np.ndarray | TensorSummary:
    if d["values_dtype"] == _SUMMARY:
        return TensorSummary(**{k: v if k == "checksum" else _NON_FINITE.get(v, v)
                                for k, v in d["values"].items()})
    return decode_array(d["values"], d["values_dtype"], shape)


def _grad_from_json(d: dict[str, Any] | None) -> TensorSnapshot | None:
    if d is None:
        return None
    grad = snapshot_from_json(d)
    if not isinstance(grad, TensorSnapshot):
        raise ValueError(f"a stored .grad is not a tensor: {d!r}")
    return grad


def _names_to_json(names: dict[str, Snapshot]) -> dict[str, Any]:
    return {path: snapshot_to_json(s) for path, s in names.items()}


def _names_from_json(d: dict[str, Any]) -> dict[str, Snapshot]:
    return {path: snapshot_from_json(s) for path, s in d.items()}


def outcome_to_json(o: Outcome) -> dict[str, Any]:
    return {k: v for k, v in (("status", o.status), ("kind", o.kind), ("type", o.type),
                              ("text", o.text)) if v is not None}


def step_to_json(step: Step, case: Case) -> dict[str, Any]:
    out: dict[str, Any] = {
        "line": step.line, "file_line": step.line + case.line_offset,
        "statement": statement_text(case, step.line), "outcome": outcome_to_json(step.outcome),
    }
    if step.warnings:
        out["warnings"] = [[w.kind, w.category, w.text] for w in step.warnings]
    if step.events:
        out["events"] = [{"source": e.source, "received": _names_to_json(e.received),
                          "returned": _names_to_json(e.returned)} for e in step.events]
    out["names"] = _names_to_json(step.names)
    return out


def step_from_json(d: dict[str, Any]) -> Step:
    o = d["outcome"]
    return Step(
        line=d["line"],
        outcome=Outcome(o["status"], o.get("kind"), o.get("type"), o.get("text")),
        warnings=[WarningRecord(k, c, t) for k, c, t in d.get("warnings", [])],
        events=[Event(e["source"], _names_from_json(e["received"]),
                      _names_from_json(e["returned"])) for e in d.get("events", [])],
        names=_names_from_json(d["names"]),
    )


def trace_to_json(trace: Trace, case: Case) -> dict[str, Any]:
    failure = next((i for i, s in enumerate(trace.steps) if s is trace.failure), None)
    return {"engine": trace.engine, "failure": failure,
            "steps": [step_to_json(s, case) for s in trace.steps]}


def trace_from_json(d: dict[str, Any]) -> Trace:
    steps = [step_from_json(s) for s in d["steps"]]
    failure = d.get("failure")
    return Trace(d["engine"], steps, None if failure is None else steps[failure])


# ---- recordings ---------------------------------------------------------------------------
def header(engine: str) -> dict[str, Any]:
    import torch

    return {
        "torch_version": torch.__version__,
        "engine": engine,
        "python_version": platform.python_version(),
        "numpy_version": np.__version__,
        "cuda_available": bool(torch.cuda.is_available()),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_revision": git_revision(),
    }


def case_files(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        path = Path(p)
        files += sorted(path.rglob("*.yaml")) if path.is_dir() else [path]
    return files


def item_record(item: Item, engine: Engine) -> dict[str, Any]:
    """One item run on `engine`: its metadata and its trace."""
    case = item.case
    record: dict[str, Any] = {
        "file": case.path, "device": item.device, "dtype": item.dtype,
        "features": list(case.features), "line_offset": case.line_offset,
    }
    try:
        trace = run_program(engine, case.program, seed=case.seed, dtype=item.dtype,
                            device=item.device)
    except Exception as e:  # a harness or engine crash outside any statement
        return {**record, "status": CRASHED, "reason": f"{type(e).__name__}: {e}"}
    except RunLimit as e:  # statements or trace memory (conformance.limits)
        line = "?" if e.line is None else e.line + case.line_offset
        return {**record, "status": CRASHED, "reason": f"stopped at {case.path}:{line}: {e}"}
    return {**record, "status": RAN, "trace": trace_to_json(trace, case)}


def record(paths: Iterable[str | Path], engine_name: str = TORCH, *,
           progress: Callable[[int, int, float], None] | None = None,
           every: int = 25, errors: TextIO | None = None) -> dict[str, Any]:
    """The recording of every case item under `paths` on the engine `engine_name`:
    cpu items, and cuda items where torch has cuda; each case's dtypes."""
    engine = torch_engine() if engine_name == TORCH else load_engine(engine_name)
    torch = torch_engine()
    items: dict[str, dict[str, Any]] = {}
    todo: list[Item] = []
    for f in case_files(paths):
        try:
            case = load_case(f)
        except CaseError as e:
            if errors is not None:
                print(e, file=errors)
            items[f"{f}"] = {"file": str(f), "status": LOAD_ERROR, "reason": str(e)}
            continue
        todo += [i for i in items_of(case) if torch.device_available(i.device)]
    started = time.monotonic()
    for n, item in enumerate(todo, 1):
        items[item.id] = item_record(item, engine)
        if progress is not None and (n % every == 0 or n == len(todo)):
            progress(n, len(todo), time.monotonic() - started)
    devices = sorted({i.device for i in todo})
    return {"format": FORMAT, "schema_version": SCHEMA_VERSION,
            "header": {**header(engine_name), "devices": devices,
                       "wall_time_s": round(time.monotonic() - started, 3)},
            "items": dict(sorted(items.items()))}


def dump(recording: dict[str, Any], path: str | Path) -> None:
    """Write `recording` as compact JSON, one item per line (diffable and small)."""
    lines = ["{" + f'"format":{json.dumps(recording["format"])},'
             f'"schema_version":{recording["schema_version"]},'
             f'"header":{json.dumps(recording["header"], sort_keys=True)},'
             '"items":{']
    entries = [f"{json.dumps(k)}:{json.dumps(v, separators=(',', ':'), allow_nan=False)}"
               for k, v in recording["items"].items()]
    text = "\n".join(lines) + "\n" + ",\n".join(entries) + "\n}}\n"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")


class RecordingError(ValueError):
    pass


def load(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        raw = path.read_bytes()
        data = json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
    except (OSError, ValueError) as e:
        raise RecordingError(f"{path}: cannot read the recording: {e}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RecordingError(f"{path}: not an autograd-conformance recording "
                             "(write one with `autograd-conformance record`)")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise RecordingError(f"{path}: recording schema {data.get('schema_version')}, this "
                             f"version reads schema {SCHEMA_VERSION}")
    return data


def print_progress(n: int, total: int, seconds: float) -> None:
    print(f"record: {n}/{total} items ({seconds:.1f} s)", file=sys.stderr, flush=True)
