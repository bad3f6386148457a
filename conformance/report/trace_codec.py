"""Traces as JSON-able data and back (a recording stores them: report/recording.py).

The form is derived from conformance/run/trace.py's dataclasses (`dataclasses.fields`), so a
stored trace reads back into the very same Trace the comparator works on, every field
included:

- step: its fields `line` (program line), `outcome` (the set fields of Outcome),
  `warnings` (each a list of WarningRecord's fields, in order; left out when empty),
  `events` (left out when empty) and `names`, plus `file_line` and `statement`;
- tensor snapshot: `t: "tensor"` and every TensorSnapshot field that is not at its
  default (`engine_made` only when true): `values` as nested lists (non-finite floats as
  the strings "nan", "inf", "-inf"; -0.0 stays -0.0; a complex array as
  `{"real": ..., "imag": ...}`, two such lists) with their NumPy dtype in
  `values_dtype` (and `values_shape` when empty), `grad` as a nested snapshot;
- value snapshot: `t: "value"`, `kind`, `value` (a complex number as `{"real", "imag"}`).
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from conformance.case.loader import Case
from conformance.run.runner import statement_text
from conformance.run.trace import (
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


class RecordingError(ValueError):
    pass


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


def decode_array(data: Any, dtype: str, shape: Iterable[int] | None = None) -> np.ndarray:
    if isinstance(data, dict):
        real = decode_array(data["real"], "float64", shape)
        out = np.empty(real.shape, dtype=dtype)
        # part by part: `real + 1j * imag` would turn an infinite imaginary part into a NaN
        # real one (1j * inf is nan+infj)
        out.real, out.imag = real, decode_array(data["imag"], "float64", shape)
        return out
    array = np.array(_decode_nested(data), dtype=dtype)
    return array if shape is None else array.reshape(tuple(shape))


def _encode_scalar(value: Any) -> Any:
    if isinstance(value, float):
        return _encode_float(value)
    if isinstance(value, complex):  # a complex .item(), a complex number of the program
        return {"real": _encode_float(value.real), "imag": _encode_float(value.imag)}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return repr(value)


# ---- snapshots, steps and traces ---------------------------------------------------------
# Every dataclass is stored field by field, as `dataclasses.fields` lists them, so a field
# added to conformance/run/trace.py is stored and read back without a change here (a field the
# codecs below cannot store fails loudly instead of being dropped).
_TAGS: dict[str, type[TensorSnapshot] | type[ValueSnapshot]] = {
    "tensor": TensorSnapshot, "value": ValueSnapshot}
_HINTS = {cls: typing.get_type_hints(cls) for cls in (*_TAGS.values(), Outcome, Event)}


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _is_default(f: dataclasses.Field[Any], value: Any) -> bool:
    default = _default(f)
    return default is not dataclasses.MISSING and type(value) is type(default) \
        and bool(value == default)


# A tensor observed as a summary (limits.SUMMARY_THRESHOLD) is stored as its statistics.
_SUMMARY = "summary"


def _encode_field(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, TensorSummary):
        return {name: {k: _encode_scalar(v) for k, v in vars(value).items()},
                f"{name}_dtype": _SUMMARY}
    if isinstance(value, np.ndarray):
        out = {name: encode_array(value), f"{name}_dtype": str(value.dtype)}
        if value.size == 0:  # nested lists lose the shape of an empty array
            out[f"{name}_shape"] = list(value.shape)
        return out
    if isinstance(value, (TensorSnapshot, ValueSnapshot)):
        return {name: snapshot_to_json(value)}
    if isinstance(value, tuple):
        return {name: [_encode_scalar(v) for v in value]}
    return {name: _encode_scalar(value)}


def _decode_field(cls: type, name: str, d: dict[str, Any]) -> Any:
    value, hint = d[name], _HINTS[cls][name]
    if value is None:
        return None
    if d.get(f"{name}_dtype") == _SUMMARY:
        return TensorSummary(**{k: v if k == "checksum" else _NON_FINITE.get(v, v)
                                for k, v in value.items()})
    if hint is np.ndarray or f"{name}_dtype" in d:  # values: an array or a summary
        return decode_array(value, d[f"{name}_dtype"], d.get(f"{name}_shape"))
    if isinstance(value, dict) and value.get("t") in _TAGS:
        return snapshot_from_json(value)
    if typing.get_origin(hint) is tuple:
        return tuple(value)
    return value


def snapshot_to_json(s: Snapshot) -> dict[str, Any]:
    """`{"t": "tensor" | "value", field: value, ...}`; fields at their default left out."""
    out: dict[str, Any] = {"t": next(t for t, cls in _TAGS.items() if type(s) is cls)}
    for f in dataclasses.fields(s):
        value = getattr(s, f.name)
        if not _is_default(f, value):
            out.update(_encode_field(f.name, value))
    return out


def snapshot_from_json(d: dict[str, Any]) -> Snapshot:
    cls = _TAGS.get(d.get("t", ""))
    if cls is None:
        raise RecordingError(f"a stored snapshot of unknown type: {str(d)[:200]}")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in d:
            kwargs[f.name] = _decode_field(cls, f.name, d)
        elif _default(f) is dataclasses.MISSING:
            raise RecordingError(f"a stored {cls.__name__} lacks `{f.name}`: {str(d)[:200]}")
    if cls is ValueSnapshot and kwargs["kind"] == "float" and isinstance(kwargs.get("value"),
                                                                         str):
        kwargs["value"] = _NON_FINITE.get(kwargs["value"], kwargs["value"])
    if cls is ValueSnapshot and kwargs["kind"] == "complex" and isinstance(kwargs.get("value"),
                                                                           dict):
        parts = kwargs["value"]
        kwargs["value"] = complex(_NON_FINITE.get(parts["real"], parts["real"]),
                                  _NON_FINITE.get(parts["imag"], parts["imag"]))
    if cls is TensorSnapshot and kwargs.get("grad") is not None \
            and not isinstance(kwargs["grad"], TensorSnapshot):
        raise RecordingError(f"a stored .grad is not a tensor: {str(d)[:200]}")
    return cls(**kwargs)


def _names_to_json(names: dict[str, Snapshot]) -> dict[str, Any]:
    return {path: snapshot_to_json(s) for path, s in names.items()}


def _names_from_json(d: dict[str, Any]) -> dict[str, Snapshot]:
    return {path: snapshot_from_json(s) for path, s in d.items()}


def outcome_to_json(o: Outcome) -> dict[str, Any]:
    return {f.name: getattr(o, f.name) for f in dataclasses.fields(o)
            if getattr(o, f.name) is not None}


def outcome_from_json(d: dict[str, Any]) -> Outcome:
    return Outcome(**{f.name: d[f.name] for f in dataclasses.fields(Outcome) if f.name in d})


def _warning_to_json(w: WarningRecord) -> list[Any]:
    return [getattr(w, f.name) for f in dataclasses.fields(w)]  # compact: in field order


def _warning_from_json(row: list[Any]) -> WarningRecord:
    return WarningRecord(*row)


def _event_to_json(e: Event) -> dict[str, Any]:
    return {f.name: _names_to_json(v) if isinstance(v, dict) else v
            for f in dataclasses.fields(e) for v in [getattr(e, f.name)]}


def _event_from_json(d: dict[str, Any]) -> Event:
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(Event):
        is_names = typing.get_origin(_HINTS[Event][f.name]) is dict
        kwargs[f.name] = _names_from_json(d[f.name]) if is_names else d[f.name]
    return Event(**kwargs)


# How each field of a Step is stored and read back; a Step field missing here is an error
# at the first recording, never a field silently dropped.
_STEP_CODECS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "line": (int, int),
    "outcome": (outcome_to_json, outcome_from_json),
    "warnings": (lambda ws: [_warning_to_json(w) for w in ws],
                 lambda rows: [_warning_from_json(r) for r in rows]),
    "events": (lambda es: [_event_to_json(e) for e in es],
               lambda ds: [_event_from_json(d) for d in ds]),
    "names": (_names_to_json, _names_from_json),
}


def step_to_json(step: Step, case: Case) -> dict[str, Any]:
    """The step's fields (empty lists left out), with its file line and statement text."""
    out: dict[str, Any] = {"file_line": step.line + case.line_offset,
                           "statement": statement_text(case, step.line)}
    for f in dataclasses.fields(step):
        value = getattr(step, f.name)
        if value != [] or f.name == "names":
            out[f.name] = _STEP_CODECS[f.name][0](value)
    return out


def step_from_json(d: dict[str, Any]) -> Step:
    kwargs = {f.name: _STEP_CODECS[f.name][1](d[f.name])
              for f in dataclasses.fields(Step) if f.name in d}
    return Step(**kwargs)


def trace_to_json(trace: Trace, case: Case) -> dict[str, Any]:
    failure = next((i for i, s in enumerate(trace.steps) if s is trace.failure), None)
    out = {"engine": trace.engine, "failure": failure,
           "steps": [step_to_json(s, case) for s in trace.steps]}
    if not trace.warn_always:  # an engine without set_warn_always (compare.compared_once)
        out["warn_always"] = False
    return out


def trace_from_json(d: dict[str, Any]) -> Trace:
    steps = [step_from_json(s) for s in d["steps"]]
    failure = d.get("failure")
    return Trace(d["engine"], steps, None if failure is None else steps[failure],
                 warn_always=bool(d.get("warn_always", True)))
