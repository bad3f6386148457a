"""Known divergences: the expectations file, its errors, and how runs honour it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# pytester's in-process runs drop the modules they imported; torch must be imported once.
import torch  # noqa: F401

from conformance import expectations
from conformance.diagnostics import CaseError

CASE = """\
description: exp and its grad
features: [ops]
source: test
devices: [cpu]
dtypes: [float32, float64]
program: |
  a = torch.tensor([1.0, 2.0], requires_grad=True)
  b = torch.exp(a)
  b.sum().backward()
"""
PASSING = CASE.replace("torch.exp(a)", "a * 2")
WRONG_EXP = "tests.conformance.engine_wrong_exp"


def write(tmp: Path, text: str) -> Path:
    path = tmp / "known.yaml"
    path.write_text(text)
    return path


def test_entries_and_conditions(tmp_path: Path) -> None:
    known = expectations.load(write(tmp_path, """\
known:
  - items: "cases/a/*.yaml::*"
    dtypes: [float64]
    torch: ">=2.0,<3"
    reason: float64 only
  - generated: {field: "*.signed_zero"}
    reason: zeros
"""))
    assert known.for_item("cases/a/x.yaml::cpu-float64", "cpu", "float64", "2.13.0+cpu")
    assert known.for_item("cases/a/x.yaml::cpu-float32", "cpu", "float32", "2.13.0") is None
    assert known.for_item("cases/a/x.yaml::cpu-float64", "cpu", "float64", "3.1.0") is None
    assert known.for_item("cases/b/x.yaml::cpu-float64", "cpu", "float64", "2.13.0") is None
    entry = known.for_generated("y1.signed_zero", "y1 = x0.relu()", "cpu", "float32", "2.13.0")
    assert entry is not None and entry.line == 6
    assert known.for_generated("y1.values", "y1 = x0.relu()", "cpu", "float32", "2.13.0") \
        is None


@pytest.mark.parametrize(("text", "line", "message"), [
    ("known:\n  - items: 'x'\n", 2, "needs a `reason`"),
    ("known:\n  - items: 'x'\n    reason: r\n    colour: red\n", 4, "unknown key `colour`"),
    ("known:\n  - reason: r\n", 2, "either `items` or `generated`"),
    ("known:\n  - items: x\n    reason: r\n    torch: 'two'\n", 4, "invalid version range"),
    ("known:\n  - items: x\n    reason: r\n    devices: [tpu]\n", 4, "unknown device `tpu`"),
    ("others: []\n", 1, "single key `known`"),
])
def test_malformed_files_name_the_line(tmp_path: Path, text: str, line: int,
                                       message: str) -> None:
    with pytest.raises(CaseError) as info:
        expectations.load(write(tmp_path, text))
    assert info.value.line == line and message in info.value.message


def project(pytester: pytest.Pytester, cases: dict[str, str], known: str) -> None:
    for name, text in cases.items():
        path = pytester.path / "cases" / "f" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (pytester.path / "known.yaml").write_text(known)


def test_listed_divergence_is_known_and_stale_entries_are_reported(
        pytester: pytest.Pytester) -> None:
    project(pytester, {"exp.yaml": CASE, "double.yaml": PASSING}, """\
known:
  - items: "cases/f/exp.yaml::*-float32"
    reason: exp is off in float32
  - items: "cases/f/gone.yaml::*"
    reason: fixed long ago
""")
    result = pytester.runpytest("cases", "--engine", WRONG_EXP, "--expectations", "known.yaml",
                                "--conformance-report", "out", "--strict-expectations", "-rx")
    # float32 is listed (xfail, verdict known); float64 is not (a real failure)
    result.assert_outcomes(passed=2, failed=1, xfailed=1)
    out = result.stdout.str()
    assert "known divergence (known.yaml:2): exp is off in float32" in out
    assert "the entry at known.yaml:4 matched nothing" in out
    records = json.loads((pytester.path / "out" / "conformance.json").read_text())
    verdicts = {r["id"]: r["verdict"] for r in records["items"]}
    assert verdicts["cases/f/exp.yaml::cpu-float32"] == "known"
    assert verdicts["cases/f/exp.yaml::cpu-float64"] == "diverges"
    assert records["expectations"]["unmatched"] == [{"line": 4, "reason": "fixed long ago"}]


def test_listed_item_that_passes_fails_so_the_list_cannot_rot(pytester: pytest.Pytester
                                                              ) -> None:
    project(pytester, {"double.yaml": PASSING}, """\
known:
  - items: "cases/f/double.yaml::cpu-float32"
    reason: was broken
""")
    result = pytester.runpytest("cases", "--engine", WRONG_EXP, "--expectations", "known.yaml")
    result.assert_outcomes(passed=1, failed=1)
    assert "listed as a known divergence at known.yaml:2, but it passes now" in \
        result.stdout.str()


def test_strict_expectations_fail_the_run_on_a_stale_entry(pytester: pytest.Pytester) -> None:
    project(pytester, {"double.yaml": PASSING}, """\
known:
  - items: "cases/f/other.yaml::*"
    reason: stale
""")
    relaxed = pytester.runpytest("cases", "--expectations", "known.yaml")
    assert relaxed.ret == 0
    strict = pytester.runpytest("cases", "--expectations", "known.yaml", "--strict-expectations")
    assert strict.ret == 1
