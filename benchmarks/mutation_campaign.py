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

`carry` and `oracle` (mutation_carry.py) run a campaign's mutants at a later revision.


With --save the results go to benchmarks/results/, one file per sample:
mutation_campaign_seedSEED.json (run, summarize) or mutation_recheck_seedSEED.json (recheck
of the campaign saved under --seed); what each remaining survivor is (equivalent, or not
observable through torch's API) is written by hand in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from cosmic_ray.mutating import mutate_and_test
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import WorkResult
from mutation_carry import carry, oracle
from mutation_sample import (
    ANNOTATION,
    CONFIG,
    NOT_SAMPLED,
    REPO,
    RESULTS,
    TEST_COMMAND,
    TIMEOUT,
    export_tree,
    in_annotation,
    mark_skipped,
    mutants,
    saved,
    stratified,
    strip_paths,
)


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
        if outcome == "survived" and result is not None:
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
