"""The map of mutation_by_coverage.py made by markers instead of coverage: one run of the
whole test command, at about its own cost, for a drawn sample.

Coverage of the whole command by item (mutation_coverage_map.py) takes 80 to 90 min of two
processes on this machine, more than a session has beside the other helpers. A drawn sample
needs far less than every line: only, for each mutant, the items that execute the lines
reading its change (mutation_coverage_map.readers). This script exports the draw's revision,
writes into each sampled engine file a call `hit(JOB)` (benchmarks/mutation_hits.py) where
that mutant's change is read, and runs the whole test command once on that tree (no -x, in
--shards processes). It then writes W/map.json in the coverage map's format, each reader
line of a mutant holding the items that called its marker, so that mutation_by_coverage.py's
`exec`, `verify` and `summarize` run unchanged.

Where a marker goes (the same rules as `readers`, one marker per mutant):
- a change inside a function's body: before the innermost statement that holds it, or
  inside the innermost lambda that holds it (its body becomes `(hit(JOB), BODY)[1]`): the
  statement runs whenever the change is evaluated (a superset, never fewer items);
- a default argument of an undecorated function: before the first statement of its body
  (after the docstring);
- a module-level private constant: at every load of its name (at module level that fires at
  import, the empty context, and the whole command runs, as with coverage);
- anything else at module level: no marker, the whole command runs (`readers` gives None).

The marker run is honest only about the items it records: an item that fails on the marked
tree may have stopped before a marker, so every mutant's list also holds each item that
failed there. A mutant whose marker could not be placed gets the empty context (the whole
command).
With --only-map (after a run stopped early) the map holds the items that ran, and says
`whole_command: false`: an item not reached is not in any list.

    python benchmarks/mutation_by_coverage.py draw --rev REV --sample N --seed S --workdir W
    python benchmarks/mutation_by_marker.py --workdir W [--shards 2]
    python benchmarks/mutation_by_marker.py --workdir W --only-map   # a run stopped early
    python benchmarks/mutation_by_marker.py --workdir W --subset "ARGS"   # a part of the command
    python benchmarks/mutation_by_coverage.py exec --part I --parts N --workdir W   # as before
"""

from __future__ import annotations

import argparse
import ast
import json
import shlex
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutation_coverage_map import IMPORT, env, readers
from mutation_sample import export_tree

Pos = tuple[int, int]


def contains(node: ast.AST, start: Pos, end: Pos) -> bool:
    return (node.lineno, node.col_offset) <= start and \
        end <= (node.end_lineno or node.lineno, node.end_col_offset or 0)


def spots(module: ast.Module, m: dict) -> list[tuple[Pos, Pos]] | None:
    """The source ranges at which the mutant's change is read (see the docstring)."""
    start, end = tuple(m["start"]), tuple(m["end"])
    for node in ast.walk(module):  # readers' first rule: inside a body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            first = node.body.lineno if isinstance(node, ast.Lambda) else node.body[0].lineno
            if first <= start[0] and end[0] <= (node.end_lineno or node.lineno):
                return [(start, end)]
    for node in ast.walk(module):  # a default argument: the body's first statement
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                not node.decorator_list and node.lineno <= start[0] < node.body[0].lineno:
            body = node.body
            docstring = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            s = body[1] if docstring and len(body) > 1 else body[0]
            return [((s.lineno, s.col_offset), (s.end_lineno or s.lineno, s.end_col_offset or 0))]
    for node in module.body:  # a private constant: each load of its name
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name) and node.targets[0].id.startswith("_") \
                and contains(node, start, end):
            name = node.targets[0].id
            return [((n.lineno, n.col_offset), (n.end_lineno or n.lineno, n.end_col_offset or 0))
                    for n in ast.walk(module) if isinstance(n, ast.Name) and n.id == name
                    and isinstance(n.ctx, ast.Load)]
    return None


def marker(job: str) -> ast.Call:
    call = ast.Attribute(ast.Call(ast.Name("__import__", ast.Load()),
                                  [ast.Constant("mutation_hits")], []), "hit", ast.Load())
    return ast.Call(call, [ast.Constant(job)], [])


def innermost(nodes: list[ast.AST]) -> ast.AST | None:
    """The smallest of nested nodes that all hold one range: the last to start."""
    return max(nodes, key=lambda n: (n.lineno, n.col_offset), default=None)


def mark(source: str, mutants: list[dict]) -> tuple[str, list[str]]:
    """The module with each mutant's markers, and the jobs none could be placed for."""
    module = ast.parse(source)
    stmts = [n for n in ast.walk(module) if isinstance(n, ast.stmt)]
    lambdas = [n for n in ast.walk(module) if isinstance(n, ast.Lambda)]
    before: dict[int, list[str]] = defaultdict(list)  # id(stmt) -> jobs
    wrap: dict[int, list[str]] = defaultdict(list)  # id(lambda) -> jobs
    unplaced = []
    for m in mutants:
        found = spots(module, m)
        if found is None:
            continue  # the whole command runs (readers gives None too)
        for start, end in found:
            lam = innermost([n for n in lambdas if contains(n.body, start, end)])
            stmt = innermost([n for n in stmts if contains(n, start, end)])
            if lam is not None:
                wrap[id(lam)].append(m["job"])
            elif stmt is not None:
                before[id(stmt)].append(m["job"])
            else:
                unplaced.append(m["job"])
    for lam in lambdas:
        for job in wrap.get(id(lam), []):
            lam.body = ast.Subscript(ast.Tuple([marker(job), lam.body], ast.Load()),
                                     ast.Constant(1), ast.Load())
    for node in [n for n in ast.walk(module)]:
        for field, value in ast.iter_fields(node):
            if isinstance(value, list) and any(id(s) in before for s in value):
                new: list[ast.AST] = []
                for s in value:
                    new += [ast.Expr(marker(job)) for job in before.get(id(s), [])] + [s]
                setattr(node, field, new)
    return ast.unparse(ast.fix_missing_locations(module)) + "\n", unplaced


def read_hits(work: Path, shards: int) -> tuple[dict[str, set[str]], set[str], int]:
    """Per job, the items (IMPORT: outside any) that called its marker; the items that
    failed on the marked tree; how many items ran."""
    hits: dict[str, set[str]] = defaultdict(set)
    failed: set[str] = set()
    mapped = 0
    for i in range(shards):
        for line in (work / f"hits.{i}.tsv").read_text().splitlines():
            item, jobs, outcome = line.split("\t")
            mapped += bool(item)
            for job in filter(None, jobs.split(",")):
                hits[job].add(item or IMPORT)
            if outcome == "failed":
                failed.add(item)
    return hits, failed, mapped


def run(args: argparse.Namespace) -> dict:
    work = Path(args.workdir)
    meta = json.loads((work / "sample.json").read_text())
    tree = work / "tree-mark"
    if args.only_map:  # a run stopped early: the map of the items it reached
        return write_map(work, meta, args.shards, [], 0)
    export_tree(meta["revision"], tree)
    by_file: dict[str, list[dict]] = defaultdict(list)
    for m in meta["mutants"]:
        by_file[m["file"]].append(m)
    unplaced: list[str] = []
    for rel, ms in by_file.items():
        text, missing = mark((tree / rel).read_text(), ms)
        (tree / rel).write_text(text)
        unplaced += missing
    for i in range(args.shards):
        (work / f"hits.{i}.tsv").unlink(missing_ok=True)
    start = time.perf_counter()
    command = ["--opinfo", "-k", "not opinfo or float64", "cases", "tests/reference_engine"]
    if args.subset:  # a part of the command (its pytest arguments): the map is not whole
        command = shlex.split(args.subset)
    procs = [subprocess.Popen(
        ["nice", "-n", str(args.nice), sys.executable, "-m", "pytest", "-p", "mutation_hits",
         "-p", "mutation_items", f"--only-shard={i}/{args.shards}", "-q", "-p",
         "no:cacheprovider", "--item-timeout", f"{args.item_timeout:g}", *command],
        cwd=tree, env={**env(tree), "MUTATION_HITS": str(work / f"hits.{i}.tsv")},
        stdout=(work / f"marker.{i}.log").open("w"), stderr=subprocess.STDOUT)
        for i in range(args.shards)]
    (work / "unplaced.json").write_text(json.dumps(unplaced))
    codes = [p.wait() for p in procs]
    return write_map(work, meta, args.shards, codes, round(time.perf_counter() - start),
                     args.subset)


def write_map(work: Path, meta: dict, shards: int, codes: list[int], seconds: int,
              subset: str = "") -> dict:
    hits, failed, mapped = read_hits(work, shards)
    unplaced = json.loads((work / "unplaced.json").read_text())
    lines: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    clean = work / "sample-tree"
    for m in meta["mutants"]:
        spans = readers(clean, m)
        if spans is None:
            continue
        found = hits[m["job"]] | failed | ({IMPORT} if m["job"] in unplaced else set())
        for first, last in spans:
            for n in range(first, last + 1):
                lines[m["file"]][str(n)] |= found
    result = {"revision": meta["revision"], "seconds": seconds,
              "whole_command": bool(codes) and not subset, "subset": subset,
              "method": "markers (benchmarks/mutation_by_marker.py)",
              "failed_parts": [f"shard {i}: rc {c}" for i, c in enumerate(codes) if c],
              "items_mapped": mapped, "failed_items": sorted(failed), "unplaced": unplaced,
              "lines": {f: {n: sorted(c) for n, c in by.items()} for f, by in lines.items()}}
    (work / "map.json").write_text(json.dumps(result))
    return {k: v for k, v in result.items() if k != "lines"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--nice", type=int, default=10)
    parser.add_argument("--item-timeout", type=float, default=300)
    parser.add_argument("--subset", default="",
                        help="pytest arguments run in place of the whole command (a map that "
                             "is exact about the items it ran, whole_command false)")
    parser.add_argument("--only-map", action="store_true",
                        help="write map.json from the hits recorded so far (no run)")
    print(json.dumps(run(parser.parse_args()), indent=1))


if __name__ == "__main__":
    main()
