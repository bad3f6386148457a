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

The traces' stored form is report/trace_codec.py's.

A file whose name ends in `.gz` is gzip-compressed.
"""

from __future__ import annotations

import datetime
import gzip
import json
import platform
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from conformance.case import paths as case_paths
from conformance.case.diagnostics import CaseError
from conformance.case.loader import Case, load_case, read_case_text
from conformance.case.paths import revision_of

# a recording that breaks its form (trace_codec raises it for a stored trace)
from conformance.report.trace_codec import RecordingError as RecordingError
from conformance.report.trace_codec import trace_to_json
from conformance.run.engine import TORCH, Engine, load_engine
from conformance.run.interpreter import run_program
from conformance.run.limits import RunLimit
from conformance.run.runner import Item, items_of, torch_engine

FORMAT = "autograd-conformance-recording"
SCHEMA_VERSION = 2  # 2: every snapshot field stored (1 dropped `engine_made`)
RAN = "ran"
LOAD_ERROR = "load_error"  # the case file could not be loaded
CRASHED = "error"  # the harness itself raised while running the item


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
    from conformance.gen.reading import features_of
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
