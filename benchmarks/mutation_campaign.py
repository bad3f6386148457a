"""Mutation testing of reference_engine/ with cosmic-ray: how many engine faults the cases kill.

cosmic-ray (8.7) makes one mutant per operator occurrence in reference_engine/ (an operator
swapped, a number changed, a condition negated, a loop skipped, a decorator removed, ...).
Each mutant is written into a copy of the tree and the test command runs against it: the
case library on the reference engine (every case against torch), then the engine's unit
tests, then the OpInfo items (`--opinfo`: every covered op's forward, grads, jvp, grad_fn
names and saved tensors against torch on OpInfo's samples; added from seed 25 on, see
benchmarks/README.md for their cost); a mutant is killed when that command fails (or exceeds
the timeout).

The full set is too slow for this machine (about 9,200 mutants at 20 to 50 s each on 2 shared
cores), so a campaign runs a sample:

- mutants inside type annotations are left out (every engine module has
  `from __future__ import annotations`: an annotation is never evaluated, so such a mutant
  is equivalent by construction);
- of the rest, SAMPLE mutants are drawn stratified by file: each file gets a share
  proportional to its number of mutants (largest remainder, at least one), the first of
  that file's mutants (in source order) once shuffled by `random.Random(f"{SEED}:{FILE}")`;
- a SAMPLE smaller than the number of files is instead a plain random sample of all of them
  (`random.Random(SEED)`), as one per file would not fit;
- everything else is marked skipped in the session, so `cosmic-ray exec` runs the sample
  (with --draw-only, `run` stops there and `exec` processes run it).

    python benchmarks/mutation_campaign.py run [--rev HEAD] [--sample 120] [--seed 20]
        [--workdir /tmp/autograd-mutation] [--draw-only] [--save]
    python benchmarks/mutation_campaign.py summarize [--workdir ...] [--save]
    python benchmarks/mutation_campaign.py recheck [--seed 20] [--workdir ...] [--save]
    python benchmarks/mutation_campaign.py exec --part I --parts N [--timeout 300] [--workdir ...]
    python benchmarks/mutation_campaign.py carry --onto REV --part I --parts N [--timeout 900]
        [--workdir ...] [--save]
    python benchmarks/mutation_campaign.py oracle --seed S --jobs IDS [--select K] [--onto REV]
        [--workdir ...] [--save]

`run` exports the committed tree at REV (git archive) into WORKDIR/tree, checks that the
test command passes on it, makes the session WORKDIR/session.sqlite and executes it (one
mutant at a time, under `nice -n 10`). `summarize` gives the figures of a campaign's session
as it stands (one stopped early counts the rest as pending). `exec` runs the session's pending
mutants in place of `cosmic-ray exec` (stopped, or never started), in parallel: process I of N
takes every Nth of them (by job id) in its own copy of the tree, WORKDIR/treeI, with the same
test command and the given timeout (a loaded machine takes longer than 300 s for a survivor,
which cosmic-ray would count as killed), storing each result in the session. `recheck`
takes the recorded campaign's survivors and applies each one's diff to the working tree as it
is now (copied into WORKDIR/recheck), running the case files and engine unit tests added or
changed since the campaign's revision (they must pass unmutated): a survivor that fails them
is killed by a new case.

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

With --save the results go to benchmarks/results/, one file per sample:
mutation_campaign_seedSEED.json (run, summarize) or mutation_recheck_seedSEED.json (recheck
of the campaign saved under --seed); what each remaining survivor is (equivalent, or not
observable through torch's API) is written by hand in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import platform
import random
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from cosmic_ray.mutating import mutate_and_test, mutate_code
from cosmic_ray.plugins import get_operator
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import MutationSpec, WorkerOutcome, WorkResult

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
# --opinfo: the OpInfo items (every covered op against torch on OpInfo's samples), collected
# last; their float64 half only (-k: no case or unit test has "opinfo" in its id), half the
# cost of both dtypes, and in seed 24 they killed what the float32 half killed
TEST_COMMAND = (f"{sys.executable} -m pytest --opinfo cases tests/reference_engine -x -q "
                "-p no:cacheprovider -k 'not opinfo or float64'")
TIMEOUT = 300.0
ANNOTATION = "in a type annotation: never evaluated"
NOT_SAMPLED = "not sampled"
CONFIG = """\
[cosmic-ray]
module-path = "reference_engine"
timeout = {timeout}
excluded-modules = []
test-command = "{command}"

[cosmic-ray.distributor]
name = "local"
"""


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) positions, (line, column), of every annotation in a module."""
    nodes: list[ast.expr] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arg) and node.annotation is not None:
            nodes.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns:
            nodes.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            nodes.append(node.annotation)
    return [((n.lineno, n.col_offset), (n.end_lineno or n.lineno, n.end_col_offset or 0))
            for n in nodes]


def in_annotation(tree: Path, module: str, start: tuple[int, int], end: tuple[int, int],
                  cache: dict[str, list]) -> bool:
    if module not in cache:
        cache[module] = annotation_spans((tree / module).read_text())
    return any(s <= start and end <= e for s, e in cache[module])


def stratified(by_file: dict[str, list[str]], size: int, seed: int) -> list[str]:
    """`size` job ids, each file's share proportional to its count (largest remainder, at
    least one): the first of the file's mutants in a seeded shuffle, so a larger sample
    of the same seed takes the smaller one's mutants and more."""
    if size < len(by_file):  # too small for one per file: a plain seeded random sample
        every = [j for f in sorted(by_file) for j in by_file[f]]
        return random.Random(seed).sample(every, size)
    total = sum(len(v) for v in by_file.values())
    quotas = {f: size * len(v) / total for f, v in by_file.items()}
    counts = {f: max(1, int(q)) for f, q in quotas.items()}
    by_remainder = sorted(by_file, key=lambda f: (quotas[f] - int(quotas[f]), f), reverse=True)
    for f in by_remainder[: max(0, size - sum(counts.values()))]:
        counts[f] += 1
    sample = []
    for f in sorted(by_file):
        order = list(by_file[f])
        random.Random(f"{seed}:{f}").shuffle(order)
        sample += order[:counts[f]]
    return sample


def export_tree(rev: str, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def mark_skipped(db: Path, jobs: list[str], why: str) -> None:
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        work_db.set_multiple_results(jobs, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                      output=why))


def mutants(db: Path) -> list[tuple[MutationSpec, str]]:
    """Every mutant with its job id, in an order that does not depend on the (random) ids."""
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        items = [(item.mutations[0], item.job_id) for item in work_db.work_items]
    return sorted(items, key=lambda m: (str(m[0].module_path), m[0].start_pos, m[0].end_pos,
                                        m[0].operator_name, m[0].occurrence))


def run(args: argparse.Namespace) -> dict:
    work = Path(args.workdir)
    tree, db, config = work / "tree", work / "session.sqlite", work / "cosmic-ray.toml"
    export_tree(args.rev, tree)
    revision = subprocess.run(["git", "-C", str(REPO), "rev-parse", args.rev], check=True,
                              capture_output=True, text=True).stdout.strip()
    # every mutant counts as killed when the command fails: it must pass unmutated
    baseline = subprocess.run(["nice", "-n", "10", *shlex.split(TEST_COMMAND)], cwd=tree,
                              capture_output=True, text=True)
    if baseline.returncode:
        sys.exit(f"the test command fails on the unmutated tree:\n{baseline.stdout[-3000:]}")
    config.write_text(CONFIG.format(timeout=TIMEOUT, command=TEST_COMMAND))
    db.unlink(missing_ok=True)
    subprocess.run(["cosmic-ray", "init", str(config), str(db)], cwd=tree, check=True)
    cache: dict[str, list] = {}
    annotated, by_file = [], defaultdict(list)
    for spec, job in mutants(db):
        module = str(spec.module_path)
        if in_annotation(tree, module, tuple(spec.start_pos), tuple(spec.end_pos), cache):
            annotated.append(job)
        else:
            by_file[module].append(job)
    sample = set(stratified(by_file, args.sample, args.seed))
    mark_skipped(db, annotated, ANNOTATION)
    mark_skipped(db, [j for jobs in by_file.values() for j in jobs if j not in sample],
                 NOT_SAMPLED)
    (work / "campaign.json").write_text(json.dumps({"revision": revision, "seed": args.seed,
                                                    "sample": args.sample}))
    print(f"{len(annotated) + sum(map(len, by_file.values()))} mutants, {len(annotated)} in "
          f"annotations, {len(sample)} sampled of {sum(map(len, by_file.values()))}", flush=True)
    if args.draw_only:  # the sample is run by `exec` processes
        return summarize(work)
    start = time.perf_counter()
    subprocess.run(["nice", "-n", "10", "cosmic-ray", "exec", str(config), str(db)], cwd=tree,
                   check=True)
    return summarize(work, round(time.perf_counter() - start))


def execute(args: argparse.Namespace) -> dict:
    """Part `args.part` of `args.parts` of the session's pending mutants, each result stored
    as `cosmic-ray exec` stores it."""
    work = Path(args.workdir)
    db, tree = work / "session.sqlite", work / f"tree{args.part}"
    with use_db(str(db), WorkDB.Mode.open) as work_db:
        pending = sorted(work_db.pending_work_items, key=lambda item: item.job_id)
    meta = json.loads((work / "campaign.json").read_text())
    export_tree(meta["revision"], tree)
    done = []
    for item in pending[args.part::args.parts]:
        start = time.perf_counter()
        # mutate_and_test mutates the module path relative to the working directory
        result = mutate_in(tree, item.mutations, args.timeout)
        with use_db(str(db), WorkDB.Mode.open) as work_db:
            work_db.set_result(item.job_id, result)
        spec = item.mutations[0]
        outcome = (result.test_outcome or result.worker_outcome).value
        print(f"{item.job_id} {spec.module_path}:{spec.start_pos[0]} {outcome} "
              f"{time.perf_counter() - start:.0f} s", flush=True)
        done.append({"job": item.job_id, "outcome": outcome})
    return {"part": args.part, "parts": args.parts, "timeout": args.timeout, "ran": done}


def mutate_in(tree: Path, mutations: Any, timeout: float) -> WorkResult:
    previous = Path.cwd()
    os.chdir(tree)
    try:
        return mutate_and_test(mutations=mutations, test_command=TEST_COMMAND, timeout=timeout)
    finally:
        os.chdir(previous)


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
            for f in [node, *getattr(node, "body", [])] if isinstance(node, ast.ClassDef) \
                    else [node]:
                if isinstance(f, ast.FunctionDef):
                    name = f"{node.name}::{f.name}" if f is not node else f.name
                    found[name] = ast.dump(f.args) + "".join(ast.dump(b) for b in f.body)
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


def tested(command: list[str], tree: Path, timeout: float, nice: int = 10,
           reasons: list[str] | None = None) -> tuple[str, str]:
    """("passed" | "failed" | "timeout", the first failing item) of one command run
    in `tree` under `nice -n NICE`; on a timeout the whole process group is killed.
    `reasons` receives pytest's FAILED/ERROR lines (what failed, to tell a kill from a
    load-driven time limit)."""
    proc = subprocess.Popen(["nice", "-n", str(nice), *command], cwd=tree, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True,
                            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "timeout", ""
    if proc.returncode == 0:
        return "passed", ""
    lines = [ln for ln in out.splitlines()
             if ln.startswith(("FAILED", "ERROR")) and len(ln.split()) > 1]
    if reasons is not None:
        reasons += [ln[:400] for ln in lines]
    failed = [ln.split()[1] for ln in lines]
    return "failed", failed[0] if failed else f"rc {proc.returncode}: {out[-300:]}"


def summarize(work: Path, seconds: int | None = None) -> dict:
    """The campaign's figures from its session; a campaign stopped early counts its
    mutants not yet run as pending."""
    meta = json.loads((work / "campaign.json").read_text())
    with use_db(str(work / "session.sqlite"), WorkDB.Mode.open) as work_db:
        results = dict(work_db.results)
        items = [(item.mutations[0], item.job_id) for item in work_db.work_items]
    items.sort(key=lambda d: (str(d[0].module_path), d[0].start_pos, d[0].operator_name,
                              d[0].occurrence))
    files: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    counts: dict[str, int] = defaultdict(int)
    survivors, killed = [], []
    for spec, job in items:
        module, result = str(spec.module_path), results.get(job)
        if result is not None and result.output == ANNOTATION:
            counts["in_annotations"] += 1
            continue
        files[module]["eligible"] += 1
        if result is not None and result.output == NOT_SAMPLED:
            continue
        outcome = "pending" if result is None else (result.test_outcome
                                                    or result.worker_outcome).value
        files[module][outcome] += 1
        counts[outcome] += 1
        if outcome == "survived":
            survivors.append({"job": job, "file": module, "line": spec.start_pos[0],
                              "operator": spec.operator_name, "diff": result.diff})
        elif outcome == "killed" and result is not None:
            failed = [ln.split()[1] for ln in (result.output or "").splitlines()
                      if ln.startswith(("FAILED", "ERROR")) and len(ln.split()) > 1]
            killed.append({"job": job, "file": module, "line": spec.start_pos[0],
                           "operator": spec.operator_name,
                           "by": failed[0] if failed else (result.output or "")[-200:]})
    in_annotations = counts.pop("in_annotations", 0)
    return {
        "what": "cosmic-ray mutants of reference_engine/, a stratified seeded sample, run "
                "against the case library and the engine's unit tests",
        **meta, "test_command": TEST_COMMAND, "timeout": TIMEOUT,
        "generated": len(items), "in_annotations": in_annotations,
        "eligible": len(items) - in_annotations, "sampled": sum(counts.values()),
        "outcomes": dict(counts), "per_file": {f: dict(v) for f, v in sorted(files.items())},
        "survivors": survivors, "killed": killed, "seconds": seconds,
        "python": platform.python_version(),
    }


def new_tests(revision: str) -> list[str]:
    """Case files and engine unit-test files added or changed since the campaign's revision
    (committed or not)."""
    def git(*a: str) -> list[str]:
        return subprocess.run(["git", "-C", str(REPO), *a], check=True, capture_output=True,
                              text=True).stdout.split()
    paths = git("diff", "--name-only", revision, "--", "cases", "tests/reference_engine") + \
        git("ls-files", "--others", "--exclude-standard", "cases", "tests/reference_engine")
    wanted = [p for p in paths if p.endswith(".yaml") or Path(p).name.startswith("test_")]
    return sorted({p for p in wanted if (REPO / p).exists()})


def recheck(args: argparse.Namespace) -> dict:
    """Each campaign survivor's diff applied to the present working tree, then the tests
    added since the campaign run against it: a survivor that fails them now is killed by
    a new case (or unit test)."""
    campaign = json.loads(saved("campaign", args.seed).read_text())
    work = Path(args.workdir) / "recheck"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(REPO, work, ignore=shutil.ignore_patterns(
        ".git", ".venv", "__pycache__", "reports", "*.egg-info", ".hypothesis"))
    tests = new_tests(campaign["revision"])
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    baseline = subprocess.run(command, cwd=work, capture_output=True, text=True)
    if baseline.returncode:
        sys.exit(f"the new tests fail on the unmutated tree:\n{baseline.stdout[-3000:]}")
    results = []
    for mutant in campaign["survivors"]:
        target = work / mutant["file"]
        original = target.read_text()
        applied = subprocess.run(["patch", "--forward", "-s", str(target)],
                                 input=strip_paths(mutant["diff"]), text=True,
                                 capture_output=True, cwd=work)
        if applied.returncode != 0:
            outcome = "does not apply"
        else:
            test = subprocess.run(["nice", "-n", "10", *command], cwd=work, capture_output=True,
                                  text=True, timeout=TIMEOUT)
            failed = [ln.split()[1] for ln in test.stdout.splitlines()
                      if ln.startswith(("FAILED", "ERROR"))]
            outcome = (f"killed by {failed[0] if failed else 'rc ' + str(test.returncode)}"
                       if test.returncode else "survived")
        target.write_text(original)
        print(f"{mutant['job']} {mutant['file']}:{mutant['line']} {outcome}", flush=True)
        results.append({"job": mutant["job"], "file": mutant["file"], "line": mutant["line"],
                        "outcome": outcome})
    return {"campaign_revision": campaign["revision"], "seed": campaign["seed"],
            "tests": tests, "survivors": results}


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


def saved(kind: str, seed: int) -> Path:
    """Where --save puts a campaign's (or its recheck's) results: one file per sample."""
    return RESULTS / f"mutation_{kind}_seed{seed}.json"


def strip_paths(diff: str) -> str:
    """cosmic-ray's diff names the file; patch is given the file itself instead."""
    return "\n".join(ln for ln in diff.splitlines()
                     if not ln.startswith(("--- ", "+++ "))) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["run", "summarize", "recheck", "exec", "carry",
                                         "oracle"])
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--sample", type=int, default=120)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--workdir", default="/tmp/autograd-mutation")
    parser.add_argument("--save", action="store_true")
    parser.add_argument("--draw-only", action="store_true",
                        help="run: draw the sample, leave it pending for `exec`")
    parser.add_argument("--part", type=int, default=0)
    parser.add_argument("--parts", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=TIMEOUT)
    parser.add_argument("--onto", default="HEAD")
    parser.add_argument("--jobs", default="", help="carry, oracle: these job ids (prefixes, a,b)")
    parser.add_argument("--select", default="opinfo", help="oracle: which OpInfo items (-k)")
    args = parser.parse_args()
    modes = {"run": run, "summarize": lambda a: summarize(Path(a.workdir)), "recheck": recheck,
             "exec": execute, "carry": carry, "oracle": oracle}
    result = modes[args.mode](args)
    text = json.dumps(result, indent=1)
    if args.save and args.mode == "carry":
        RESULTS.mkdir(exist_ok=True)
        part = f"jobs_{args.jobs.replace(',', '_')}" if args.jobs else f"part{args.part}"
        (RESULTS / f"mutation_carried_seed{result['seed']}_{part}.json").write_text(text + "\n")
    elif args.save and args.mode == "oracle":
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / f"mutation_opinfo_seed{result['seed']}.json"
        runs = json.loads(path.read_text()) if path.exists() else []
        path.write_text(json.dumps([*runs, result], indent=1) + "\n")
    elif args.save and args.mode != "exec":
        RESULTS.mkdir(exist_ok=True)
        saved("recheck" if args.mode == "recheck" else "campaign",
              result["seed"]).write_text(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
