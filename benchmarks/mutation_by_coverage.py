"""A mutation campaign that runs, for each mutant, only the test items that execute its lines.

benchmarks/mutation_campaign.py runs the whole test command for every mutant; a surviving
mutant then costs the case library, the engine's unit tests and the OpInfo float64 items
(15 to 35 min each on this machine's 2 shared cores), so a session fits about 16 mutants.
This script does what mutmut does: it records once, under coverage with one context per
test item (benchmarks/mutation_items.py; the map: mutation_coverage_map.py), which items
execute each line of reference_engine/, and runs a mutant against those items alone. An
item that never executes the mutated lines runs the same code as on the unmutated tree, so
it cannot kill the mutant: the outcome is the one the whole command would give. Two
exceptions, where the whole command runs:

- a mutated line that executes at import (module-level code: registry rows, constants,
  default arguments, decorators, class bodies): its effect is read by code on other lines;
- a mutated line no item executes (none can kill it, and the whole command shows that).

A kill is checked by `verify`: the killing items, run together on the unmutated tree, must
pass (else the failure came from running a subset, not from the mutant). A run past the
timeout is a "timeout", neither killed nor survived.

The sample is drawn as mutation_campaign.py draws it (annotations left out; stratified by
file, or a plain `random.Random(SEED)` sample when SAMPLE is below the number of files).

    python benchmarks/mutation_by_coverage.py map --rev REV --workdir W
    python benchmarks/mutation_by_coverage.py draw --sample N --seed S --workdir W
    python benchmarks/mutation_by_coverage.py exec --part I --parts N [--timeout 1800] --workdir W
    python benchmarks/mutation_by_coverage.py verify --workdir W
    python benchmarks/mutation_by_coverage.py summarize --workdir W [--save]

`map` exports REV into W/tree and runs the test command's three parts (cases, the engine's
unit tests, the OpInfo float64 items) under coverage in parallel; they must pass. `draw`
makes cosmic-ray's mutants of that tree and draws the sample; `exec` runs part I of N of it
(every Nth mutant) in W/treeI, appending each result to W/results.jsonl; `summarize` gives the
figures (with --save: benchmarks/results/mutation_campaign_seedSEED.json).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import platform
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutation_coverage_map import (
    covering,
    env,
    map_offset,
    record,
    same_engine_lines,
    selection,
)
from mutation_sample import (
    CONFIG,
    REPO,
    RESULTS,
    TEST_COMMAND,
    export_tree,
    in_annotation,
    mutants,
    stratified,
    tested,
)

PYTEST = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]


def command(items: list[str] | None, listing: Path, item_timeout: float = 0) -> list[str]:
    """The test command, or its `items` alone; `item_timeout` (if not 0) raises the case
    items' own time limit (60 s), which a loaded machine can exceed on the unmutated tree."""
    limit = ["--item-timeout", f"{item_timeout:g}"] if item_timeout else []
    if items is None:
        return [*PYTEST, *limit, "--opinfo", "-k", "not opinfo or float64", "cases",
                "tests/reference_engine"]
    listing.write_text("\n".join(items) + "\n")
    paths = sorted({"conformance/opinfo/ids.py" if i.startswith("opinfo/") else i.split("::")[0]
                    for i in items})
    opinfo = ["--opinfo"] if any(i.startswith("opinfo/") for i in items) else []
    return [*PYTEST, *limit, "-p", "mutation_items", f"--only-items={listing}", *opinfo,
            *paths]


def draw(args: argparse.Namespace) -> dict:
    work = Path(args.workdir)
    fresh = not (work / "map.json").exists()  # `map --sampled` makes the map after the draw
    if not args.carry_map and not fresh:
        same_engine_lines(work, args.rev)
    tree, db, config = work / "sample-tree", work / "session.sqlite", work / "cosmic-ray.toml"
    export_tree(args.rev, tree)
    config.write_text(CONFIG.format(timeout=args.timeout, command=TEST_COMMAND))
    db.unlink(missing_ok=True)
    subprocess.run(["cosmic-ray", "init", str(config), str(db)], cwd=tree, check=True)
    cache: dict[str, list] = {}
    annotated, by_file, specs = 0, defaultdict(list), {}
    for spec, job in mutants(db):
        module = str(spec.module_path)
        if in_annotation(tree, module, tuple(spec.start_pos), tuple(spec.end_pos), cache):
            annotated += 1
            continue
        by_file[module].append(job)
        specs[job] = {"job": job, "file": module, "start": list(spec.start_pos),
                      "end": list(spec.end_pos), "operator": spec.operator_name,
                      "occurrence": spec.occurrence}
    sample = [specs[j] for j in stratified(by_file, args.sample, args.seed)]
    if args.carry_map:
        for m in sample:
            m["map_offset"] = map_offset(work / "tree", tree, m)
    revision = subprocess.run(["git", "-C", str(REPO), "rev-parse", args.rev], check=True,
                              capture_output=True, text=True).stdout.strip()
    meta = {"revision": revision, "map_revision": None if fresh else json.loads(
                (work / "map.json").read_text())["revision"],
            "seed": args.seed, "sample": args.sample, "generated": annotated + len(specs),
            "in_annotations": annotated, "eligible": len(specs), "files": len(by_file),
            "mutants": sample}
    (work / "sample.json").write_text(json.dumps(meta, indent=1))
    return {k: v for k, v in meta.items() if k != "mutants"}


def execute(args: argparse.Namespace) -> dict:
    work = Path(args.workdir)
    meta = json.loads((work / "sample.json").read_text())
    mapped = json.loads((work / "map.json").read_text())
    lines, whole = mapped["lines"], mapped.get("whole_command", False)
    name = f"{args.part}{'r' if args.reverse else ''}"
    tree = work / f"tree{name}"
    export_tree(meta["revision"], tree)
    os.environ.update(env(tree))  # `tested` runs its command with os.environ
    done = {json.loads(ln)["job"] for ln in (work / "results.jsonl").read_text().splitlines()} \
        if (work / "results.jsonl").exists() else set()
    ran: list[dict] = []
    mine = meta["mutants"][args.part::args.parts]
    # the fewest items first, the whole command last: a run stopped early has run the most
    sizes = {m["job"]: selection(lines, m, tree) for m in mine}
    mine.sort(key=lambda m: (sizes[m["job"]] is None, len(sizes[m["job"]] or ())))
    if args.reverse or args.reached_only:  # the mutants that run the whole command stay last
        mine = [m for m in mine if sizes[m["job"]] is not None]
    for m in reversed(mine) if args.reverse else mine:
        if m["job"] in done or m["job"] in finished(work):  # another process may have run it
            continue
        if "map_offset" in m and (m["map_offset"] is None or selection(lines, m, tree) is None):
            # its code changed since the map, or it would run the whole command: not run
            result = {**m, "line": m["start"][0], "outcome": "not run", "by": "stale map"
                      if m["map_offset"] is None else "whole command", "seconds": 0}
            with (work / "results.jsonl").open("a") as f:
                f.write(json.dumps(result) + "\n")
            continue
        start = time.perf_counter()
        path = tree / m["file"]
        source = path.read_text()
        mutated = mutate_code(source, get_operator(m["operator"])(), m["occurrence"])
        diff = "".join(difflib.unified_diff(source.splitlines(True), mutated.splitlines(True),
                                            f"a/{m['file']}", f"b/{m['file']}"))
        items = selection(lines, m, tree)
        if items is None and whole and covering(lines, m, tree) == set():
            # a function's lines that no item of the whole command executes: none can kill
            result = {**m, "line": m["start"][0], "outcome": "survived",
                      "by": "no item executes its lines", "items": 0, "seconds": 0,
                      "diff": diff}
            with (work / "results.jsonl").open("a") as f:
                f.write(json.dumps(result) + "\n")
            print(f"{m['job'][:8]} {m['file']}:{m['start'][0]} survived: no item executes "
                  "its lines", flush=True)
            continue
        run = command(items, work / f"items{name}.txt", args.item_timeout)
        path.write_text(mutated)
        reasons: list[str] = []
        try:
            outcome, by = tested(run, tree, args.timeout, args.nice, reasons)
        finally:
            path.write_text(source)
        outcome = {"passed": "survived", "failed": "killed"}.get(outcome, outcome)
        result = {**m, "line": m["start"][0], "outcome": outcome, "by": by,
                  "failures": reasons[:3],
                  "items": "all" if items is None else len(items),
                  "seconds": round(time.perf_counter() - start), "diff": diff}
        with (work / "results.jsonl").open("a") as f:
            f.write(json.dumps(result) + "\n")
        print(f"{m['job'][:8]} {m['file']}:{m['start'][0]} {m['operator']} {outcome} {by} "
              f"({result['items']} items, {result['seconds']} s)", flush=True)
        ran.append(result)
    return {"part": args.part, "ran": len(ran)}


def finished(work: Path) -> set[str]:
    path = work / "results.jsonl"
    return {json.loads(ln)["job"] for ln in path.read_text().splitlines()} if path.exists() \
        else set()


def verify(args: argparse.Namespace) -> dict:
    """The items that killed a mutant, run on the unmutated tree: each must pass."""
    work = Path(args.workdir)
    results = [json.loads(ln) for ln in (work / "results.jsonl").read_text().splitlines()]
    killers = sorted({r["by"] for r in results if r["outcome"] == "killed" and "::" in r["by"]})
    tree = work / "verify"
    export_tree(json.loads((work / "sample.json").read_text())["revision"], tree)
    os.environ.update(env(tree))
    reasons: list[str] = []
    outcome, by = tested(command(killers, work / "killers.txt", args.item_timeout), tree,
                         args.timeout, args.nice, reasons)
    return {"killing_items": killers, "unmutated": outcome, "first_failure": by,
            "failures": reasons}


def summarize(args: argparse.Namespace) -> dict:
    work = Path(args.workdir)
    meta = json.loads((work / "sample.json").read_text())
    path = work / "results.jsonl"
    results = {r["job"]: r for r in map(json.loads, path.read_text().splitlines())} \
        if path.exists() else {}
    counts: dict[str, int] = defaultdict(int)
    for m in meta["mutants"]:
        counts[results[m["job"]]["outcome"] if m["job"] in results else "pending"] += 1
    return {"what": "cosmic-ray mutants of reference_engine/, a seeded sample, each run "
                    "against the test items that execute its lines (benchmarks/"
                    "mutation_by_coverage.py)",
            **{k: v for k, v in meta.items() if k != "mutants"}, "test_command": TEST_COMMAND,
            "timeout": args.timeout, "outcomes": dict(counts),
            "mutants": [results.get(m["job"], {**m, "outcome": "pending"})
                        for m in meta["mutants"]],
            "python": platform.python_version()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["map", "draw", "exec", "verify", "summarize"])
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--workdir", default="/tmp/autograd-mutation-cov")
    parser.add_argument("--part", type=int, default=0)
    parser.add_argument("--parts", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--shards", type=int, default=2, help="map: processes per part")
    parser.add_argument("--paths", default="", help="map: only these files (a,b), added")
    parser.add_argument("--sampled", action="store_true",
                        help="map: after `draw`, at its revision, the whole command in "
                             "--shards processes, measuring the sample's files alone")
    parser.add_argument("--carry-map", action="store_true",
                        help="draw: at a revision other than the map's (see map_offset)")
    parser.add_argument("--reverse", action="store_true",
                        help="exec: the part's mutants from its last (a second process on it)")
    parser.add_argument("--reached-only", action="store_true",
                        help="exec: only the mutants some item of the map reached (a map of "
                             "a subset: the others stay pending, for mutation_by_hand.py)")
    parser.add_argument("--nice", type=int, default=10, help="exec, verify: niceness")
    parser.add_argument("--item-timeout", type=float, default=0,
                        help="exec, verify: the case items' time limit (0: theirs, 60 s)")
    parser.add_argument("--save", action="store_true")
    args = parser.parse_args()
    modes = {"map": record, "draw": draw, "exec": execute, "verify": verify,
             "summarize": summarize}
    result = modes[args.mode](args)
    text = json.dumps(result, indent=1)
    if args.save and args.mode == "summarize":
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / f"mutation_campaign_seed{result['seed']}.json").write_text(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
