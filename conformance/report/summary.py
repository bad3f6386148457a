"""`summary.md`, the run report for CI pages: the status line, the feature x device x dtype
matrix, the APIs the engine lacks, and each failure once."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from conformance.report import status_line
from conformance.report.hit_rates import HitRates
from conformance.run.verdicts import KNOWN, MASKED, PASS, SKIPPED, UNSUPPORTED, Verdict

# summary.md is meant for a CI step summary, which caps its size.
MAX_SUMMARY_BYTES = 1 << 20
MAX_LISTED_FAILURES = 200
# The matrix's last row: every item once per column.
TOTAL = "total"
# What is listed under Failures: any verdict but these (an unknown one too: never hidden).
_NOT_FAILING = tuple(v.value for v in Verdict if not v.failing)


def missing_api(records: list[dict[str, Any]]) -> dict[str, int]:
    """API paths the engine lacks, each with the number of items it made unsupported, most
    first: what an engine author adds next."""
    counts = Counter(p for r in records for p in r.get("missing_api") or ())
    return dict(sorted(counts.items(), key=lambda i: (-i[1], i[0])))


def _matrix(records: list[dict[str, Any]]) -> list[str]:
    """The feature x device x dtype table of passed/ran, with a totals row (each item once)
    and, in a run that has any, a column of unsupported items; devices where nothing ran are
    left out, with a note saying why."""
    items = [r for r in records if not status_line.is_load_error(r)]
    hidden = status_line.hidden_devices(items)
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
    one entry naming them (status_line.failure_group), with the report of the first."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in items:
        if r["verdict"] not in _NOT_FAILING:
            groups.setdefault(status_line.failure_group(r), []).append(r)
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


def render(info: dict[str, Any], status: dict[str, str], records: list[dict[str, Any]],
             generated: HitRates | None = None) -> str:
    loads = [r for r in records if status_line.is_load_error(r)]
    items = [r for r in records if not status_line.is_load_error(r)]
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
