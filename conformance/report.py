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

from conformance import html_report, paths, run_status
from conformance.compare import Divergence
from conformance.expectations import NONE as NO_EXPECTATIONS
from conformance.expectations import Expectations, Known
from conformance.generated import HitRates
from conformance.report_dir import write_atomic
from conformance.runner import (
    DIVERGES,
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
from conformance.trace import TensorSnapshot

# 2: run_info counts the run (collected, executed, interrupted, exit status, options), a
# top-level `status`, records of files that failed to load (device and dtype null), case
# description and source on item records.
# 3: run_info names the campaign (hypothesis_database, shard, shard_seed); a merged report
# (conformance.merge) has run_info.merged and records' `conflict`.
SCHEMA_VERSION = 3
# summary.md is meant for a CI step summary, which caps its size.
MAX_SUMMARY_BYTES = 1 << 20
MAX_LISTED_FAILURES = 200


def now() -> float:
    return time.time()


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def _divergence(result: ItemResult, d: Divergence | None) -> dict[str, Any] | None:
    if d is None:
        return None
    case = result.item.case
    return {
        "line": d.line + case.line_offset, "statement": statement_text(case, d.line),
        "field": d.field, "torch": _jsonable(d.expected), "engine": _jsonable(d.actual),
        "strict": d.strict, "graphs": _graphs(result, d),
    }


def _graphs(result: ItemResult, d: Divergence) -> dict[str, str | None] | None:
    """The graph signatures (observe.graph_signature) of the tensor the divergent field
    belongs to, in both traces at the divergent step: what the HTML report draws."""
    traces = (result.torch_trace, result.engine_trace)
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


def generated_record(nodeid: str, engine: str, outcome: str, longrepr: str
                     ) -> dict[str, Any]:
    """The record of a generated-program item: one per run, over all its programs."""
    verdict = {"passed": PASS, "skipped": SKIPPED}.get(outcome, DIVERGES)
    if outcome == "failed" and "diverges from torch on a generated program" not in longrepr:
        verdict = ERROR
    record: dict[str, Any] = {
        "id": nodeid, "file": nodeid.split("::")[0], "features": ["generated"],
        "device": "cpu", "dtype": "float32", "engine": engine, "verdict": verdict,
        "pytest_outcome": outcome, "reason": "",
    }
    if outcome == "failed":
        record["report"] = longrepr[-20000:]
        record["repro"] = f"pytest '{nodeid}' --engine {engine}"
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

    from conformance.campaign import describe

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


def _summary(info: dict[str, Any], status: dict[str, str], records: list[dict[str, Any]]
             ) -> str:
    loads = [r for r in records if run_status.is_load_error(r)]
    items = [r for r in records if not run_status.is_load_error(r)]
    # Per cell: passed, ran (not skipped), skipped.
    cells: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in items:
        for feature in r["features"]:
            cell = cells[(feature, r["device"], r["dtype"])]
            skipped = r["verdict"] == SKIPPED
            cell[2] += skipped
            cell[1] += not skipped
            cell[0] += r["verdict"] == PASS
    columns = sorted({(r["device"], r["dtype"]) for r in items})
    # unsupported items of a feature, on any device and dtype: their own column (in a run
    # that has any), so that an API the engine lacks never reads as a divergence
    unsupported = Counter(f for r in items if r["verdict"] == UNSUPPORTED for f in r["features"])
    word, _, rest = status["line"].partition(": ")
    lines = [
        f"**{word}**: {rest}",
        "",
        f"# Autograd conformance: {info['engine']} against torch {info['torch_version']}",
        "",
        "Cells: passed/ran per feature, device and dtype; `skipped` where no item could run "
        "(see conformance.json for the reasons)"
        + ("; `unsupported`: items whose API the engine lacks." if unsupported else "."),
        "",
        "| feature | " + " | ".join(f"{d} {t}" for d, t in columns)
        + (" | unsupported |" if unsupported else " |"),
        "|---|" + "---|" * (len(columns) + bool(unsupported)),
    ]
    for feature in sorted({f for f, _, _ in cells}):
        row = []
        for d, t in columns:
            passed, ran, skipped = cells.get((feature, d, t), (0, 0, 0))
            row.append(f"{passed}/{ran}" if ran else ("skipped" if skipped else ""))
        if unsupported:
            row.append(str(unsupported[feature] or ""))
        lines.append(f"| {feature} | " + " | ".join(row) + " |")
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
        lines += ["", "## Known divergences (listed in the expectations file)", ""]
        lines += [f"- `{r['id']}`: {r['reason']}" for r in known[:MAX_LISTED_FAILURES]]
    masked = [r for r in records if r["verdict"] == MASKED]
    if masked:
        lines += ["", "## Masked fields (the engine declares it does not match them)", ""]
        lines += [f"- `{r['id']}`: {r['reason']}" for r in masked[:MAX_LISTED_FAILURES]]
    failures = [r for r in items if r["verdict"] not in (PASS, SKIPPED, KNOWN, MASKED)]
    if failures:
        lines += ["", "## Failures", ""]
        for r in failures[:MAX_LISTED_FAILURES]:
            lines += ["```", r.get("report") or f"{r['id']}: {r['verdict']}: {r['reason']}",
                      "```"]
        if len(failures) > MAX_LISTED_FAILURES:
            lines.append(f"... and {len(failures) - MAX_LISTED_FAILURES} more "
                         "(see conformance.json)")
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


def write_data(directory: Path, data: dict[str, Any], generated: HitRates) -> list[Path]:
    """Write conformance.json, summary.md and index.html from a report's status, run_info,
    items and expectations (a run's, or several runs' merged), and its generated programs'
    hit counts."""
    directory.mkdir(parents=True, exist_ok=True)
    records, info, status = data["items"], data["run_info"], data["status"]
    data = {"schema_version": SCHEMA_VERSION, "status": status, "run_info": info,
            "items": records, "missing_api": missing_api(records),
            "expectations": data["expectations"],
            "generated": {**generated.as_dict(), "rates": {
                k: round(generated.rate(k), 4) for k in sorted(generated.counts)}}}
    json_path = directory / "conformance.json"
    text = json.dumps(data, indent=1) + "\n"
    write_atomic(json_path, text)
    md_path = directory / "summary.md"
    summary = _summary(info, status, records)
    if generated.programs:
        summary += "\n## Generated programs\n\n```\n" + generated.table() + "\n```\n"
    write_atomic(md_path, summary)
    html_path = directory / "index.html"
    # from the JSON text, as a reader of conformance.json would see the data
    write_atomic(html_path, html_report.render(json.loads(text)))
    return [json_path, md_path, html_path]


def status_of(json_path: Path) -> str:
    """The status line of a written conformance.json (what summary.md opens with)."""
    return str(json.loads(json_path.read_text(encoding="utf-8"))["status"]["line"])
