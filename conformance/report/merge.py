"""`autograd-conformance merge`: several runs' conformance.json (the machines of one
campaign) as one report, written as a run writes its own (conformance.json, summary.md,
index.html), never greener than its inputs.

- **Items**: a case item that several reports hold is one record. Where their verdicts
  differ (skipped ones aside: a machine without CUDA skips what another runs), the record
  keeps the verdict needing attention first (status_line.ORDER) and lists every report's in
  `conflict`; the status line counts them. The generated-program item is one record per shard
  (`...[shard 2/4]`: the shards ran different programs), or per report when the runs were
  not sharded; two reports of the same shard ran the same programs and are compared.
- **Counts**: collected and executed are the inputs' sums, less the records merged into one;
  the generated programs' hit counts add up (HitRates.merge).
- **Never greener**: a report that cannot be read stays as an `error` record naming it and
  makes the merge INCOMPLETE, as does an interrupted input or a missing shard (`--shard K/N`
  inputs that do not cover 1..N); a non-zero exit status of an input is the merge's.
- **Refused**: reports of different engines or torch versions are not one campaign's
  (torch is the oracle); merging them is an error naming each report's.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.gen.campaign import describe
from conformance.report import directory as report_dir
from conformance.report import files as report
from conformance.report import status_line
from conformance.report.hit_rates import HitRates
from conformance.run.runner import ERROR, SKIPPED

# Reports this version reads: 2 (before campaigns) and its own.
READS = (2, 3, report.SCHEMA_VERSION)


class MergeError(ValueError):
    """Reports that are not one campaign's, or none that could be read."""


@dataclass
class Input:
    path: str
    data: dict[str, Any] | None
    problem: str | None = None  # why it could not be read

    @property
    def info(self) -> dict[str, Any]:
        assert self.data is not None
        info: dict[str, Any] = self.data["run_info"]
        return info


def load(path: Path) -> Input:
    """A report: a conformance.json, or a report directory holding one."""
    if path.is_dir():
        path = path / "conformance.json"
    shown = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        return Input(shown, None, f"cannot read it ({e.strerror or e})")
    except ValueError as e:  # a report cut short (a run killed while writing elsewhere)
        return Input(shown, None, f"not JSON ({e})")
    if not isinstance(data, dict) or not isinstance(data.get("run_info"), dict) or \
            not isinstance(data.get("items"), list):
        return Input(shown, None, "not a conformance.json (no run_info or items)")
    if data.get("schema_version") not in READS:
        return Input(shown, None, f"schema_version {data.get('schema_version')!r}, this "
                                  f"version merges {', '.join(map(str, READS))}")
    return Input(shown, data)


def _unreadable(source: Input) -> dict[str, Any]:
    message = f"report not merged: {source.problem}"
    return {"id": source.path, "file": source.path, "line": None, "message": message,
            "features": ["unknown"], "device": None, "dtype": None, "engine": None,
            "verdict": ERROR, "pytest_outcome": "failed", "reason": message}


def _same(inputs: list[Input], key: str, what: str) -> None:
    values = {i.path: i.info.get(key) for i in inputs}
    if len(set(values.values())) > 1:
        raise MergeError(f"the reports are of different {what}s, so not of one campaign: "
                         + "; ".join(f"{p}: {v}" for p, v in values.items())
                         + f"; merge the reports of one {what} at a time")


def _rank(verdict: str) -> int:
    """Lower: needs attention first. A verdict this version does not know comes first."""
    return status_line.ORDER.index(verdict) if verdict in status_line.ORDER else -1


def _key(record: dict[str, Any], source: Input) -> str:
    if record.get("features") != ["generated"]:
        return str(record["id"])
    shard = source.info.get("shard")
    return f"{record['id']}[shard {shard}]" if shard else f"{record['id']}[{source.path}]"


def _merge_records(inputs: list[Input]) -> tuple[list[dict[str, Any]], int]:
    """The merged records, and how many item records were folded into another."""
    groups: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for source in inputs:
        assert source.data is not None
        for record in source.data["items"]:
            groups[_key(record, source)].append((source.path, record))
    merged, folded = [], 0
    for key, group in groups.items():
        chosen = dict(min(group, key=lambda g: _rank(str(g[1].get("verdict"))))[1])
        chosen["id"] = key
        ran = [(path, r) for path, r in group if r.get("verdict") != SKIPPED]
        if len({r.get("verdict") for _, r in ran}) > 1:
            chosen["conflict"] = [{"report": path, "verdict": r["verdict"]} for path, r in ran]
        if not status_line.is_load_error(chosen):
            folded += len(group) - 1
        merged.append(chosen)
    return merged, folded


def _case_sources(infos: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """Every input's case sources, each once (None: no input recorded them)."""
    if all(i.get("case_sources") is None for i in infos):
        return None
    given = [s for i in infos for s in i.get("case_sources") or []]
    return list({json.dumps(s, sort_keys=True): s for s in given}.values())


def _joined(values: list[Any]) -> str | None:
    distinct = sorted({str(v) for v in values if v is not None})
    return ", ".join(distinct) if distinct else None


def _shards(loaded: list[Input]) -> tuple[str | None, list[str]]:
    """The shards merged (comma-separated), and the shards of 1..N no input covers."""
    shards = [str(i.info["shard"]) for i in loaded if i.info.get("shard")]
    if not shards:
        return None, []
    count = max(int(s.split("/")[1]) for s in shards)
    present = {int(s.split("/")[0]) for s in shards}
    missing = [f"{k}/{count}" for k in range(1, count + 1) if k not in present]
    return ",".join(sorted(set(shards), key=lambda s: tuple(map(int, s.split("/"))))), missing


def merge(paths: list[Path]) -> tuple[dict[str, Any], HitRates]:
    """The merged report's status, run_info, items and expectations, and its hit counts."""
    inputs = [load(p) for p in paths]
    loaded = [i for i in inputs if i.data is not None]
    if not loaded:
        raise MergeError("no report could be read: " + "; ".join(
            f"{i.path}: {i.problem}" for i in inputs))
    _same(loaded, "engine", "engine")
    _same(loaded, "torch_version", "torch version")
    _same(loaded, "engine_backend", "engine backend")
    records, folded = _merge_records(loaded)
    records += [_unreadable(i) for i in inputs if i.data is None]
    records.sort(key=lambda r: str(r["id"]))
    hits = HitRates()
    for source in loaded:
        assert source.data is not None
        hits.merge(HitRates.from_dict(source.data.get("generated") or {}))
    infos = [i.info for i in loaded]
    shards, missing = _shards(loaded)
    interrupted = [i for i in loaded if i.info.get("interrupted")]
    info = {
        **infos[0],
        **describe(None, None, None),
        "hypothesis_database": next((i["hypothesis_database"] for i in infos
                                     if i.get("hypothesis_database")), None),
        "shard": shards,
        "engine_version": _joined([i.get("engine_version") for i in infos]),
        "git_revision": _joined([i.get("git_revision") for i in infos]),
        "case_sources": _case_sources(infos),
        "hypothesis_profile": _joined([i.get("hypothesis_profile") for i in infos]) or "",
        "hypothesis_seed": _joined([i.get("hypothesis_seed") for i in infos]),
        "started": min(str(i.get("started", "")) for i in infos),
        "wall_time_s": max(float(i.get("wall_time_s", 0)) for i in infos),
        "collected": sum(int(i.get("collected", 0)) for i in infos) - folded,
        "executed": sum(int(i.get("executed", 0)) for i in infos) - folded,
        "interrupted": bool(interrupted),
        "interruption": "; ".join(f"{i.path}: {i.info.get('interruption') or 'interrupted'}"
                                  for i in interrupted) or None,
        "exit_status": next((int(i["exit_status"]) for i in infos
                             if i.get("exit_status") not in (0, None)), 0),
        "merged": [_summary_of(i) for i in inputs],
    }
    word, text = status_line.line(records, info)
    notes = [f"merged from {len(inputs)} reports"]
    conflicts = sum(bool(r.get("conflict")) for r in records)
    if conflicts:
        notes.append(f"{conflicts} item{'s' if conflicts > 1 else ''} with conflicting "
                     "verdicts")
    unreadable = len(inputs) - len(loaded)
    if unreadable:
        notes.append(f"{unreadable} report{'s' if unreadable > 1 else ''} not read")
    if missing:
        notes.append(f"shards missing: {', '.join(missing)}")
    if unreadable or missing:  # results are missing: whatever the rest says
        text = status_line.INCOMPLETE + text[len(word):]
        word = status_line.INCOMPLETE
    status = {"outcome": word, "line": f"{text}; {'; '.join(notes)}"}
    return {"status": status, "run_info": info, "items": records,
            "expectations": _expectations(loaded)}, hits


def _summary_of(source: Input) -> dict[str, Any]:
    if source.data is None:
        return {"report": source.path, "status": f"not read: {source.problem}"}
    info = source.info
    return {"report": source.path,
            "status": str((source.data.get("status") or {}).get("line", "no status")),
            **{k: info.get(k) for k in ("shard", "hypothesis_profile", "hypothesis_seed",
                                        "git_revision", "engine_version", "started")}}


def _expectations(loaded: list[Input]) -> dict[str, Any]:
    """The first report's expectations file; an entry is unmatched if no report matched it."""
    first = (loaded[0].data or {}).get("expectations") or {"file": "", "entries": 0,
                                                           "unmatched": []}
    unmatched = list(first.get("unmatched", []))
    for source in loaded[1:]:
        theirs = ((source.data or {}).get("expectations") or {}).get("unmatched", [])
        unmatched = [u for u in unmatched if u in theirs]
    return {"file": first.get("file", ""), "entries": first.get("entries", 0),
            "unmatched": unmatched}


def write(paths: list[Path], directory: Path) -> tuple[list[Path], str]:
    """Merge `paths` into `directory`'s three files; (the files, the outcome)."""
    data, hits = merge(paths)
    lock = report_dir.ReportLock(directory)
    lock.acquire()
    wrote = False
    try:
        written = report.write_data(directory, data, hits)
        wrote = True
    finally:
        lock.release(wrote=wrote)
    return written, str(data["status"]["outcome"])
