"""The run report: `conformance.json` (machine-readable), `summary.md` (for CI pages:
report/summary.py) and `index.html` (report/html.py), each replaced atomically.

Records (report/records.py) are plain JSON-able dicts built on whichever process ran the
item (an xdist worker or the controller) and merged in the controller. A record with verdict
`error` and no device stands for a file that failed to load (status_line.is_load_error): it
has no cell in the matrix, and counts in the status line and the lists of failures.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from conformance.case import paths
from conformance.report import html as html_report
from conformance.report import status_line, summary
from conformance.report.directory import ReportOutcome, shown, write_set
from conformance.report.hit_rates import HitRates
from conformance.run.expectations import NONE as NO_EXPECTATIONS
from conformance.run.expectations import Expectations, Known, declared_backend
from conformance.run.verdicts import ERROR

# 2: run_info counts the run (collected, executed, interrupted, exit status, options), a
# top-level `status`, records of files that failed to load (device and dtype null), case
# description and source on item records.
# 3: run_info names the campaign (hypothesis_database, shard, shard_seed); a merged report
# (conformance.report.merge) has run_info.merged and records' `conflict`.
# 4: a generated program's failure record has a case item's failure fields (program,
# divergence, repro) and its YAML case (case_yaml, saved_case).
SCHEMA_VERSION = 4


def now() -> float:
    return time.time()


def git_revision() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5, check=False)
    except OSError:
        return None
    return out.stdout.strip() or None


def engine_version(engine: str) -> str | None:
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
             run: status_line.RunFacts | None = None,
             campaign: dict[str, Any] | None = None,
             case_sources: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """`case_sources`: paths.case_sources of the run's case roots; git_revision is theirs
    (without them, the working directory's)."""
    import torch

    from conformance.gen.campaign import describe

    run = run or status_line.RunFacts()
    cuda = bool(torch.cuda.is_available())
    return {
        "torch_version": torch.__version__,
        "cuda_available": cuda,
        "cuda_device": torch.cuda.get_device_name() if cuda else None,
        "python_version": platform.python_version(),
        "platform": sys.platform,  # what expectations entries' `platform` is checked against
        "numpy_version": np.__version__,
        "engine": engine,
        "engine_version": engine_version(engine),
        "engine_backend": declared_backend(engine),
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
    if status_line.is_load_error(record):
        record.setdefault("line", None)
        record.setdefault("message", record["reason"] or "failed to load")
    return record


def write(directory: Path, records: list[dict[str, Any]], *, engine: str, started: float,
          profile: str, generated: HitRates, known: Expectations = NO_EXPECTATIONS,
          unmatched: list[Known] | None = None, seed: object = None,
          run: status_line.RunFacts | None = None,
          campaign: dict[str, Any] | None = None,
          case_sources: list[dict[str, Any]] | None = None) -> list[Path]:
    """Write the three files of one run. Without `run` (a caller outside pytest), every
    record of an item counts as collected and executed."""
    records = sorted((_normalized(r) for r in records), key=lambda r: r["id"])
    if run is None:
        ran = sum(not status_line.is_load_error(r) for r in records)
        run = status_line.RunFacts(collected=ran, executed=ran)
    info = run_info(engine, started, profile, seed, run, campaign, case_sources)
    word, text = status_line.line(records, info)
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
        where = shown(f"{directory}/")
        self.message = (f"the report could not be written to {where} ({reason}); "
                        f"{where} is left as it was")

    def __str__(self) -> str:
        return self.message


def write_data(directory: Path, data: dict[str, Any], generated: HitRates) -> list[Path]:
    """Write conformance.json, summary.md and index.html from a report's status, run_info,
    items and expectations (a run's, or several runs' merged), and its generated programs'
    hit counts: all three or none (report_dir.write_set; NotWritten when none)."""
    records, info, status = data["items"], data["run_info"], data["status"]
    data = {"schema_version": SCHEMA_VERSION, "status": status, "run_info": info,
            "items": records, "missing_api": summary.missing_api(records),
            "expectations": data["expectations"],
            "generated": {**generated.as_dict(), "rates": {
                k: round(generated.rate(k), 4) for k in sorted(generated.counts)}}}
    text = json.dumps(data, indent=1) + "\n"
    files = {"conformance.json": text,
             "summary.md": summary.render(info, status, records, generated),
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
