"""An expectations file given by path is read from that path, whatever the working
directory (a run of the installed package from outside the project once failed here)."""

from __future__ import annotations

import pytest

# pytester's in-process runs drop the modules they imported; torch must be imported once.
import torch  # noqa: F401

from tests.conformance.test_expectations import CASE, WRONG_EXP


def test_expectations_by_path_from_another_directory(pytester: pytest.Pytester,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    project = pytester.path / "project"
    (project / "cases" / "f").mkdir(parents=True)
    (project / "cases" / "f" / "exp.yaml").write_text(CASE)
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")  # the rootdir
    (project / "known.yaml").write_text(
        'known:\n  - items: "cases/f/exp.yaml::*"\n    reason: exp is off\n')
    elsewhere = pytester.path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = pytester.runpytest(str(project / "cases"), "--engine", WRONG_EXP,
                                "--expectations", str(project / "known.yaml"), "-rx")
    result.assert_outcomes(xfailed=2)
    # entries are still named relative to the project
    assert "known divergence (known.yaml:2): exp is off" in result.stdout.str()
