"""The pytest plugin end to end, in throwaway projects (pytester)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# pytester's in-process runs drop the modules they imported when they end; torch's C
# extension cannot be imported twice in one process, so it is imported here, once, first.
import torch  # noqa: F401

GOOD = """\
description: exp and its grad
features: [grad_fn]
source: test
dtypes: [float32, float64]
program: |
  a = torch.tensor([1.0, 2.0], requires_grad=True)
  b = torch.exp(a)
  b.sum().backward()
  assert_close(a.grad, b.detach())
"""

BAD = {
    "bad_yaml.yaml": ("description: x\nfeatures: [leaf\nprogram: |\n  x = 1\n",
                      "bad_yaml.yaml:3: malformed YAML"),
    "unknown_key.yaml": (GOOD + "owner: me\n", "unknown_key.yaml:10: unknown key `owner`"),
    "unknown_feature.yaml": (GOOD.replace("[grad_fn]", "[gradfn]"),
                             "unknown_feature.yaml:2: unknown feature `gradfn`"),
    "syntax.yaml": (GOOD.replace("b.sum().backward()", "b.sum(.backward()"),
                    "syntax.yaml:8: syntax error"),
    "unknown_api.yaml": (GOOD.replace("torch.exp(a)", "torch.expp(a)"),
                         "unknown_api.yaml:7: `torch.expp` is not in the supported API"),
}


def make_cases(pytester: pytest.Pytester, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = pytester.path / "cases" / "family" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_items_ids_and_cuda_skip(pytester: pytest.Pytester) -> None:
    make_cases(pytester, {"exp.yaml": GOOD})
    result = pytester.runpytest("cases", "--engine", "torch", "-rs", "--collect-only", "-q")
    ids = [line for line in result.outlines if "::" in line]
    assert ids == [f"cases/family/exp.yaml::{d}-{t}" for d in ("cpu", "cuda")
                   for t in ("float32", "float64")]
    result = pytester.runpytest("cases", "--engine", "torch", "-rs")
    result.assert_outcomes(passed=2, skipped=2)
    result.stdout.fnmatch_lines(["*cuda is not available to torch on this machine*"])


def test_each_malformed_file_fails_only_its_own_collection(pytester: pytest.Pytester) -> None:
    make_cases(pytester, {"good.yaml": GOOD} | {n: t for n, (t, _) in BAD.items()})
    # a fresh project: without --continue-on-collection-errors (test_plugin_ids.py)
    result = pytester.runpytest("cases", "--engine", "torch")
    result.assert_outcomes(passed=2, skipped=2, errors=len(BAD))
    out = result.stdout.str()
    for _, expected in BAD.values():
        assert f"cases/family/{expected}" in out
    assert "fix:" in out
    assert "Traceback" not in out


def test_divergence_report_names_line_field_values_and_repro(pytester: pytest.Pytester
                                                            ) -> None:
    make_cases(pytester, {"exp.yaml": GOOD.replace("dtypes: [float32, float64]\n",
                                                   "devices: [cpu]\n")})
    result = pytester.runpytest("cases", "--engine", "tests.conformance.engine_wrong_exp")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    for expected in [
        "cases/family/exp.yaml::cpu-float32: tests.conformance.engine_wrong_exp diverges "
        "from torch",
        "at cases/family/exp.yaml:7 `b = torch.exp(a)`",
        "field `b.values`: torch has [2.7182817 7.389056 ], engine has [2.7454646 7.462947 ]",
        "rerun: pytest cases/family/exp.yaml::cpu-float32 --engine "
        "tests.conformance.engine_wrong_exp",
    ]:
        assert expected in out


def test_case_that_torch_breaks_is_not_an_engine_divergence(pytester: pytest.Pytester) -> None:
    make_cases(pytester, {"wrong.yaml": GOOD.replace("b.detach()", "2 * b.detach()")
                          .replace("dtypes: [float32, float64]\n", "devices: [cpu]\n")})
    result = pytester.runpytest("cases", "--engine", "torch")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*case_disagrees_with_torch: torch breaks the case at "
                                 "cases/family/wrong.yaml:9 `assert_close(a.grad, 2 * "
                                 "b.detach())`: case assertion failed: assert_close*"])


def test_report_merges_xdist_workers(pytester: pytest.Pytester) -> None:
    make_cases(pytester, {f"exp{i}.yaml": GOOD for i in range(3)})
    result = pytester.runpytest_subprocess("cases", "--engine", "torch", "-n", "2",
                                           "--conformance-report", "out")
    result.assert_outcomes(passed=6, skipped=6)
    report = json.loads((pytester.path / "out" / "conformance.json").read_text())
    verdicts = sorted(item["verdict"] for item in report["items"])
    assert verdicts == ["pass"] * 6 + ["skipped"] * 6
    assert report["run_info"]["engine"] == "torch"
    summary = (pytester.path / "out" / "summary.md").read_text()
    # cuda ran nothing here: its columns are left out, with a note
    assert "| grad_fn | 3/3 | 3/3 |\n| **total** | 3/3 | 3/3 |\n" in summary


def test_a_crashed_worker_item_is_an_error_in_the_report(pytester: pytest.Pytester,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # the workers are new processes: they import the crashing engine from the project root
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    make_cases(pytester, {"exp.yaml": GOOD.replace("dtypes: [float32, float64]\n",
                                                   "devices: [cpu]\n"),
                          "double.yaml": GOOD.replace("torch.exp(a)", "a * 2")
                          .replace("assert_close(a.grad, b.detach())", "b.sum()")
                          .replace("dtypes: [float32, float64]\n", "devices: [cpu]\n")})
    result = pytester.runpytest_subprocess("cases", "--engine", "tests.conformance.engine_crash",
                                           "-n", "2", "--conformance-report", "out")
    assert result.ret != 0
    report = json.loads((pytester.path / "out" / "conformance.json").read_text())
    verdicts = {item["id"]: item["verdict"] for item in report["items"]}
    assert verdicts["cases/family/exp.yaml::cpu-float32"] == "error"
    assert verdicts["cases/family/double.yaml::cpu-float32"] == "pass"


# ---- what YAML is collected ---------------------------------------------------------------

def _other_project(pytester: pytest.Pytester) -> None:
    """A project sharing the environment, with its own (non-case) YAML under `cases/`."""
    pytester.makepyfile(test_own="def test_own():\n    pass\n")
    for folder in ("cases", "tests/cases"):
        path = pytester.path / folder / "fixture.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("name: not a conformance case\n")


def test_another_projects_yaml_is_not_collected(pytester: pytest.Pytester) -> None:
    _other_project(pytester)
    (pytester.path / "tests" / "test_more.py").write_text("def test_more():\n    pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)
    assert "fixture.yaml" not in result.stdout.str()
    # folders listed in testpaths are not named on the command line
    pytester.makeini("[pytest]\ntestpaths = tests cases\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    assert "fixture.yaml" not in result.stdout.str()


def test_yaml_is_collected_under_the_configured_paths(pytester: pytest.Pytester) -> None:
    _other_project(pytester)
    make_cases(pytester, {"exp.yaml": GOOD})
    pytester.makeini("[pytest]\nconformance_cases = cases/family\n")
    result = pytester.runpytest("--engine", "torch")
    result.assert_outcomes(passed=3, skipped=2)  # test_own and exp.yaml, not fixture.yaml
    assert "fixture.yaml" not in result.stdout.str()


def test_yaml_named_on_the_command_line_is_collected(pytester: pytest.Pytester) -> None:
    _other_project(pytester)
    outside = pytester.path / "elsewhere" / "deeper"
    outside.mkdir(parents=True)
    (outside / "exp.yaml").write_text(GOOD)
    (outside / "broken.yaml").write_text(BAD["unknown_key.yaml"][0])
    # a directory: every YAML under it is a case, however its folders are named
    result = pytester.runpytest("elsewhere", "--engine", "torch",
                                "--continue-on-collection-errors")
    result.assert_outcomes(passed=2, skipped=2, errors=1)
    assert "elsewhere/deeper/broken.yaml:10: unknown key `owner`" in result.stdout.str()
    # a file, and an item of one
    result = pytester.runpytest("elsewhere/deeper/exp.yaml", "--engine", "torch")
    result.assert_outcomes(passed=2, skipped=2)
    result = pytester.runpytest("elsewhere/deeper/exp.yaml::cpu-float64", "--engine", "torch")
    result.assert_outcomes(passed=1)
    # another project's YAML is a (failing) case when named explicitly
    result = pytester.runpytest("cases/fixture.yaml")
    result.assert_outcomes(errors=1)
    assert "cases/fixture.yaml:1: unknown key `name`" in result.stdout.str()


def test_the_conformance_command_collects_cases_outside_cases(pytester: pytest.Pytester
                                                              ) -> None:
    outside = pytester.path / "mine"
    outside.mkdir()
    (outside / "exp.yaml").write_text(GOOD.replace("dtypes: [float32, float64]\n",
                                                   "devices: [cpu]\n"))
    result = pytester.run("autograd-conformance", "run", "mine", "--engine", "torch",
                          "--no-generated", "--report-dir", "out", "--workers", "1")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    report = json.loads((pytester.path / "out" / "conformance.json").read_text())
    assert [(r["id"], r["verdict"]) for r in report["items"]] == [
        ("mine/exp.yaml::cpu-float32", "pass")]


def test_a_broken_case_is_an_error_record_and_fails_the_run(pytester: pytest.Pytester) -> None:
    make_cases(pytester, {"good.yaml": GOOD} | {n: t for n, (t, _) in BAD.items()})
    result = pytester.runpytest("cases", "--engine", "torch", "--conformance-report", "out",
                                "--continue-on-collection-errors")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = json.loads((pytester.path / "out" / "conformance.json").read_text())
    errors = {r["id"]: r for r in report["items"] if r["verdict"] == "error"}
    assert set(errors) == {f"cases/family/{name}" for name in BAD}
    for name, (_, expected) in BAD.items():
        record = errors[f"cases/family/{name}"]
        where, message = expected.split(": ", 1)
        assert record["file"] == f"cases/family/{name}"
        assert record["line"] == int(where.rpartition(":")[2])
        assert record["message"].startswith(message)
        assert f"cases/family/{expected}" in record["reason"]
    summary = (pytester.path / "out" / "summary.md").read_text()
    assert summary.startswith(
        f"**FAIL**: {len(BAD)} error ({len(BAD)} files failed to load), 2 pass, 2 skipped "
        "of 4 collected; 4 executed; pytest exit status 1")
