"""The plugin's command-line options: --devices, --engine checked once, --write-expectations,
the default expectations file found from outside the project, --generated-programs."""

from __future__ import annotations

from pathlib import Path

import pytest

# see test_plugin.py: torch's C extension cannot be imported twice in one process
import torch  # noqa: F401

from conformance.gen.progress import Progress
from conformance.run import expectations
from tests.case_files import write_cases

WRONG_EXP = "tests.conformance.engine_wrong_exp"  # exp is 1% off
GENERATED_ID = "conformance/generated_suite.py::test_generated_programs_agree_with_torch"
CASE = """\
description: {op} and its grad
features: [grad_fn]
source: test
dtypes: [float32, float64]
program: |
  a = torch.tensor([1.0, 2.0], requires_grad=True)
  b = torch.{op}(a)
  b.sum().backward()
"""


def make_cases(root: Path, *ops: str) -> None:
    write_cases(root, *ops, template=CASE)


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def test_devices_deselects_the_other_devices(pytester: pytest.Pytester) -> None:
    make_cases(pytester.path, "exp")
    result = pytester.runpytest("cases", "--devices", "cpu", "--collect-only", "-q")
    assert collected(result) == ["cases/family/exp.yaml::cpu-float32",
                                 "cases/family/exp.yaml::cpu-float64"]
    result = pytester.runpytest("cases", "--devices", "cuda", "--collect-only", "-q")
    assert collected(result) == ["cases/family/exp.yaml::cuda-float32",
                                 "cases/family/exp.yaml::cuda-float64"]
    result = pytester.runpytest("cases", "--devices", "tpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--devices tpu: unknown device tpu; choose from cpu, cuda*"])


def test_an_unknown_engine_is_one_usage_error(pytester: pytest.Pytester) -> None:
    make_cases(pytester.path, "exp", "sin", "cos")
    result = pytester.runpytest("cases", "--engine", "no_such_engine")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert err.count("cannot import engine 'no_such_engine'") == 1
    assert "Traceback" not in err + result.stdout.str()


def test_written_expectations_load_and_make_those_failures_known(
        pytester: pytest.Pytester) -> None:
    make_cases(pytester.path, "exp", "sin")
    result = pytester.runpytest("cases", "--engine", WRONG_EXP, "--devices", "cpu",
                                "--write-expectations", "baseline/known.yaml")
    result.assert_outcomes(failed=2, passed=2)
    written = expectations.load(pytester.path / "baseline" / "known.yaml")
    assert sorted(k.items or "" for k in written.known) == [
        "cases/family/exp.yaml::cpu-float32", "cases/family/exp.yaml::cpu-float64"]
    assert all("field `b.values`" in k.reason and "cases/family/exp.yaml:7" in k.reason
               for k in written.known)
    result = pytester.runpytest("cases", "--engine", WRONG_EXP, "--devices", "cpu",
                                "--expectations", "baseline/known.yaml",
                                "--strict-expectations")
    result.assert_outcomes(xfailed=2, passed=2)
    assert result.ret == 0


def test_default_expectations_are_found_when_pytest_starts_elsewhere(
        pytester: pytest.Pytester) -> None:
    project = pytester.path / "project"
    make_cases(project, "exp")
    (project / "pytest.ini").write_text("[pytest]\n")  # its root, as a clone's pyproject.toml
    known = project / "expectations" / f"{WRONG_EXP}.yaml"
    known.parent.mkdir()
    known.write_text('known:\n  - items: "cases/family/exp.yaml::*"\n    reason: 1% off\n')
    elsewhere = pytester.mkdir("elsewhere")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(elsewhere)
        result = pytester.runpytest(str(project / "cases"), "--engine", WRONG_EXP,
                                    "--devices", "cpu", "-rx")
    result.assert_outcomes(xfailed=2)
    result.stdout.fnmatch_lines(["*known divergence (*expectations/" + WRONG_EXP
                                 + ".yaml:2): 1% off*"])


def test_the_generated_suite_has_one_id_wherever_it_is_installed(
        pytester: pytest.Pytester) -> None:
    make_cases(pytester.path, "exp")
    result = pytester.runpytest("cases", "--generated-programs", "--devices", "cpu",
                                "--collect-only", "-q")
    assert collected(result)[-1] == GENERATED_ID
    result = pytester.runpytest("cases", "--generated-programs", "-k", "exp",
                                "--collect-only", "-q")
    assert GENERATED_ID not in collected(result)  # -k applies to it like any item
    result = pytester.runpytest("cases", "--generated-programs", "--devices", "cuda",
                                "--collect-only", "-q")
    assert GENERATED_ID not in collected(result)  # generated programs run on cpu


def test_progress_lines_come_every_n_programs_or_seconds() -> None:
    now = [0.0]
    lines: list[str] = []
    progress = Progress(lines.append, clock=lambda: now[0], every_programs=10,
                        every_seconds=5.0)
    for n in range(1, 26):
        now[0] += 0.1
        progress.tick(n)
    assert lines == ["generated programs: 10 checked in 1 s (10.0/s)",
                     "generated programs: 20 checked in 2 s (10.0/s)"]
    now[0] += 6.0  # slow programs: a line per interval even below the count
    progress.tick(21)
    assert lines[-1] == "generated programs: 21 checked in 8 s (2.5/s)"
