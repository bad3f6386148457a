"""A mutation campaign that runs, for each mutant, only the test items that execute its lines.

benchmarks/mutation_campaign.py runs the whole test command for every mutant; a surviving
mutant then costs the case library, the engine's unit tests and the OpInfo float64 items
(15 to 35 min each on this machine's 2 shared cores), so a session fits about 16 mutants.
This script does what mutmut does: it records once, under coverage with one context per
test item (benchmarks/mutation_items.py), which items execute each line of reference_engine/,
and runs a mutant against those items alone. An item that never executes the mutated lines
runs the same code as on the unmutated tree, so it cannot kill the mutant: the outcome is
the one the whole command would give. Two exceptions, where the whole command runs:

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
import ast
import difflib
import json
import os
import platform
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import coverage
from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator

sys.path.insert(0, str(Path(__file__).resolve().parent))
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
# the test command's three parts (TEST_COMMAND runs them in this order in one process)
PARTS = {"cases": ["cases"], "unit": ["tests/reference_engine"],
         "opinfo": ["--opinfo", "-k", "opinfo and float64", "conformance/opinfo/ids.py"]}
IMPORT = ""  # the coverage context of what runs outside any item (collection, imports)


def env(tree: Path) -> dict[str, str]:
    """This script's folder on the path, for `-p mutation_items` (the tree's revision may
    predate the plugin)."""
    return {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent),
            "PYTHONDONTWRITEBYTECODE": "1"}


def record(args: argparse.Namespace) -> dict:
    """Coverage by item of the test command's parts at REV (each part in `--shards` processes
    under `nice`), or, with --paths, of those case or test files alone, added to the map
    already made (the files added since it: the engine must be the map's, see `draw`)."""
    work = Path(args.workdir)
    tree = work / ("tree" if not args.paths else "tree-added")
    measured = ["--source=reference_engine"]
    parts = {"added": args.paths.split(",")} if args.paths else PARTS
    if args.sampled:  # the whole command, measuring only the files the drawn sample is in
        args.rev = json.loads((work / "sample.json").read_text())["revision"]
        files = sorted({m["file"] for m in json.loads(
            (work / "sample.json").read_text())["mutants"]})
        measured = [f"--include={','.join(files)}"]
        parts = {"all": ["--opinfo", "-k", "not opinfo or float64", "cases",
                         "tests/reference_engine"]}
    export_tree(args.rev, tree)
    revision = subprocess.run(["git", "-C", str(REPO), "rev-parse", args.rev], check=True,
                              capture_output=True, text=True).stdout.strip()
    start = time.perf_counter()
    procs = {f"{name}.{i}": subprocess.Popen(
        ["nice", "-n", "10", sys.executable, "-m", "coverage", "run",
         f"--data-file={work / f'cov.{name}.{i}'}", *measured, "-m", "pytest",
         "-p", "mutation_items", f"--only-shard={i}/{args.shards}", "-q", "-p",
         "no:cacheprovider", *part],
        cwd=tree, env=env(tree), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for name, part in parts.items() for i in range(args.shards)}
    failed = []
    for name, proc in procs.items():
        out, _ = proc.communicate()
        (work / f"map.{name}.log").write_text(out)
        if proc.returncode:  # the map is kept; a kill by a failing item is then no kill
            failed.append(name)
            print(f"the {name} part fails on the unmutated tree:\n{out[-3000:]}")
    old = json.loads((work / "map.json").read_text()) if args.paths else {"lines": {}}
    lines: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for rel, by in old["lines"].items():
        for n, contexts in by.items():
            lines[rel][n] |= set(contexts)
    for name in procs:
        data = coverage.CoverageData(str(work / f"cov.{name}"))
        data.read()
        for path in data.measured_files():
            rel = str(Path(path).relative_to(tree))
            for line, contexts in data.contexts_by_lineno(path).items():
                lines[rel][str(line)] |= set(contexts)
    seconds = round(time.perf_counter() - start)
    result = {"revision": old.get("revision", revision), "seconds": old.get("seconds", seconds),
              "whole_command": bool(args.sampled), "failed_parts": failed,
              "added": [*old.get("added", []), *([{"revision": revision, "paths": args.paths,
                                                    "seconds": seconds}] if args.paths else [])],
              "lines": {f: {n: sorted(c) for n, c in sorted(by.items(), key=lambda x: int(x[0]))}
                        for f, by in sorted(lines.items())}}
    (work / "map.json").write_text(json.dumps(result))
    return {k: v for k, v in result.items() if k != "lines"}


def same_engine_lines(work: Path, rev: str) -> None:
    """The map's line numbers hold at `rev`: every engine file has the map revision's lines
    at the same places (a line may be edited in place, none added or removed)."""
    mapped = json.loads((work / "map.json").read_text())["revision"]
    for path in sorted((work / "tree" / "reference_engine").rglob("*.py")):
        rel = path.relative_to(work / "tree")
        now = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:{rel}"], check=True,
                             capture_output=True, text=True).stdout.splitlines()
        if len(now) != len(path.read_text().splitlines()):
            sys.exit(f"{rel} has other lines at {rev} than at {mapped}: map again")


def function_at(module: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The outermost function whose lines (decorators and signature too) hold `line`."""
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                min([node.lineno, *(d.lineno for d in node.decorator_list)]) <= line <= \
                (node.end_lineno or node.lineno):
            return node
    return None


def map_offset(old_tree: Path, tree: Path, m: dict) -> int | None:
    """For a map made at another revision (`draw --carry-map`): what to add to the
    mutant's line numbers to find them in the map, or None (stale: not run). 0 where the
    file is unchanged; where it changed, the shift of the function that holds the mutant
    if that function's text is unchanged and the mutant reads nothing outside it (its own
    lines, or a default argument's body: `readers`); else None."""
    old_path, new = old_tree / m["file"], (tree / m["file"]).read_text()
    if not old_path.exists():
        return None
    old = old_path.read_text()
    if old == new:
        return 0
    module = ast.parse(new)
    new_fn = function_at(module, m["start"][0])
    if new_fn is None or function_at(module, m["end"][0]) is not new_fn:
        return None
    text = ast.get_source_segment(new, new_fn)
    for node in ast.walk(ast.parse(old)):
        if isinstance(node, type(new_fn)) and node.name == new_fn.name and \
                ast.get_source_segment(old, node) == text:
            return node.lineno - new_fn.lineno
    return None


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


def readers(tree: Path, m: dict) -> list[tuple[int, int]] | None:
    """The line spans whose execution reads what the mutant changes: for a mutant inside a
    function's body, its own lines; in a function's signature (a default argument, read
    when it is called), that function's body; in a module-level assignment to one private
    name (`_A = (...)`, a table of coefficients), the lines of the module that load that
    name. None for anything else at module level (a registry row, a decorator, a public
    constant: its readers are not found from the source), where the whole command runs.
    Read from the source, not from coverage: a module imported lazily runs its module-level
    lines inside the first item that imports it."""
    module = ast.parse((tree / m["file"]).read_text())
    first, last = m["start"][0], m["end"][0]
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = [node.body] if isinstance(node, ast.Lambda) else node.body
            start, end = body[0].lineno, node.end_lineno or node.lineno
            if start <= first and last <= end:
                return [(first, last)]
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                not node.decorator_list and node.lineno <= first and last < node.body[0].lineno:
            return [(node.body[0].lineno, node.end_lineno or node.lineno)]
    for node in module.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and node.targets[0].id.startswith("_") \
                and node.lineno <= first and last <= (node.end_lineno or node.lineno):
            name = node.targets[0].id
            return [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(module)
                    if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return None


def selection(lines: dict[str, dict[str, list[str]]], m: dict, tree: Path) -> list[str] | None:
    """The items that execute the lines that read the mutant's change, or None (run
    everything): no such lines are found (see `readers`), or no item executes them."""
    found = covering(lines, m, tree)
    if not found or IMPORT in found:
        return None
    return sorted(found)


def covering(lines: dict[str, dict[str, list[str]]], m: dict, tree: Path) -> set[str] | None:
    """The contexts (items, or IMPORT) that execute the lines reading the mutant's change;
    None where those lines are not found from the source (see `readers`)."""
    spans = readers(tree, m)
    if not spans:
        return None
    shift = m.get("map_offset") or 0
    found: set[str] = set()
    for first, last in spans:
        for n in range(first + shift, last + shift + 1):
            found |= set(lines.get(m["file"], {}).get(str(n), []))
    return found


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
    if args.reverse:  # the mutants that run the whole command stay last
        mine = [m for m in mine if selection(lines, m, tree) is not None]
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
