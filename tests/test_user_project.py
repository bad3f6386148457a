"""A user gates CI on the suite from a project of their own, beside (outside) the clone: their
engine module, their cases run with some of the library's, their expectations file, two
shards sharing a hypothesis database, a merge, rerun commands, explain, recordings made in
and out of the clone. Every id stays the same whatever the working directory, the report
directory and the database (README "Item ids"). Subprocesses, as a user runs the commands;
no generated programs (ids are the point), so the runs are deterministic."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from conformance.case import paths
from conformance.case.loader import load_case
from conformance.run.runner import items_of

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ("cases/ops/exp_saves_result.yaml", "cases/leaf/leaf_rules.yaml")
EXP64 = "cases/ops/exp_saves_result.yaml::cpu-float64"  # diverges and is not listed
CASE = """\
description: {op} of a leaf
features: [ops]
program: |
  x = torch.tensor([1.0, 2.0], requires_grad=True)
  y = torch.{op}(x)
  y.sum().backward()
"""
EXPECTATIONS = """\
# myengine's known divergences, kept by hand
known:
  - items: "mycases/my_exp.yaml::*"   # ours
    reason: our exp is 1% off (a hand-written reason)
  - items: "cases/ops/exp_saves_result.yaml::cpu-float32"
    reason: the library's exp case, float32 only (a hand-written reason)
"""


def user_project(tmp_path: Path) -> Path:
    """myproj/: an engine module whose exp is 1% off, two cases (exp, sin), expectations."""
    project = tmp_path / "myproj"
    (project / "mycases").mkdir(parents=True)
    (project / "expectations").mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'myproj'\n")
    shutil.copy(ROOT / "tests" / "conformance" / "engine_wrong_exp.py", project / "myengine.py")
    for op in ("exp", "sin"):
        (project / "mycases" / f"my_{op}.yaml").write_text(CASE.format(op=op))
    (project / "expectations" / "myengine.yaml").write_text(EXPECTATIONS)
    return project


def command(cwd: Path, *args: str, module: str = "conformance.cli"
            ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTEST_") and k != "AUTOGRAD_CONFORMANCE_PROFILE"}
    # the user's engine module (myproj/myengine.py), wherever in the project they stand
    project = next((p for p in (cwd, *cwd.parents) if p.name == "myproj"), cwd)
    env["PYTHONPATH"] = str(project)
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)


def report(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / "conformance.json").read_text())
    return data


def expected_ids(project: Path) -> set[str]:
    files = [(f"mycases/{f.name}", f) for f in (project / "mycases").iterdir()]
    files += [(name, ROOT / name) for name in LIBRARY]
    return {f"{name}::{i.name}" for name, f in files for i in items_of(load_case(f))}


def clone_revision() -> str | None:
    out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                         text=True, check=False) if shutil.which("git") else None
    return out.stdout.strip() if out is not None and out.returncode == 0 else None


def test_a_user_project_beside_the_clone_keeps_every_id(tmp_path: Path) -> None:
    project = user_project(tmp_path)
    library = os.path.relpath(ROOT, project)  # as `../autograd-conformance` would be
    shard = ["--engine", "myengine", "--no-generated", "--workers", "1"]

    # shard 1 from the project: the shared database does not exist yet
    first = command(project, "run", "mycases", *(f"{library}/{f}" for f in LIBRARY), *shard,
                    "--report-dir", "../rd1", "--hypothesis-db", "../db", "--shard", "1/2")
    assert first.returncode == 1, first.stdout + first.stderr
    # shard 2 from inside mycases/, the database existing (it used to move pytest's rootdir)
    (tmp_path / "db").mkdir(exist_ok=True)
    second = command(project / "mycases", "run", ".",
                     *(f"../{library}/{f}" for f in LIBRARY), *shard,
                     "--expectations", "../expectations/myengine.yaml",
                     "--report-dir", "../../rd2", "--hypothesis-db", "../../db",
                     "--shard", "2/2")
    assert second.returncode == 1, second.stdout + second.stderr

    ids = expected_ids(project)
    for result, rd in ((first, tmp_path / "rd1"), (second, tmp_path / "rd2")):
        data = report(rd)
        verdicts = {r["id"]: r["verdict"] for r in data["items"]}
        assert set(verdicts) == ids, result.stdout
        assert verdicts["mycases/my_exp.yaml::cpu-float32"] == "known"
        assert verdicts["cases/ops/exp_saves_result.yaml::cpu-float32"] == "known"
        assert verdicts[EXP64] == "diverges"
        assert verdicts["mycases/my_sin.yaml::cpu-float32"] == "pass"
        assert data["expectations"]["unmatched"] == []  # every entry matched its items
        assert f"FAILED {EXP64} " in result.stdout  # pytest's line names the id too
        if clone_revision() is not None:  # the case library's revision, outside the clone
            assert data["run_info"]["git_revision"] == clone_revision()
        project_source = next(s for s in data["run_info"]["case_sources"]
                              if s["directory"] == str(project))
        assert project_source["git_revision"] is None and project_source["reason"]

    # rerun commands name the file from where each run started, and work pasted there
    reruns = {}
    for result, cwd in ((first, project), (second, project / "mycases")):
        # the failures section only: under CI=true pytest repeats whole messages in its
        # short summary, so the same line is printed twice there
        failures = result.stdout.split("short test summary info")[0]
        lines = [line.strip() for line in failures.splitlines() if "rerun: " in line]
        assert len(lines) == 1, result.stdout
        reruns[cwd] = lines[0].removeprefix("rerun: ")
        assert reruns[cwd] == f"pytest {paths.rerun_path(ROOT / EXP64, cwd)} --engine myengine"
        rerun = command(cwd, "-p", "no:cacheprovider", *shlex.split(reruns[cwd])[1:],
                        "--expectations", str(project / "expectations" / "myengine.yaml"),
                        module="pytest")
        assert rerun.returncode == 1, rerun.stdout + rerun.stderr
        assert f"{EXP64}: myengine diverges from torch" in rerun.stdout
        assert "1 failed" in rerun.stdout
    assert {r.get("repro") for r in report(tmp_path / "rd1")["items"]} == \
        {None, reruns[project]}

    # the shards merge item for item: each id once, nothing in conflict
    merged = command(project, "merge", "../rd1", "../rd2", "--out", "../merged")
    assert merged.returncode == 1, merged.stdout + merged.stderr
    data = report(tmp_path / "merged")
    assert sorted(r["id"] for r in data["items"]) == sorted(ids)
    assert not [r for r in data["items"] if r.get("conflict")]
    assert data["status"]["line"].startswith("FAIL: 1 diverges, 2 known, ")
    assert data["status"]["line"].endswith("; merged from 2 reports")

    # explain takes the ids the reports show, from the user's directories
    explained = command(project, "explain", EXP64, "--engine", "myengine")
    assert explained.returncode == 1, explained.stdout + explained.stderr
    assert explained.stdout.startswith(f"{EXP64}: torch ")
    assert f"rerun: {reruns[project]}" in explained.stdout
    explained = command(project / "mycases", "explain", "mycases/my_exp.yaml::cpu-float32",
                        "--engine", "myengine")
    assert explained.returncode == 1, explained.stdout + explained.stderr
    assert explained.stdout.startswith("mycases/my_exp.yaml::cpu-float32: torch ")
    assert "rerun: pytest my_exp.yaml::cpu-float32 --engine myengine" in explained.stdout

    # recordings made in the clone and from the user's project compare item for item
    inside = command(ROOT, "record", *LIBRARY, "--out", str(tmp_path / "inside.json"),
                     "--quiet")
    outside = command(project, "record", *(f"{library}/{f}" for f in LIBRARY),
                      "--out", "../outside.json", "--quiet")
    assert inside.returncode == outside.returncode == 0, inside.stderr + outside.stderr
    diff = command(project, "diff", str(tmp_path / "inside.json"), "../outside.json")
    assert diff.returncode == 0, diff.stdout + diff.stderr
    library_ids = {i for i in ids if i.startswith("cases/") and "::cuda" not in i}
    assert f"no drift: {len(library_ids)} items" in diff.stdout
    recorded = json.loads((tmp_path / "outside.json").read_text())
    assert set(recorded["items"]) == library_ids
    assert recorded["header"]["git_revision"] == clone_revision()


def test_a_baseline_written_in_a_user_project_names_the_same_ids(tmp_path: Path) -> None:
    project = user_project(tmp_path)
    (project / "expectations" / "myengine.yaml").unlink()
    library = os.path.relpath(ROOT, project)
    cases = ["mycases", f"{library}/{LIBRARY[0]}"]
    run = ["--engine", "myengine", "--no-generated", "--workers", "1"]
    written = command(project, "run", *cases, *run, "--report-dir", "../rd",
                      "--write-expectations", "baseline.yaml")
    assert written.returncode == 1, written.stdout + written.stderr
    baseline = (project / "baseline.yaml").read_text()
    for item in ("mycases/my_exp.yaml::cpu-float32", "cases/ops/exp_saves_result.yaml::cpu-"):
        assert f'items: "{item}' in baseline
    # from another directory, another report directory: the same ids, all known now
    again = command(project / "mycases", "run", ".", f"../{cases[1]}", *run,
                    "--report-dir", "../../rd2", "--expectations", "../baseline.yaml")
    assert again.returncode == 0, again.stdout + again.stderr
    verdicts = [r["verdict"] for r in report(tmp_path / "rd2")["items"]]
    assert verdicts.count("known") == 3 and "diverges" not in verdicts


def test_rebaselining_twice_in_a_user_project_keeps_what_the_user_wrote(tmp_path: Path
                                                                       ) -> None:
    """The README's own example: --write-expectations names the file in use, twice. The
    hand-written entries, reasons and comment stay byte for byte; the one new divergence is
    added once (the second run finds it listed); nothing is written over silently."""
    project = user_project(tmp_path)
    library = os.path.relpath(ROOT, project)
    cases = ["mycases", f"{library}/{LIBRARY[0]}"]
    in_use = "expectations/myengine.yaml"
    run = ["--engine", "myengine", "--no-generated", "--workers", "1",
           "--write-expectations", in_use]

    first = command(project, "run", *cases, *run, "--report-dir", "../rd1")
    assert first.returncode == 1, first.stdout + first.stderr  # EXP64 diverged, unlisted
    once = (project / in_use).read_text()
    assert once.startswith(EXPECTATIONS), once  # what the user wrote, unchanged and first
    assert once.count(f'"{EXP64}"') == 1, once
    assert f"merged this run into {in_use}" in first.stdout + first.stderr
    assert "added 1" in first.stdout + first.stderr

    # from another directory, the same file in use: everything listed now, nothing added
    second = command(project / "mycases", "run", ".", f"../{cases[1]}", *run[:-1],
                     f"../{in_use}", "--expectations", f"../{in_use}",
                     "--report-dir", "../../rd2")
    assert second.returncode == 0, second.stdout + second.stderr
    assert (project / in_use).read_text() == once
    assert "added 0" in second.stdout + second.stderr
    verdicts = [r["verdict"] for r in report(tmp_path / "rd2")["items"]]
    assert "diverges" not in verdicts and verdicts.count("known") == 3, verdicts
