"""The coverage map of mutation_by_coverage.py: which test items execute each line of
reference_engine/ (coverage with one context per item, benchmarks/mutation_items.py), made
once at a revision, and, for a mutant, the items that execute the lines reading its change
(or None where the whole test command must run: see mutation_by_coverage.py's docstring)."""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import coverage
from mutation_sample import REPO, export_tree

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
