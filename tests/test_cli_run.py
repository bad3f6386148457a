"""`autograd-conformance run` end to end, as a user starts it: a subprocess in a project
directory outside this repository, with an engine module in that directory."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.case_files import write_cases

ROOT = Path(__file__).resolve().parents[1]
GENERATED_ID = "conformance/generated_suite.py::test_generated_programs_agree_with_torch"


def project(tmp_path: Path, ops: tuple[str, ...], engine: str | None = None) -> Path:
    write_cases(tmp_path, *ops)
    if engine is not None:  # a module in the working directory, named by --engine
        shutil.copy(ROOT / "tests" / "conformance" / f"{engine}.py", tmp_path / "my_engine.py")
    return tmp_path


def run(cwd: Path, *args: str, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith("PYTEST_") and k != "AUTOGRAD_CONFORMANCE_PROFILE"}
    return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd,
                          env=clean | (env or {}), capture_output=True, text=True, check=False)


def report(cwd: Path, directory: str = "reports") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((cwd / directory / "conformance.json").read_text())
    return data


def test_a_crashing_item_is_an_error_and_the_run_goes_on(tmp_path: Path) -> None:
    # exp: os._exit; sin: a segfault; cos: MemoryError; tanh: an ordinary pass
    cwd = project(tmp_path, ("exp", "sin", "cos", "tanh"), engine="engine_killers")
    result = run(cwd, "run", "--engine", "my_engine", "--no-generated", "--workers", "1")
    assert result.returncode == 1, result.stdout + result.stderr
    verdicts = {r["id"]: r for r in report(cwd)["items"]}
    assert sorted(verdicts) == [f"cases/family/{op}.yaml::cpu-float32"
                                for op in ("cos", "exp", "sin", "tanh")]
    for op in ("exp", "sin", "cos"):
        assert verdicts[f"cases/family/{op}.yaml::cpu-float32"]["verdict"] == "error", op
    assert "crashed" in verdicts["cases/family/exp.yaml::cpu-float32"]["reason"]
    assert "crashed" in verdicts["cases/family/sin.yaml::cpu-float32"]["reason"]
    assert "MemoryError" in verdicts["cases/family/cos.yaml::cpu-float32"]["reason"]
    assert verdicts["cases/family/tanh.yaml::cpu-float32"]["verdict"] == "pass"
    assert report(cwd)["run_info"]["engine"] == "my_engine"
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("autograd-conformance: engine my_engine vs torch ")
    assert last.endswith(": FAIL: 3 error, 1 pass of 4 collected; 4 executed; pytest exit "
                         "status 1; report in reports/")
    # the printed rerun command works from the same directory (the engine is found there)
    rerun = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                            "cases/family/tanh.yaml::cpu-float32", "--engine", "my_engine"],
                           cwd=cwd, capture_output=True, text=True, check=False,
                           env={k: v for k, v in os.environ.items()
                                if not k.startswith("PYTEST_")})
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr


def test_a_generated_program_that_kills_its_worker_is_an_error(tmp_path: Path) -> None:
    cwd = project(tmp_path, ("tanh",))
    (cwd / "dies_on_tensor.py").write_text(
        "import os\nimport torch\n\n\ndef tensor(*args, **kwargs):\n    os._exit(5)\n\n\n"
        "def __getattr__(name):\n    return getattr(torch, name)\n")
    # the whole suite but the OpInfo items (each would kill its worker too)
    result = run(cwd, "run", "--engine", "dies_on_tensor", "--workers", "1", "--no-opinfo")
    assert result.returncode == 1, result.stdout + result.stderr
    verdicts = {r["id"]: r for r in report(cwd)["items"]}
    # every item killed its worker; each was replaced and the report has them all
    assert sorted(verdicts) == ["cases/family/tanh.yaml::cpu-float32", GENERATED_ID]
    assert {r["verdict"] for r in verdicts.values()} == {"error"}
    assert "crashed" in verdicts[GENERATED_ID]["reason"]


def test_workers_0_runs_generated_programs_under_the_chosen_profile(tmp_path: Path) -> None:
    cwd = project(tmp_path, ("tanh",))
    # the profile comes from the environment; the seed makes the `dev` profile's draw fixed
    result = run(cwd, "run", "--workers", "0", "--report-dir", "out", "--",
                 "--hypothesis-seed", "3", env={"AUTOGRAD_CONFORMANCE_PROFILE": "dev"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "--workers 0: items always run in a worker process" in result.stderr
    data = report(cwd, "out")
    assert data["run_info"]["hypothesis_profile"] == "dev"
    generated = next(r for r in data["items"] if r["id"] == GENERATED_ID)
    assert generated["verdict"] == "pass"
    assert data["generated"]["programs"] == 40  # dev's max_examples: the profile applied
    assert "DeadlineExceeded" not in result.stdout


def test_run_checks_its_arguments_once_before_pytest_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    monkeypatch.chdir(project(tmp_path, ("tanh",)))
    monkeypatch.delenv("AUTOGRAD_CONFORMANCE_PROFILE", raising=False)
    cases: list[tuple[list[str], str]] = [
        (["--engine", "nonexistent"], "cannot import engine 'nonexistent'"),
        (["-k", "sin"], "pytest's options go after `--`"),
        (["--workers", "-2"], "--workers -2: a number of worker processes"),
        (["no/such/dir"], "no/such/dir: no such case file or directory"),
        (["--devices", "gpu"], "--devices gpu: unknown device gpu; choose from cpu, cuda"),
        (["--shard", "3/2"], "--shard 3/2: K must be between 1 and N"),
        (["--shard", "two"], "--shard 'two': expected K/N"),
        (["--hypothesis-db", "cases/family/tanh.yaml"],
         "--hypothesis-db cases/family/tanh.yaml: not a directory"),
        # without the `redis` package (made unimportable here), and the URL's password hidden
        (["--hypothesis-db", "redis://:secret@localhost:6379/0"],
         "--hypothesis-db redis://localhost:6379/0: a Redis database needs the `redis` "
         "package: pip install 'autograd-conformance[redis]'"),
    ]
    monkeypatch.setitem(sys.modules, "redis", None)
    monkeypatch.setitem(sys.modules, "hypothesis.extra.redis", None)
    for args, message in cases:
        with pytest.raises(SystemExit) as exit_:
            main(["run", *args])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (args, err)
    monkeypatch.setenv("AUTOGRAD_CONFORMANCE_PROFILE", "weekly")
    with pytest.raises(SystemExit):
        main(["run"])
    assert "unknown hypothesis profile 'weekly' (from AUTOGRAD_CONFORMANCE_PROFILE)" in \
        capsys.readouterr().err


def to_closed_pipe(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written (`... | head -0`)
    try:
        return subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=cwd,
                              stdout=write, stderr=subprocess.PIPE, text=True, check=False)
    finally:
        os.close(write)


def test_a_closed_pipe_ends_a_command_quietly(tmp_path: Path) -> None:
    result = to_closed_pipe(project(tmp_path, ("tanh",)), "check", "cases")
    assert result.returncode == 1
    assert result.stderr == ""  # no BrokenPipeError traceback, no "Exception ignored"


def test_a_run_whose_reader_left_still_completes_and_writes_its_report(tmp_path: Path
                                                                       ) -> None:
    cwd = project(tmp_path, ("tanh",))
    result = to_closed_pipe(cwd, "run", "--no-generated", "--workers", "1")
    assert result.returncode == 0
    assert "Error" not in result.stderr
    assert [r["verdict"] for r in report(cwd)["items"]] == ["pass"]


def test_version_names_the_package_torch_and_python(capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    import platform

    import conformance
    from conformance.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == (
        f"autograd-conformance {conformance.__version__} (torch {torch.__version__}, "
        f"Python {platform.python_version()})")


def test_the_final_line_says_only_what_this_run_wrote(tmp_path: Path) -> None:
    from conformance.cli.final_line import final_line
    from conformance.report.directory import ReportOutcome

    written = ReportOutcome(written=True, status="FAIL: 1 diverges", torch_version="2.13.0")
    assert final_line("e", tmp_path, written, 1) == (
        f"autograd-conformance: engine e vs torch 2.13.0: FAIL: 1 diverges; report in "
        f"{tmp_path}/")
    # a report in the directory that this run did not write is never read
    (tmp_path / "conformance.json").write_text(json.dumps({
        "run_info": {"torch_version": "2.13.0"},
        "status": {"outcome": "PASS", "line": "PASS: 1 pass"}}))
    assert final_line("e", tmp_path, None, 4) == (
        f"autograd-conformance: engine e: no report written to {tmp_path}/ "
        "(pytest exit code 4)")
    refused = ReportOutcome(error="another run (pid 7) is writing there", refused=True)
    assert final_line("e", tmp_path, refused, 4) == (
        "autograd-conformance: engine e: REFUSED, no report written: another run (pid 7) is "
        "writing there (pytest exit code 4)")
    failed = ReportOutcome(status="PASS: 1 pass of 1 collected; 1 executed",
                           error="the report could not be written", torch_version="2.13.0")
    assert final_line("e", tmp_path, failed, 3) == (
        "autograd-conformance: engine e vs torch 2.13.0: NOT WRITTEN: 1 pass of 1 collected; "
        "1 executed; the report could not be written (pytest exit code 3)")


def test_the_working_directory_joins_sys_path_only_for_an_engine_found_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.run.engine import load_engine

    monkeypatch.setattr(sys, "path", list(sys.path))
    before = list(sys.path)
    assert load_engine("reference_engine", tmp_path).name == "reference_engine"
    assert sys.path == before  # importable already: nothing added
    (tmp_path / "engine_here_only.py").write_text("from torch import *  # noqa\n")
    monkeypatch.delitem(sys.modules, "engine_here_only", raising=False)
    assert load_engine("engine_here_only", tmp_path).module.__file__ == \
        str(tmp_path / "engine_here_only.py")
    assert sys.path[0] == str(tmp_path.resolve())
    with pytest.raises(ValueError, match="cannot import engine 'engine_missing'"):
        load_engine("engine_missing", tmp_path)
    (tmp_path / "engine_broken.py").write_text("raise RuntimeError('half-installed')\n")
    with pytest.raises(ValueError, match="RuntimeError: half-installed"):
        load_engine("engine_broken", tmp_path)


def _readme() -> str:
    return " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())


def test_run_help_lists_every_option_of_the_readmes_synopsis(
        capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    synopsis = re.search(r"`autograd-conformance run \[CASES\.\.\.\] (.*?) \[-- PYTEST ARGS\]`",
                         _readme())
    assert synopsis is not None
    named = set(re.findall(r"\[(--[a-z-]+)", synopsis[1]))
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    offered = set(re.findall(r"^  (--[a-z-]+)", capsys.readouterr().out, re.M)) - {"--help"}
    assert named == offered


def test_the_readmes_sample_final_line_is_what_a_run_prints(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.cli.final_line import final_line
    from conformance.report import files as report
    from conformance.report.hit_rates import HitRates
    from conformance.report.status_line import RunFacts

    sample = re.search(r"`(autograd-conformance: engine reference_engine vs torch \S+: "
                       r"PASS: .*?; report in reports/)`", _readme())
    assert sample is not None
    passed, skipped, collected = map(int, re.findall(
        r"PASS: (\d+) pass, (\d+) skipped of (\d+) collected", sample[1])[0])
    records = [{"id": f"cases/f/c{n}.yaml::{device}-float32", "file": f"cases/f/c{n}.yaml",
                "device": device, "dtype": "float32", "features": ["ops"], "verdict": verdict}
               for device, verdict, count in (("cpu", "pass", passed),
                                              ("cuda", "skipped", skipped))
               for n in range(count)]
    monkeypatch.chdir(tmp_path)
    report.write(Path("reports"), records, engine="reference_engine", started=0.0,
                 profile="default", generated=HitRates(),
                 run=RunFacts(collected=collected, executed=collected))
    written = report.outcome_of(Path("reports") / "conformance.json")
    line = final_line("reference_engine", Path("reports"), written, 0).replace(
        f"torch {torch.__version__}:", "torch 2.13.0+cpu:")
    assert " ".join(line.split()) == sample[1]
