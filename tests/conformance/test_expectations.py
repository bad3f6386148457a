"""Known divergences: the expectations file, its errors, and how runs honour it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

# pytester's in-process runs drop the modules they imported; torch must be imported once.
import torch  # noqa: F401

from conformance.case.diagnostics import CaseError
from conformance.run import expectations
from conformance.run.decision import Decision, decide

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


def env(torch_version: str = "2.13.0+cpu", python: str = "3.11.9", platform: str = "linux",
        engine_version: str | None = None) -> expectations.Environment:
    return expectations.Environment(torch_version, python, platform, engine_version)


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
    here = known.under(env())
    assert here.for_item("cases/a/x.yaml::cpu-float64", "cpu", "float64")
    assert here.for_item("cases/a/x.yaml::cpu-float32", "cpu", "float32") is None
    assert known.under(env("3.1.0")).for_item("cases/a/x.yaml::cpu-float64", "cpu",
                                              "float64") is None
    assert here.for_item("cases/b/x.yaml::cpu-float64", "cpu", "float64") is None
    entry = here.for_generated("y1.signed_zero", "y1 = x0.relu()", "cpu", "float32")
    assert entry is not None and entry.line == 6
    assert here.for_generated("y1.values", "y1 = x0.relu()", "cpu", "float32") is None


def test_conditions_on_python_platform_and_engine_version(tmp_path: Path) -> None:
    known = expectations.load(write(tmp_path, """\
known:
  - items: "a::*"
    python: ">=3.12"
    reason: new pythons
  - items: "b::*"
    platform: [darwin, win32]
    reason: not linux
  - items: "c::*"
    platform: linux
    engine_version: "<0.4"
    reason: old engines on linux
  - items: "d::*"
    torch: ">=2.14"
    reason: a nightly counts as its release
"""))

    def applies(name: str, environment: expectations.Environment) -> bool:
        return bool(known.under(environment).applying(f"{name}::cpu-float32", "cpu",
                                                      "float32"))

    assert not applies("a", env(python="3.11.9")) and applies("a", env(python="3.12.1"))
    assert not applies("b", env()) and applies("b", env(platform="darwin"))
    assert applies("c", env(engine_version="0.3.1"))
    assert not applies("c", env(engine_version="0.4.0"))
    assert not applies("c", env(engine_version=None))  # an unknown version meets no range
    assert not applies("c", env(engine_version="not a version"))
    assert not applies("c", env(platform="darwin", engine_version="0.3"))
    assert applies("d", env(torch_version="2.14.0.dev20260101+cpu"))


def test_condition_on_the_engines_backend(tmp_path: Path) -> None:
    known = expectations.load(write(tmp_path, """\
known:
  - items: "a::*"
    backend: inductor
    reason: one backend
  - items: "b::*"
    backend: [aot_eager, inductor]
    reason: either
"""))

    def applies(name: str, backend: str | None) -> bool:
        environment = expectations.Environment("2.13.0", "3.11.9", "linux", None, backend)
        return bool(known.under(environment).applying(f"{name}::cpu-float32", "cpu",
                                                      "float32"))

    assert applies("a", "inductor") and not applies("a", "aot_eager")
    assert not applies("a", None)  # an engine without a backend meets no backend condition
    assert applies("b", "aot_eager") and applies("b", "inductor") and not applies("b", "none")


def test_statuses_map_to_verdicts_by_one_rule(tmp_path: Path) -> None:
    known = expectations.load(write(tmp_path, """\
known:
  - items: "diverges::*"
    reason: the default status
  - items: "slow::*"
    status: timeout
    reason: slow
  - items: "flaky::*"
    status: [pass, diverges]
    reason: intermittent
  - items: "broken::*"
    status: [error, timeout]
    reason: errors
"""))

    def judged(name: str, status: str) -> Decision:
        return decide(status, "", known.applying(f"{name}::cpu-float32", "cpu",
                                                              "float32"))

    assert judged("diverges", "diverges").known
    assert judged("diverges", "pass").passes_now is not None
    assert judged("diverges", "masked").passes_now is not None
    unlisted = judged("diverges", "error")  # not what the entry expects: stays an error
    assert not unlisted.known and unlisted.entry is None and unlisted.passes_now is None
    assert judged("slow", "timeout").known and not judged("slow", "error").known
    assert expectations.status_of("error", timed_out=True) == "timeout"
    assert expectations.status_of("error") == "error"
    flaky_pass, flaky_fail = judged("flaky", "pass"), judged("flaky", "diverges")
    assert flaky_pass.entry is not None and not flaky_pass.known  # a pass stays a pass
    assert flaky_pass.passes_now is None
    assert flaky_fail.known
    assert judged("broken", "error").known and judged("broken", "timeout").known
    assert judged("broken", "pass").passes_now is not None
    elsewhere = judged("elsewhere", "diverges")  # no entry applies
    assert elsewhere == Decision("diverges", status="diverges")


def test_a_later_entry_allowing_the_status_applies(tmp_path: Path) -> None:
    # an update appends an entry for an item whose status changed; it must take effect
    # although an earlier entry matches the same item
    known = expectations.load(write(tmp_path, """\
known:
  - items: "x.yaml::*"
    reason: diverges
  - items: "x.yaml::cpu-float32"
    status: error
    reason: errors now
"""))
    decision = decide("error", "", known.applying("x.yaml::cpu-float32", "cpu",
                                                  "float32"))
    assert decision.known and decision.entry is not None and decision.entry.line == 4


def test_entry_spans_end_at_their_last_text(tmp_path: Path) -> None:
    known = expectations.load(write(tmp_path, """\
known:
  # about a
  - items: "a"   # inline
    reason: >-
      long reason

    # a comment after a
  - items: b
    devices:
      - cpu
    reason: |
      kept

  - {items: c, reason: d}
# end
"""))
    assert [(k.line, k.end) for k in known.known] == [(3, 5), (8, 12), (14, 14)]


@pytest.mark.parametrize(("text", "line", "message"), [
    ("known:\n  - items: 'x'\n", 2, "needs a `reason`"),
    ("known:\n  - items: 'x'\n    reason: r\n    colour: red\n", 4, "unknown key `colour`"),
    ("known:\n  - reason: r\n", 2, "either `items` or `generated`"),
    ("known:\n  - items: x\n    reason: r\n    torch: 'two'\n", 4, "invalid version range"),
    ("known:\n  - items: x\n    reason: r\n    devices: [tpu]\n", 4, "unknown device `tpu`"),
    ("others: []\n", 1, "single key `known`"),
    ("known:\n  - items: x\n    reason: r\n    status: broken\n", 4, "unknown status `broken`"),
    ("known:\n  - items: x\n    reason: r\n    status: [pass]\n", 4, "expects nothing"),
    ("known:\n  - items: x\n    reason: r\n    status: []\n", 4, "non-empty list"),
    ("known:\n  - items: x\n    reason: r\n    skip: maybe\n", 4, "true or false"),
    ("known:\n  - items: x\n    reason: r\n    skip: true\n    status: error\n", 5,
     "has no status"),
    ("known:\n  - generated: {field: x}\n    reason: r\n    skip: true\n", 4,
     "for `items` entries"),
    ("known:\n  - items: x\n    reason: r\n    python: 'three'\n", 4,
     "invalid version range for `python`"),
    ("known:\n  - items: x\n    reason: r\n    engine_version: [1]\n", 4,
     "invalid version range for `engine_version`"),
    ("known:\n  - items: x\n    reason: r\n    platform: []\n", 4, "non-empty list"),
    ("known:\n  - items: x\n    reason: r\n    backend: 3\n", 4, "`backend` lists names"),
    ("known: 3\n", 1, "must be a list"),
    # an empty file is not taken as "no known divergences" (red-team N9)
    ("", 1, "holds no YAML document"),
    ("# only a comment\n", 1, "holds no YAML document"),
    # values of the wrong YAML type, which name nothing the run has
    ("known:\n  - items: 5\n    reason: r\n", 2, "`items` must be a non-empty string"),
    ("known:\n  - items: ''\n    reason: r\n", 2, "`items` must be a non-empty string"),
    ("known:\n  - items: x\n    reason: r\n    platform: [linux, 5]\n", 4,
     "`platform` lists names"),
    ("known:\n  - generated: {field: 5}\n    reason: r\n", 2,
     "`generated.field` must be a non-empty string"),
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
    reason: outside this run
  - items: "cases/f/double.yaml::*-float64"
    reason: fixed since
""")
    result = pytester.runpytest("cases", "--engine", WRONG_EXP, "--expectations", "known.yaml",
                                "--conformance-report", "out", "-rx")
    # float32 is listed (xfail, verdict known); float64 is not (a real failure); double's
    # float64 item is listed but passes (it fails, naming the entry)
    result.assert_outcomes(passed=1, failed=2, xfailed=1)
    out = result.stdout.str()
    assert "known divergence (known.yaml:2): exp is off in float32" in out
    assert "listed at known.yaml:6 as diverges, but it passes now" in out
    assert "the entry at known.yaml:6 is stale: the 1 item it lists passes now" in out
    assert "known.yaml:4" not in out  # an entry that applies to no item of the run is silent
    records = json.loads((pytester.path / "out" / "conformance.json").read_text())
    verdicts = {r["id"]: (r["verdict"], r["status"]) for r in records["items"]}
    assert verdicts["cases/f/exp.yaml::cpu-float32"] == ("known", "diverges")
    assert verdicts["cases/f/exp.yaml::cpu-float64"] == ("diverges", "diverges")
    assert verdicts["cases/f/double.yaml::cpu-float64"] == ("pass", "pass")
    assert records["expectations"]["unmatched"] == [{"line": 6, "reason": "fixed since"}]


def test_a_subset_run_says_nothing_of_entries_outside_it(pytester: pytest.Pytester) -> None:
    entries = "".join(f'  - items: "cases/f/other{i}.yaml::*"\n    reason: r{i}\n'
                      for i in range(9))
    project(pytester, {"exp.yaml": CASE, "double.yaml": PASSING},
            'known:\n  - items: "cases/f/exp.yaml::*"\n    reason: exp is off\n' + entries)
    result = pytester.runpytest("cases", "--engine", WRONG_EXP, "--expectations", "known.yaml",
                                "-k", "double", "--strict-expectations")
    result.assert_outcomes(passed=2)
    assert result.ret == 0
    assert "expectations" not in result.stdout.str()


def test_listed_item_that_passes_fails_so_the_list_cannot_rot(pytester: pytest.Pytester
                                                              ) -> None:
    project(pytester, {"double.yaml": PASSING}, """\
known:
  - items: "cases/f/double.yaml::cpu-float32"
    reason: was broken
""")
    result = pytester.runpytest("cases", "--engine", WRONG_EXP, "--expectations", "known.yaml")
    result.assert_outcomes(passed=1, failed=1)
    assert "listed at known.yaml:2 as diverges, but it passes now" in result.stdout.str()


def test_strict_expectations_fail_the_run_on_a_stale_entry(pytester: pytest.Pytester) -> None:
    # the second entry is shadowed by the first: every item it applies to is known by the
    # first, so it is no longer needed although no item fails
    project(pytester, {"exp.yaml": CASE}, """\
known:
  - items: "cases/f/exp.yaml::*"
    reason: exp is off
  - items: "cases/f/exp.yaml::*-float64"
    reason: a duplicate
""")
    args = ("cases", "--engine", WRONG_EXP, "--expectations", "known.yaml")
    relaxed = pytester.runpytest(*args)
    relaxed.assert_outcomes(xfailed=2)
    assert relaxed.ret == 0
    assert "the entry at known.yaml:4 is stale: it expects diverges; its 1 item now: " \
        "1 diverges" in relaxed.stdout.str()
    strict = pytester.runpytest(*args, "--strict-expectations")
    assert strict.ret == 1


def test_expected_statuses_and_skips_in_a_run(pytester: pytest.Pytester) -> None:
    project(pytester, {"exp.yaml": CASE, "double.yaml": PASSING}, """\
known:
  - items: "cases/f/double.yaml::*"
    status: [diverges, pass]
    reason: flaky
  - items: "cases/f/exp.yaml::*-float32"
    status: timeout
    reason: exp hangs, the timer stops it
  - items: "cases/f/exp.yaml::*-float64"
    skip: true
    reason: exp hangs the engine
""")
    result = pytester.runpytest("cases", "--engine", "tests.conformance.engine_hangs",
                                "--expectations", "known.yaml", "--item-timeout", "1",
                                "--conformance-report", "out", "--strict-expectations", "-rsx")
    # double passes (allowed: a pass); exp times out (known) or never runs (skipped)
    result.assert_outcomes(xfailed=1, passed=2, skipped=1)
    assert result.ret == 0
    out = result.stdout.str()
    assert "known timeout (known.yaml:5): exp hangs, the timer stops it [stopped at" in out
    assert "skipped by known.yaml:8: exp hangs the engine" in out
    records = json.loads((pytester.path / "out" / "conformance.json").read_text())
    verdicts = {r["id"]: (r["verdict"], r["status"]) for r in records["items"]}
    assert verdicts == {
        "cases/f/exp.yaml::cpu-float32": ("known", "timeout"),
        "cases/f/exp.yaml::cpu-float64": ("skipped", "skipped"),
        "cases/f/double.yaml::cpu-float32": ("pass", "pass"),
        "cases/f/double.yaml::cpu-float64": ("pass", "pass")}
    assert records["expectations"]["unmatched"] == []


def test_an_empty_file_is_refused_unless_the_run_fills_it(pytester: pytest.Pytester) -> None:
    # red-team N9: an empty file was taken as "nothing known", silently
    project(pytester, {"exp.yaml": CASE}, "# to be written\n")
    refused = pytester.runpytest("cases", "--engine", WRONG_EXP, "--expectations", "known.yaml")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*known.yaml:1: the expectations file holds no YAML "
                                  "document*"])
    filled = pytester.runpytest("cases", "--engine", WRONG_EXP, "--expectations", "known.yaml",
                                "--write-expectations", "known.yaml")
    filled.assert_outcomes(failed=2)
    assert len(expectations.load(pytester.path / "known.yaml").known) == 2


def test_the_engines_backend_is_read_when_a_condition_is_first_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Loading a run's expectations imports nothing: the engine module is imported for its
    # `conformance_backend` only when an item meets an entry's other conditions.
    from conformance.plugin import known as plugin_known

    name = "fake_engine_with_backend"
    (tmp_path / f"{name}.py").write_text('conformance_backend = "inductor"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)

    class Config:
        def getoption(self, option: str) -> str:
            assert option == "--engine"
            return name

    environment = plugin_known._environment(Config(), version=False)  # type: ignore[arg-type]
    known = expectations.load(write(tmp_path, """\
known:
  - items: "a::*"
    backend: inductor
    reason: one backend
  - items: "b::*"
    backend: aot_eager
    reason: the other
""")).under(environment)
    assert not known.applying("c::cpu-float32", "cpu", "float32")
    assert name not in sys.modules
    assert [k.items for k in known.applying("a::cpu-float32", "cpu", "float32")] == ["a::*"]
    assert name in sys.modules
    assert not known.applying("b::cpu-float32", "cpu", "float32")
    monkeypatch.setattr(sys.modules[name], "conformance_backend", None)
    assert not known.applying("a::cpu-float32", "cpu", "float32")  # an engine that says none
    monkeypatch.delitem(sys.modules, name)


def test_an_engine_that_cannot_be_imported_meets_no_backend() -> None:
    assert expectations.declared_backend("no_such_engine_module_anywhere") is None
