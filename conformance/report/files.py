"""The run report: `conformance.json` (machine-readable), `summary.md` (for CI pages) and
`index.html`, each replaced atomically.

Records are plain JSON-able dicts built on whichever process ran the item (an xdist worker
or the controller) and merged in the controller. A record with verdict `error` and no
device stands for a file that failed to load (run_status.is_load_error): it has no cell in
the matrix, and counts in the status line and the lists of failures.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import platform
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from conformance.case import paths
from conformance.report import html as html_report
from conformance.report import status as run_status
from conformance.report.directory import ReportOutcome, write_set
from conformance.report.hit_rates import HitRates
from conformance.run.compare import Divergence
from conformance.run.expectations import NONE as NO_EXPECTATIONS
from conformance.run.expectations import Expectations, Known
from conformance.run.runner import (
    ERROR,
    KNOWN,
    MASKED,
    PASS,
    SKIPPED,
    UNSUPPORTED,
    Item,
    ItemResult,
    describe_failure,
    statement_text,
)
from conformance.run.trace import TensorSnapshot, Trace

# 2: run_info counts the run (collected, executed, interrupted, exit status, options), a
# top-level `status`, records of files that failed to load (device and dtype null), case
# description and source on item records.
# 3: run_info names the campaign (hypothesis_database, shard, shard_seed); a merged report
# (conformance.report.merge) has run_info.merged and records' `conflict`.
# 4: a generated program's failure record has a case item's failure fields (program,
# divergence, repro) and its YAML case (case_yaml, saved_case).
SCHEMA_VERSION = 4
# summary.md is meant for a CI step summary, which caps its size.
MAX_SUMMARY_BYTES = 1 << 20
MAX_LISTED_FAILURES = 200
# The matrix's last row: every item once per column.
TOTAL = "total"


def now() -> float:
    return time.time()


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
    """The graph signatures (observe.graph_signature) of the tensor the divergent field
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


def git_revision() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5, check=False)
    except OSError:
        return None
    return out.stdout.strip() or None


def _engine_version(engine: str) -> str | None:
    """The engine module's __version__, else the version of the distribution shipping it."""
    module = importlib.import_module(engine)
    version = getattr(module, "__version__", None)
    if version is not None:
        return str(version)
    top = engine.split(".")[0]
    for dist in importlib.metadata.packages_distributions().get(top, []):
        return importlib.metadata.version(dist)
    return None


def run_info(engine: str, started: float, profile: str, seed: object = None,
             run: run_status.RunFacts | None = None,
             campaign: dict[str, Any] | None = None,
             case_sources: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """`case_sources`: paths.case_sources of the run's case roots; git_revision is theirs
    (without them, the working directory's)."""
    import torch

    from conformance.gen.campaign import describe

    run = run or run_status.RunFacts()
    cuda = bool(torch.cuda.is_available())
    return {
        "torch_version": torch.__version__,
        "cuda_available": cuda,
        "cuda_device": torch.cuda.get_device_name() if cuda else None,
        "python_version": platform.python_version(),
        "platform": sys.platform,  # what expectations entries' `platform` is checked against
        "numpy_version": np.__version__,
        "engine": engine,
        "engine_version": _engine_version(engine),
        "git_revision": git_revision() if case_sources is None else
        paths.revision_of(case_sources),
        "case_sources": case_sources,
        "hypothesis_profile": profile,
        "hypothesis_seed": None if seed is None else str(seed),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "wall_time_s": round(now() - started, 3),
        "collected": run.collected,
        "executed": run.executed,
        "interrupted": run.interrupted,
        "interruption": run.interruption,
        "exit_status": run.exit_status,
        "options": run.options,
        **(campaign or describe(None, None, None)),
    }


def _normalized(record: dict[str, Any]) -> dict[str, Any]:
    """A record as the schema has it, whoever made it: a file that failed to load has null
    device and dtype (never "" or absent) and at least one feature."""
    record = dict(record)
    for key in ("device", "dtype"):
        record[key] = record.get(key) or None
    record["features"] = list(record.get("features") or ["unknown"])
    record.setdefault("engine", None)
    record.setdefault("reason", "")
    record.setdefault("pytest_outcome", "failed" if record.get("verdict") == ERROR
                      else "passed")
    if run_status.is_load_error(record):
        record.setdefault("line", None)
        record.setdefault("message", record["reason"] or "failed to load")
    return record


def missing_api(records: list[dict[str, Any]]) -> dict[str, int]:
    """API paths the engine lacks, each with the number of items it made unsupported, most
    first: what an engine author adds next."""
    counts = Counter(p for r in records for p in r.get("missing_api") or ())
    return dict(sorted(counts.items(), key=lambda i: (-i[1], i[0])))


def _matrix(records: list[dict[str, Any]]) -> list[str]:
    """The feature x device x dtype table of passed/ran, with a totals row (each item once)
    and, in a run that has any, a column of unsupported items; devices where nothing ran are
    left out, with a note saying why."""
    items = [r for r in records if not run_status.is_load_error(r)]
    hidden = run_status.hidden_devices(items)
    columns = sorted({(r["device"], r["dtype"]) for r in items if r["device"] not in hidden})
    # unsupported items of a feature, on any device and dtype: their own column (in a run
    # that has any), so that an API the engine lacks never reads as a divergence
    unsupported = Counter(f for r in items if r["verdict"] == UNSUPPORTED for f in r["features"])
    # Per cell (feature, device, dtype), and per column for the totals: passed, ran, skipped.
    cells: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in items:
        for feature in [*r["features"], TOTAL]:
            cell = cells[(feature, r["device"], r["dtype"])]
            skipped = r["verdict"] == SKIPPED
            cell[2] += skipped
            cell[1] += not skipped
            cell[0] += r["verdict"] == PASS
    unsupported[TOTAL] = sum(r["verdict"] == UNSUPPORTED for r in items)
    lines = [
        "Cells: passed/ran per feature, device and dtype; `skipped` where no item could run "
        "(see conformance.json for the reasons)"
        + ("; `unsupported`: items whose API the engine lacks." if unsupported[TOTAL] else "."),
        "",
    ]
    features = sorted({f for f, d, _ in cells if f != TOTAL and d not in hidden})
    gone = sorted({f for f, _, _ in cells if f != TOTAL} - set(features))
    if hidden:
        lines += ["Columns not shown: " + "; ".join(hidden.values()) + "."
                  + (f" Features only they have: {', '.join(gone)}." if gone else ""), ""]
    if not columns:
        return lines
    lines += ["| feature | " + " | ".join(f"{d} {t}" for d, t in columns)
              + (" | unsupported |" if unsupported[TOTAL] else " |"),
              "|---|" + "---|" * (len(columns) + bool(unsupported[TOTAL]))]
    for feature in [*features, TOTAL]:
        row = []
        for d, t in columns:
            passed, ran, skipped = cells.get((feature, d, t), (0, 0, 0))
            row.append(f"{passed}/{ran}" if ran else ("skipped" if skipped else ""))
        if unsupported[TOTAL]:
            row.append(str(unsupported[feature] or ""))
        name = f"**{feature}**" if feature == TOTAL else feature
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return lines


def _failures(items: list[dict[str, Any]]) -> list[str]:
    """Each failure once: the same failure of one case on one device in several dtypes is
    one entry naming them (run_status.failure_group), with the report of the first."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in items:
        if r["verdict"] not in (PASS, SKIPPED, KNOWN, MASKED):
            groups.setdefault(run_status.failure_group(r), []).append(r)
    if not groups:
        return []
    count = sum(len(g) for g in groups.values())
    lines = ["", f"## Failures ({count}" + (f", {len(groups)} distinct)" if len(groups) < count
                                           else ")"), ""]
    for group in list(groups.values())[:MAX_LISTED_FAILURES]:
        r = group[0]
        if len(group) > 1:
            dtypes = ", ".join(str(x["dtype"]) for x in group)
            lines += [f"`{r['file']}` on {r['device']}, dtypes {dtypes}: the same failure in "
                      f"{len(group)} items; shown: `{r['id']}`", ""]
        lines += ["```", r.get("report") or f"{r['id']}: {r['verdict']}: {r['reason']}",
                  "```", ""]
    if len(groups) > MAX_LISTED_FAILURES:
        lines.append(f"... and {len(groups) - MAX_LISTED_FAILURES} more (see conformance.json)")
    return lines


def _summary(info: dict[str, Any], status: dict[str, str], records: list[dict[str, Any]],
             generated: HitRates | None = None) -> str:
    loads = [r for r in records if run_status.is_load_error(r)]
    items = [r for r in records if not run_status.is_load_error(r)]
    word, _, rest = status["line"].partition(": ")
    lines = [
        f"**{word}**: {rest}",
        "",
        f"# Autograd conformance: {info['engine']} against torch {info['torch_version']}",
        "",
        *_matrix(records),
    ]
    missing = missing_api(records)
    if missing:
        lines += ["", "## APIs the engine lacks (items `unsupported`)", "",
                  "| API path | items |", "|---|---:|"]
        lines += [f"| `{path}` | {n} |" for path, n in missing.items()]
    if loads:
        lines += ["", "## Files that failed to load (no items ran from them)", ""]
        for r in loads[:MAX_LISTED_FAILURES]:
            where = r["file"] if r.get("line") is None else f"{r['file']}:{r['line']}"
            message = " ".join(str(r.get("message") or r.get("reason") or "").split())
            lines.append(f"- `{where}`: {message}")
    merged = info.get("merged")
    if merged:
        lines += ["", f"## Merged from {len(merged)} reports", "",
                  "| report | status | shard | profile | git revision |", "|---|---|---|---|---|"]
        lines += [f"| `{m['report']}` | {m['status']} | {m.get('shard') or ''} | "
                  f"{m.get('hypothesis_profile') or ''} | {m.get('git_revision') or ''} |"
                  for m in merged]
    conflicts = [r for r in records if r.get("conflict")]
    if conflicts:
        lines += ["", "## Conflicting verdicts (the same item, different verdicts in different "
                  "reports; the item keeps the one needing attention first)", ""]
        lines += ["- `" + r["id"] + "`: " + ", ".join(
            f"{c['verdict']} in `{c['report']}`" for c in r["conflict"]) for r in
            conflicts[:MAX_LISTED_FAILURES]]
    known = [r for r in records if r["verdict"] == KNOWN]
    if known:
        lines += ["", "## Known divergences (listed in the expectations file, or parts of "
                  "OpInfo items the op map leaves out)", ""]
        lines += [f"- `{r['id']}`: {r['reason']}" for r in known[:MAX_LISTED_FAILURES]]
    masked = [r for r in records if r["verdict"] == MASKED]
    if masked:
        lines += ["", "## Masked fields (the engine declares it does not match them)", ""]
        lines += [f"- `{r['id']}`: {r['reason']}" for r in masked[:MAX_LISTED_FAILURES]]
    lines += _failures(items)
    if generated is not None and generated.programs:
        # collapsed: a few hundred rows that matter when a floor is in question, not always
        lines += ["", "## Generated programs", "", "<details>",
                  f"<summary>{generated.one_line()}</summary>", "", "```", generated.table(),
                  "```", "", "</details>"]
    text = "\n".join(lines) + "\n"
    if len(text.encode()) > MAX_SUMMARY_BYTES:
        text = text.encode()[:MAX_SUMMARY_BYTES - 64].decode(errors="ignore")
        text += "\n\n(truncated; see conformance.json)\n"
    return text


def write(directory: Path, records: list[dict[str, Any]], *, engine: str, started: float,
          profile: str, generated: HitRates, known: Expectations = NO_EXPECTATIONS,
          unmatched: list[Known] | None = None, seed: object = None,
          run: run_status.RunFacts | None = None,
          campaign: dict[str, Any] | None = None,
          case_sources: list[dict[str, Any]] | None = None) -> list[Path]:
    """Write the three files of one run. Without `run` (a caller outside pytest), every
    record of an item counts as collected and executed."""
    records = sorted((_normalized(r) for r in records), key=lambda r: r["id"])
    if run is None:
        ran = sum(not run_status.is_load_error(r) for r in records)
        run = run_status.RunFacts(collected=ran, executed=ran)
    info = run_info(engine, started, profile, seed, run, campaign, case_sources)
    word, text = run_status.line(records, info)
    expected = {"file": known.path, "entries": len(known.known),
                "unmatched": [{"line": k.line, "reason": k.reason} for k in unmatched or []]}
    return write_data(directory, {"status": {"outcome": word, "line": text}, "run_info": info,
                                  "items": records, "expectations": expected}, generated)


class NotWritten(OSError):
    """The report could not be written (a full disk, a file size limit, a directory that
    refuses new files): nothing of it was, and the directory holds what it held before."""

    def __init__(self, directory: Path, error: OSError, info: dict[str, Any],
                 status: str) -> None:
        super().__init__(error.errno, error.strerror)
        self.status = status  # the status line the report would have opened with
        self.torch_version = str(info.get("torch_version"))
        reason = f"[Errno {error.errno}] {error.strerror}" if error.strerror else str(error)
        self.message = (f"the report could not be written to {directory}/ ({reason}); "
                        f"{directory}/ is left as it was")

    def __str__(self) -> str:
        return self.message


def write_data(directory: Path, data: dict[str, Any], generated: HitRates) -> list[Path]:
    """Write conformance.json, summary.md and index.html from a report's status, run_info,
    items and expectations (a run's, or several runs' merged), and its generated programs'
    hit counts: all three or none (report_dir.write_set; NotWritten when none)."""
    records, info, status = data["items"], data["run_info"], data["status"]
    data = {"schema_version": SCHEMA_VERSION, "status": status, "run_info": info,
            "items": records, "missing_api": missing_api(records),
            "expectations": data["expectations"],
            "generated": {**generated.as_dict(), "rates": {
                k: round(generated.rate(k), 4) for k in sorted(generated.counts)}}}
    text = json.dumps(data, indent=1) + "\n"
    files = {"conformance.json": text,
             "summary.md": _summary(info, status, records, generated),
             # from the JSON text, as a reader of conformance.json would see the data
             "index.html": html_report.render(json.loads(text))}
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return write_set(directory, files)
    except OSError as e:
        raise NotWritten(directory, e, info, status["line"]) from e


def status_of(json_path: Path) -> str:
    """The status line of a written conformance.json (what summary.md opens with)."""
    return str(json.loads(json_path.read_text(encoding="utf-8"))["status"]["line"])


def outcome_of(json_path: Path) -> ReportOutcome:
    """What `run`'s last line says of the report a run has just written: read back, so the
    terminal says what the report says."""
    data = json.loads(json_path.read_text(encoding="utf-8"))
    return ReportOutcome(written=True, status=str(data["status"]["line"]),
                         torch_version=str(data["run_info"]["torch_version"]))
