"""Mutants of a campaign (mutation_campaign.py) carried onto a later revision: `carry` and
`oracle`.

`carry` runs the session's pending mutants at a later revision, REV (exported into
WORKDIR/ontoI): each mutant is made at the campaign's revision, as cosmic-ray makes it, and its
diff is carried onto REV by `patch` (no fuzz; the same file first, then, as engine modules get
split, every other engine file), else by its changed line alone where that line is found once
in a file (the lines around it were edited): a mutant whose line is in no file "does not
apply" and counts nowhere. It is tested in two steps, so that a kill is credited to the
library as it was when the sample was drawn or not: first the test items (cases and unit
tests) that existed at the campaign's revision and did not change since (their case file, or
their test function's body, is the same), then, if it survived them, the items added or
changed since. A run past the timeout is a "timeout", not a kill (cosmic-ray counts it
killed). Part 0 first checks that both steps pass unmutated. `--jobs` runs only the given job
ids (in WORKDIR/ontojobsI, without that check). With --save, part I's results go to
mutation_carried_seedSEED_partI.json (with --jobs, mutation_carried_seedSEED_jobs_IDS.json).

`oracle` takes mutants already run (job ids from the saved results of seed S), carries each
one's diff onto REV as `carry` does, and runs the OpInfo items alone against it (`-k "opinfo
and (K)"`; they must pass unmutated): which survivors of the case library they kill, and at
what cost. With --save its runs are appended to mutation_opinfo_seedS.json.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import subprocess
import sys
import time
from pathlib import Path

from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator
from cosmic_ray.work_db import WorkDB, use_db
from mutation_sample import REPO, RESULTS, export_tree, saved, strip_paths, tested


def carry(args: argparse.Namespace) -> dict:
    """Part `args.part` of `args.parts` of the session's pending mutants, carried onto
    `args.onto` by their diffs and tested there in two steps (see the module's docstring)."""
    work = Path(args.workdir)
    meta = json.loads((work / "campaign.json").read_text())
    name = f"jobs{args.part}" if args.jobs else str(args.part)
    old, tree = work / f"old{name}", work / f"onto{name}"
    export_tree(meta["revision"], old)
    export_tree(args.onto, tree)
    onto = subprocess.run(["git", "-C", str(REPO), "rev-parse", args.onto], check=True,
                          capture_output=True, text=True).stdout.strip()
    added = new_items(old, tree)
    pytest = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    steps = {"killed": [*pytest, "cases", "tests/reference_engine",
                        *(f"--deselect={i}" for i in added)],
             "killed by a test added since the draw": pytest + added}
    # each step must pass unmutated: else every mutant would count as killed
    if args.part == 0 and not args.jobs:
        for command in steps.values():
            outcome, _ = tested(command, tree, args.timeout)
            if outcome != "passed":
                sys.exit(f"the tests fail unmutated at {onto}: {' '.join(command[-3:])}")
    with use_db(str(work / "session.sqlite"), WorkDB.Mode.open) as work_db:
        pending = sorted(work_db.pending_work_items, key=lambda item: item.job_id)
    mine = ([item for item in pending if item.job_id.startswith(tuple(args.jobs.split(",")))]
            if args.jobs else pending[args.part::args.parts])
    engine = sorted(p.relative_to(tree) for p in (tree / "reference_engine").rglob("*.py"))
    results = []
    for item in mine:
        start = time.perf_counter()
        spec = item.mutations[0]
        module = Path(spec.module_path)
        source = (old / module).read_text()
        mutated = mutate_code(source, get_operator(spec.operator_name)(), spec.occurrence)
        diff = "".join(difflib.unified_diff(source.splitlines(True), mutated.splitlines(True)))
        result = {"job": item.job_id, "file": str(module), "line": spec.start_pos[0],
                  "operator": spec.operator_name, "diff": diff}
        originals = {p: (tree / p).read_text() for p in engine}
        target = carried(tree, [module, *(p for p in engine if p != module)], diff)
        if target is None:
            results.append({**result, "outcome": "does not apply"})
            print(f"{item.job_id} {module}:{spec.start_pos[0]} does not apply", flush=True)
            continue
        original = originals[target]
        result["applied_to"] = str(target)
        result["applied"] = "".join(difflib.unified_diff(
            original.splitlines(True), (tree / target).read_text().splitlines(True), n=1))
        try:
            for verdict, command in steps.items():
                outcome, by = tested(command, tree, args.timeout)
                if outcome != "passed":
                    result.update(outcome=verdict if outcome == "failed" else outcome, by=by)
                    break
            else:
                result["outcome"] = "survived"
        finally:
            (tree / target).write_text(original)
        result["seconds"] = round(time.perf_counter() - start)
        print(f"{item.job_id} {module}:{spec.start_pos[0]} -> {target} {result['outcome']} "
              f"{result.get('by', '')} {result['seconds']} s", flush=True)
        results.append(result)
    return {"campaign_revision": meta["revision"], "seed": meta["seed"], "onto": onto,
            "part": args.part, "parts": args.parts, "timeout": args.timeout,
            "items_added_or_changed_since_the_draw": added, "mutants": results}


def new_items(old: Path, tree: Path) -> list[str]:
    """The test items (cases and engine unit tests) of `tree` that `old` lacks, or whose case
    file or test function changed between them (a changed helper is not seen)."""
    def collect(root: Path) -> set[str]:
        out = subprocess.run(["nice", "-n", "10", sys.executable, "-m", "pytest",
                              "--collect-only", "-q", "-p", "no:cacheprovider", "cases",
                              "tests/reference_engine"], cwd=root, capture_output=True,
                             text=True).stdout
        return {ln for ln in out.splitlines() if "::" in ln and " " not in ln}

    def functions(path: Path) -> dict[str, str]:
        """Each test function's arguments and body (not its decorators), by qualified name."""
        found = {}
        for node in ast.parse(path.read_text()).body:
            # a class's methods as Class::method, a module's functions by their name
            prefix, members = ((f"{node.name}::", node.body) if isinstance(node, ast.ClassDef)
                               else ("", [node]))
            for f in members:
                if isinstance(f, ast.FunctionDef):
                    found[prefix + f.name] = ast.dump(f.args) + "".join(ast.dump(b)
                                                                        for b in f.body)
        return found

    before, after = collect(old), collect(tree)
    changed = set()
    for path in {item.split("::")[0] for item in after}:
        if not (old / path).is_file() or (old / path).read_text() == (tree / path).read_text():
            continue
        mine = [i for i in after if i.split("::")[0] == path]
        if path.endswith(".py"):
            was, now = functions(old / path), functions(tree / path)
            name = {i: i.split("[")[0].split("::", 1)[1] for i in mine}
            changed |= {i for i in mine if was.get(name[i]) != now.get(name[i])}
        else:
            changed |= set(mine)
    return sorted((after - before) | changed)


def carried(tree: Path, targets: list[Path], diff: str) -> Path | None:
    """The first of `targets` that takes `diff` (applied there): by `patch` without fuzz, else,
    where the lines around it were edited since, by the changed line alone when that line is
    found exactly once in the file."""
    for target in targets:
        if (tree / target).is_file() and subprocess.run(
                ["patch", "--forward", "--fuzz=0", "--no-backup-if-mismatch", "-s", "-r", "-",
                 str(tree / target)],
                input=strip_paths(diff), text=True, capture_output=True).returncode == 0:
            return target
    removed = [ln[1:] for ln in diff.splitlines(True) if ln[0] == "-" and ln[:3] != "---"]
    added = [ln[1:] for ln in diff.splitlines(True) if ln[0] == "+" and ln[:3] != "+++"]
    if len(removed) != 1 or len(added) != 1:
        return None
    for target in targets:
        lines = (tree / target).read_text().splitlines(True) if (tree / target).is_file() else []
        if lines.count(removed[0]) == 1:
            lines[lines.index(removed[0])] = added[0]
            (tree / target).write_text("".join(lines))
            return target
    return None


def oracle(args: argparse.Namespace) -> dict:
    """Mutants already run (`--jobs`, from the saved results of `--seed`: the campaign's
    survivors and the carried files), each carried onto `--onto` as `carry` carries it and
    tested with the OpInfo items alone, those `-k SELECT` picks (they must pass unmutated)."""
    found: dict[str, dict] = {}
    for path in [saved("campaign", args.seed),
                 *sorted(RESULTS.glob(f"mutation_carried_seed{args.seed}_*.json"))]:
        data = json.loads(path.read_text())
        for m in [*data.get("survivors", []), *data.get("mutants", [])]:
            found.setdefault(m["job"], m)
    tree = Path(args.workdir) / "oracle"
    export_tree(args.onto, tree)
    onto = subprocess.run(["git", "-C", str(REPO), "rev-parse", args.onto], check=True,
                          capture_output=True, text=True).stdout.strip()
    # ids.py holds no test: named, it keeps the configured suite out of the run
    command = [sys.executable, "-m", "pytest", "--opinfo", "-x", "-q", "-p", "no:cacheprovider",
               "-k", f"opinfo and ({args.select})", "conformance/opinfo/ids.py"]
    start = time.perf_counter()
    outcome, by = tested(command, tree, args.timeout)
    if outcome != "passed":
        sys.exit(f"the OpInfo items fail unmutated at {onto}: {by}")
    baseline = round(time.perf_counter() - start)
    engine = sorted(p.relative_to(tree) for p in (tree / "reference_engine").rglob("*.py"))
    results = []
    for job in args.jobs.split(","):
        (mutant,) = [m for j, m in found.items() if j.startswith(job)]
        module = Path(mutant["file"])
        originals = {p: (tree / p).read_text() for p in engine}
        target = carried(tree, [module, *(p for p in engine if p != module)], mutant["diff"])
        result = {"job": mutant["job"], "file": mutant["file"], "line": mutant["line"],
                  "applied_to": str(target)}
        if target is None:
            results.append({**result, "outcome": "does not apply"})
            print(f"{mutant['job'][:8]} {mutant['file']}:{mutant['line']} does not apply",
                  flush=True)
            continue
        start = time.perf_counter()
        try:
            outcome, by = tested(command, tree, args.timeout)
        finally:
            (tree / target).write_text(originals[target])
        verdict = {"failed": "killed", "passed": "survived"}.get(outcome, outcome)
        result.update(outcome=verdict, by=by,
                      seconds=round(time.perf_counter() - start))
        print(f"{mutant['job'][:8]} {mutant['file']}:{mutant['line']} -> {target} "
              f"{result['outcome']} {by} {result['seconds']} s", flush=True)
        results.append(result)
    return {"seed": args.seed, "onto": onto, "select": args.select, "command": command[1:],
            "seconds_unmutated": baseline, "mutants": results}
