"""By-hand steps of a mutation_by_coverage.py campaign whose map did not finish.

A map stopped early lacks the items it had not reached; `cover` runs those items alone under
coverage, at the map's revision, into W/map_extra.json (same format as the map's `lines`).
`items` lists, for one drawn mutant, the items that execute its lines in the map and the
extra map together (mutation_by_coverage.covering). `run` applies one drawn mutant to a
scratch copy of the drawn tree (W/tree-hand), runs the listed items with -x, reverts, and
appends the outcome to W/hand.jsonl. `record` writes those outcomes into the campaign's
results file, each marked `by_hand`.

    python benchmarks/mutation_by_hand.py cover --items FILE --workdir W
    python benchmarks/mutation_by_hand.py items --job PREFIX --workdir W > FILE
    python benchmarks/mutation_by_hand.py run --job PREFIX --items FILE [--label L] --workdir W
    python benchmarks/mutation_by_hand.py record --workdir W --equivalent FILE:LINE=WHY ...

A mutant is killed by the first item that fails with it (`verify` of mutation_by_coverage
checks those items on the unmutated tree); it survived when every item that executes its
lines passes. A `run` labelled `new-case` (items added since the draw, copied into
W/tree-hand) records what kills a survivor now; it does not change the outcome.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import coverage
from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutation_by_coverage import command
from mutation_coverage_map import covering, env
from mutation_sample import RESULTS


def drawn(work: Path, prefix: str) -> dict:
    meta = json.loads((work / "sample.json").read_text())
    return next(m for m in meta["mutants"] if m["job"].startswith(prefix))


def cover(args: argparse.Namespace) -> dict:
    """The listed items under coverage in W/tree (the map's revision), measuring the
    sample's files, their lines by item into W/map_extra.json."""
    work, tree = Path(args.workdir), Path(args.workdir) / "tree"
    files = sorted({m["file"] for m in json.loads((work / "sample.json").read_text())["mutants"]})
    items = [i for i in Path(args.items).read_text().splitlines() if i.strip()]
    data_file = work / "cov.extra"
    run = command(items, work / "items-extra.txt")
    # every item runs (no -x), as in the map
    run = [sys.executable, "-m", "coverage", "run", f"--data-file={data_file}",
           f"--include={','.join(files)}", *(a for a in run[1:] if a != "-x")]
    subprocess.run(run, cwd=tree, env=env(tree), check=False)
    data = coverage.CoverageData(str(data_file))
    data.read()
    lines: dict[str, dict[str, list[str]]] = {}
    for path in data.measured_files():
        rel = str(Path(path).relative_to(tree.resolve()))  # coverage records real paths
        lines[rel] = {str(n): sorted(c) for n, c in data.contexts_by_lineno(path).items()}
    (work / "map_extra.json").write_text(json.dumps(lines))
    return {"items": len(items), "files": len(lines)}


def items(args: argparse.Namespace) -> dict:
    work = Path(args.workdir)
    m = drawn(work, args.job)
    found: set[str] = set()
    for name in ("map.json", "map_extra.json"):
        if (work / name).exists():
            data = json.loads((work / name).read_text())
            found |= covering(data.get("lines", data), m, work / "sample-tree") or set()
    print("\n".join(sorted(found - {""})))
    return {"job": m["job"], "items": len(found - {""}), "at import": "" in found}


def run(args: argparse.Namespace) -> dict:
    work = Path(args.workdir)
    m, tree = drawn(work, args.job), work / "tree-hand"
    if not tree.exists():
        shutil.copytree(work / "sample-tree", tree)
    path = tree / m["file"]
    source = path.read_text()
    assert source == (work / "sample-tree" / m["file"]).read_text(), "a mutant is applied"
    listed = [i for i in Path(args.items).read_text().splitlines() if i.strip()]
    mutated = mutate_code(source, get_operator(m["operator"])(), m["occurrence"])
    start = time.perf_counter()
    path.write_text(mutated)
    try:
        proc = subprocess.run(command(listed, tree / "items-hand.txt", args.item_timeout),
                              cwd=tree, env=env(tree), capture_output=True, text=True)
    finally:
        path.write_text(source)
    out = proc.stdout.splitlines()
    result = {"job": m["job"], "file": m["file"], "line": m["start"][0], "label": args.label,
              "n_items": len(listed), "rc": proc.returncode,
              "failed": [ln[:400] for ln in out if ln.startswith(("FAILED", "ERROR"))],
              "tail": out[-1:], "seconds": round(time.perf_counter() - start),
              "diff": "".join(difflib.unified_diff(source.splitlines(True),
                                                   mutated.splitlines(True)))}
    with (work / "hand.jsonl").open("a") as f:
        f.write(json.dumps(result) + "\n")
    return {k: v for k, v in result.items() if k != "diff"}


def first_failure(run: dict) -> str:
    """The node id of a run's first FAILED or ERROR line."""
    found = re.match(r"(?:FAILED|ERROR) (\S+)", run["failed"][0])
    return found.group(1) if found else run["failed"][0]


def record(args: argparse.Namespace) -> dict:
    """Each pending mutant of the results file decided by W/hand.jsonl (or by --equivalent)."""
    work = Path(args.workdir)
    seed = json.loads((work / "sample.json").read_text())["seed"]
    path = RESULTS / f"mutation_campaign_seed{seed}.json"
    res = json.loads(path.read_text())
    runs = [json.loads(ln) for ln in (work / "hand.jsonl").read_text().splitlines()]
    equivalent = dict(e.split("=", 1) for e in args.equivalent)
    for m in res["mutants"]:
        if m["outcome"] != "pending":
            continue
        key, mine = f"{m['file']}:{m['start'][0]}", [r for r in runs if r["job"] == m["job"]]
        old = [r for r in mine if r["label"] != "new-case"]
        m.update(line=m["start"][0], by_hand=True, seconds=sum(r["seconds"] for r in old))
        if mine:
            m["diff"] = mine[0]["diff"]
        kill = next((r for r in old if r["failed"] or r["rc"] not in (0, 5)), None)
        if key in equivalent:
            res.setdefault("equivalent", {})[key] = equivalent[key]
            m.update(outcome="equivalent (by reading)", by=equivalent[key])
        elif kill:
            by = first_failure(kill) if kill["failed"] else f"rc {kill['rc']}"
            m.update(outcome="killed", by=by,
                     items=f"by hand: {kill['n_items']} ({kill['label']})",
                     failures=[f[:120] for f in kill["failed"][:3]])
        elif old:
            m.update(outcome="survived", items="by hand: " + "; ".join(
                f"{r['n_items']} ({r['label']}): {r['tail'][0] if r['tail'] else ''}"
                for r in old), by="every item that executes its lines passes")
            new = [r for r in mine if r["label"] == "new-case" and r["failed"]]
            if new:
                m["killed_now_by"] = first_failure(new[0])
    counts: dict[str, int] = {}
    for m in res["mutants"]:
        counts[m["outcome"]] = counts.get(m["outcome"], 0) + 1
    res["outcomes"] = counts
    path.write_text(json.dumps(res, indent=1) + "\n")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["cover", "items", "run", "record"])
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--job", default="")
    parser.add_argument("--items", default="")
    parser.add_argument("--label", default="map")
    parser.add_argument("--item-timeout", type=float, default=300)
    parser.add_argument("--equivalent", nargs="*", default=[], help="FILE:LINE=WHY")
    args = parser.parse_args()
    modes = {"cover": cover, "items": items, "run": run, "record": record}
    result = modes[args.mode](args)
    print(json.dumps(result, indent=1), file=sys.stderr if args.mode == "items" else sys.stdout)


if __name__ == "__main__":
    main()
