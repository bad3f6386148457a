"""Recordings: the traces of every case item on one engine, stored as JSON.

`autograd-conformance record` runs the case library on one engine (torch by default) and
writes each item's whole trace in a compact JSON-able form; `autograd-conformance diff`
(conformance/report/drift.py) compares two recordings, e.g. torch 2.13 against a newer release,
to list every behaviour and message that changed.

With `--generated N` it records the first N generated programs of the `default` profile,
derandomized (`strategies.sample_programs`: the same programs on every run and machine),
each run as the generated-program suite runs one (cpu, float32, on past a failing
statement), under the id `generated/<k>::cpu-float32`: so `diff` also compares what an
engine, or a refactor of the harness, does on generated programs.

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

A file whose name ends in `.gz` is gzip-compressed.
"""

from __future__ import annotations

import dataclasses
import datetime
import gzip
import json
import math
import platform
import sys
import time
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from conformance.case import paths as case_paths
from conformance.case.diagnostics import CaseError
from conformance.case.loader import Case, load_case, read_case_text
from conformance.case.paths import revision_of
from conformance.run.engine import TORCH, Engine, load_engine
from conformance.run.interpreter import run_program
from conformance.run.limits import RunLimit
from conformance.run.runner import Item, items_of, statement_text, torch_engine
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

FORMAT = "autograd-conformance-recording"
SCHEMA_VERSION = 2  # 2: every snapshot field stored (1 dropped `engine_made`)
RAN = "ran"
LOAD_ERROR = "load_error"  # the case file could not be loaded
CRASHED = "error"  # the harness itself raised while running the item


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


# ---- recordings ---------------------------------------------------------------------------
def header(engine: str, sources: list[dict[str, Any]]) -> dict[str, Any]:
    """What a recording was made with; `sources`: paths.case_sources of the cases recorded
    (their git revision is the recording's)."""
    import torch

    return {
        "torch_version": torch.__version__,
        "engine": engine,
        "python_version": platform.python_version(),
        "numpy_version": np.__version__,
        "cuda_available": bool(torch.cuda.is_available()),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_revision": revision_of(sources),
        "case_sources": sources,
    }


def case_files(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        path = Path(p)
        files += sorted(path.rglob("*.yaml")) if path.is_dir() else [path]
    return files


def item_record(item: Item, engine: Engine, *, continue_on_error: bool = False
                ) -> dict[str, Any]:
    """One item run on `engine`: its metadata and its trace."""
    case = item.case
    record: dict[str, Any] = {
        "file": case.path, "device": item.device, "dtype": item.dtype,
        "features": list(case.features), "line_offset": case.line_offset,
    }
    try:
        trace = run_program(engine, case.program, seed=case.seed, dtype=item.dtype,
                            device=item.device, continue_on_error=continue_on_error)
    except Exception as e:  # a harness or engine crash outside any statement
        return {**record, "status": CRASHED, "reason": f"{type(e).__name__}: {e}"}
    except RunLimit as e:  # statements or trace memory (conformance.run.limits)
        line = "?" if e.line is None else e.line + case.line_offset
        return {**record, "status": CRASHED, "reason": f"stopped at {case.path}:{line}: {e}"}
    return {**record, "status": RAN, "trace": trace_to_json(trace, case)}


GENERATED = "generated"  # the key prefix of generated programs


def generated_items(count: int) -> list[Item]:
    """The first `count` generated programs of the `default` profile, derandomized, as
    items (cpu, float32) of cases named `generated/<k>`: each program printed and parsed
    back, so that its statements carry the lines of its source."""
    from conformance.case.language import parse, to_source
    from conformance.gen.check import features_of
    from conformance.gen.strategies import sample_programs

    items = []
    for k, program in enumerate(sample_programs(count)):
        source = to_source(program)
        case = Case(path=f"{GENERATED}/{k}", description=f"generated program {k}",
                    features=tuple(sorted(features_of(program))), program=parse(source),
                    source_text=source, devices=("cpu",), dtypes=("float32",), seed=0,
                    source=None, line_offset=0)
        items.append(Item(case, "cpu", "float32"))
    return items


def record(paths: Iterable[str | Path], engine_name: str = TORCH, *,
           progress: Callable[[int, int, float], None] | None = None,
           every: int = 25, errors: TextIO | None = None,
           generated: int = 0) -> dict[str, Any]:
    """The recording of every case item under `paths` on the engine `engine_name`:
    cpu items, and cuda items where torch has cuda; each case's dtypes. Items are keyed by
    their ids (conformance/case/paths.py), the same in a clone and from any other directory.
    `generated`: also the first that many generated programs (generated_items), run as the
    generated-program suite runs them."""
    engine = torch_engine() if engine_name == TORCH else load_engine(engine_name)
    torch = torch_engine()
    items: dict[str, dict[str, Any]] = {}
    todo: list[Item] = generated_items(generated) if generated else []
    drawn = {item.id for item in todo}
    paths = list(paths)
    ids = case_paths.CaseIds(paths, Path.cwd())
    for f in case_files(paths):
        case_id = ids.of(f)
        try:
            case = load_case(case_id, read_case_text(f, case_id))
        except CaseError as e:
            if errors is not None:
                print(e, file=errors)
            items[case_id] = {"file": case_id, "status": LOAD_ERROR, "reason": str(e)}
            continue
        todo += [i for i in items_of(case) if torch.device_available(i.device)]
    started = time.monotonic()
    for n, item in enumerate(todo, 1):
        # a generated program runs on past a failing statement, as the suite runs it
        items[item.id] = item_record(item, engine, continue_on_error=item.id in drawn)
        if progress is not None and (n % every == 0 or n == len(todo)):
            progress(n, len(todo), time.monotonic() - started)
    devices = sorted({i.device for i in todo})
    return {"format": FORMAT, "schema_version": SCHEMA_VERSION,
            "header": {**header(engine_name, case_paths.case_sources(paths, Path.cwd())),
                       "devices": devices,
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
                             f"version reads schema {SCHEMA_VERSION}; record it again with "
                             "`autograd-conformance record`")
    return data


def print_progress(n: int, total: int, seconds: float) -> None:
    print(f"record: {n}/{total} items ({seconds:.1f} s)", file=sys.stderr, flush=True)
