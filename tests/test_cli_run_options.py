"""`autograd-conformance run` takes the plugin's `--item-timeout` and `--strict-expectations`
before `--`, lists them in `--help`, and passes them on to pytest; pytest-timeout's `timeout`
in this project's configuration is harmless where pytest-timeout is not installed."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

from tests.test_cli_run import ROOT, project, report, run


def test_run_help_lists_the_options() -> None:
    result = run(ROOT, "run", "--help")
    assert result.returncode == 0
    assert "--item-timeout SECONDS" in result.stdout and "--strict-expectations" in result.stdout
    assert "(default: 60; 0: none)" in " ".join(result.stdout.split())


def test_run_passes_the_item_timeout_on(tmp_path: Path) -> None:
    cwd = project(tmp_path, ("exp", "tanh"))
    shutil.copy(ROOT / "tests" / "conformance" / "engine_hangs.py", cwd / "my_engine.py")
    result = run(cwd, "run", "--engine", "my_engine", "--no-generated", "--workers", "1",
                 "--item-timeout", "1")
    assert result.returncode == 1, result.stdout + result.stderr
    items = {r["id"]: r for r in report(cwd)["items"]}
    assert items["cases/family/exp.yaml::cpu-float32"]["reason"] == (
        "stopped at cases/family/exp.yaml:7 `b = torch.exp(a)` on my_engine: the item "
        "cases/family/exp.yaml::cpu-float32 ran longer than the time limit of 1 s "
        "(--item-timeout)")
    assert items["cases/family/tanh.yaml::cpu-float32"]["verdict"] == "pass"


def test_run_passes_strict_expectations_on(tmp_path: Path) -> None:
    cwd = project(tmp_path, ("tanh",))
    # the first entry allows tanh's pass (intermittent); the second, shadowed by it, is stale
    (cwd / "stale.yaml").write_text(
        'known:\n  - items: "cases/family/tanh.yaml::*"\n    status: [pass, diverges]\n'
        '    reason: flaky\n  - items: "cases/family/tanh.yaml::*"\n    reason: old\n')
    args = ("run", "cases", "--no-generated", "--workers", "1", "--expectations", "stale.yaml")
    lenient = run(cwd, *args)  # a subset: the stale entry is named, the run passes
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    assert "the entry at stale.yaml:5 is stale" in lenient.stdout
    strict = run(cwd, *args, "--strict-expectations")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert report(cwd)["run_info"]["options"]["strict_expectations"] is True


def test_the_timeout_ini_is_known_where_pytest_timeout_is_not_installed(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # this project's pyproject.toml sets `timeout` for pytest-timeout, a dev dependency: a
    # plain install running pytest in the clone must not warn of an unknown option
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None
                        if name == "pytest_timeout" else real(name, *args))
    pytester.makeini("[pytest]\ntimeout = 900\n")
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:timeout", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "Unknown config option" not in result.stdout.str()


def test_readme_synopsis_of_run_names_every_shared_option() -> None:
    """README's `autograd-conformance run ...` synopsis restates the option names that
    conformance/shared_options.py declares once: a new option must be named there too."""
    from conformance import shared_options
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    synopsis = re.search(r"`autograd-conformance run \[CASES\.\.\.\](.*?)`", readme, re.S)
    assert synopsis, "README's synopsis of `run` is gone: update this test with the README"
    named = set(re.findall(r"--[a-z][a-z-]*", synopsis.group(1)))
    assert {o.name for o in shared_options.OPTIONS} <= named


def test_explain_takes_the_engine_option_run_declares(monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    """`explain --engine` is the shared option (its default and help), not a copy: a
    changed default in conformance/shared_options.py is explain's too."""
    import dataclasses

    from conformance import cli, shared_options
    given: list[str] = []
    monkeypatch.setattr(cli, "_explain", lambda args: given.append(args.engine) or 0)
    assert cli.main(["explain", "cases/leaf"]) == 0
    assert given == [shared_options.ENGINE.default]
    monkeypatch.setattr(shared_options, "ENGINE",
                        dataclasses.replace(shared_options.ENGINE, default="other_engine"))
    assert cli.main(["explain", "cases/leaf"]) == 0
    assert given[-1] == "other_engine"
