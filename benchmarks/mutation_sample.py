"""The pieces every mode of the mutation campaign (mutation_campaign.py, mutation_carry.py,
mutation_by_coverage.py) shares: where the results go, the test command a mutant runs
against, a tree exported at a revision, a command run in it, and how the sample is drawn
(annotations left out, then stratified by file: see mutation_campaign.py's docstring)."""

from __future__ import annotations

import ast
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

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


def saved(kind: str, seed: int) -> Path:
    """Where --save puts a campaign's (or its recheck's) results: one file per sample."""
    return RESULTS / f"mutation_{kind}_seed{seed}.json"


def strip_paths(diff: str) -> str:
    """cosmic-ray's diff names the file; patch is given the file itself instead."""
    return "\n".join(ln for ln in diff.splitlines()
                     if not ln.startswith(("--- ", "+++ "))) + "\n"
