"""A generated program's failure reads like a case item's, in the terminal (short), in
summary.md and in index.html: the shrunk program, the first divergent statement and field
with both values, the ready YAML case, and a rerun command that, pasted in the directory the
run was started from, replays the same programs (profile, shard, database, seed)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conformance.case.language import parse
from conformance.gen.program_check import check, hits
from conformance.generated_suite import GeneratedLimit, check_generated
from conformance.report import generated as generated_report
from conformance.report import records as report_records
from conformance.report.hit_rates import HitRates
from conformance.run.engine import load_engine
from conformance.run.runner import DIVERGES, ERROR, torch_engine
from tests.conformance.wrong_engines import WRONG_EXP

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "conformance" / "report" / "schema" / "conformance.schema.json")
                    .read_text())
GENERATED_ID = "conformance/generated_suite.py::test_generated_programs_agree_with_torch"
# An engine every generated program meets the fault of: its leaves' version counters are
# off by one (an in-place add of 0 before requires_grad_). A fault in a field other than
# values, so that each failing program hypothesis tries while shrinking is checked in 4
# runs, not 8 (a values divergence also runs torch's float64 twin, twice: gen/program_check.py):
# the same 103 programs and shrunk program as with values off by 0.5, in 63 s of CPU
# against 104 (benchmarks/README.md, h35speedA).
WRONG_LEAVES = '''\
from typing import Any

import torch


def tensor(*args: Any, **kwargs: Any) -> Any:
    out = torch.tensor(*args, **kwargs).detach().add_(0)
    return out.requires_grad_(bool(kwargs.get("requires_grad", False)))


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
'''
# A random profile without an example database: only the seed hypothesis drew replays it.
# Its shrinking has no wall-time bound (as `ci`'s), so that what it shrinks to does not
# depend on the machine's load.
RANDOM_NO_DATABASE = """\
from hypothesis import settings

import conformance.gen.profiles

settings.register_profile("random-no-db", parent=settings.get_profile("dev"), database=None)
conformance.gen.profiles.SHRINK_SECONDS["random-no-db"] = float("inf")
"""


def test_a_divergence_carries_the_fields_of_a_case_failure() -> None:
    checked = check(parse("a = torch.tensor([1.0, 2.0])\nb = torch.exp(a)\n"), WRONG_EXP,
                    torch_engine())
    headline, details, fields = generated_report.divergence(checked, "wrong-exp",
                                                            "case: text", "found/x.yaml")
    assert headline == "wrong-exp diverges from torch on a generated program"
    assert details[:3] == ["  at line 2 `b = torch.exp(a)`",
                           "  field `b.values`: torch has [2.7182817 7.389056 ], engine has "
                           "[2.7454646 7.462947 ]",
                           "  program (shrunk, up to the divergent statement):"]
    assert details[3:] == ["       1  a = torch.tensor([1.0, 2.0])",
                           "       2  b = torch.exp(a)",
                           "  as a YAML case (saved to found/x.yaml):", "    case: text"]
    d = fields["divergence"]
    assert (d["line"], d["statement"], d["field"]) == (2, "b = torch.exp(a)", "b.values")
    assert d["torch"] == pytest.approx([2.7182817, 7.389056])
    assert d["engine"] == pytest.approx([2.7454646, 7.462947])
    assert fields["program"] == "a = torch.tensor([1.0, 2.0])\nb = torch.exp(a)\n"
    assert (fields["case_yaml"], fields["saved_case"]) == ("case: text", "found/x.yaml")
    record = report_records.generated_record(GENERATED_ID, "wrong-exp", "failed", "text",
                                     verdict=DIVERGES, fields=fields, repro="pytest ...")
    jsonschema.validate(record, {**SCHEMA["$defs"]["item"], "$defs": SCHEMA["$defs"]})


def test_a_generated_program_is_compared_with_the_engines_masks() -> None:
    """A difference in a field the engine masks (engine_wrong_exp: `m.values`) is noted as
    masked, not a divergence, as for case items; the same difference elsewhere diverges."""
    engine = load_engine("tests.conformance.engine_wrong_exp")
    masked = check(parse("a = torch.tensor([1.0, 2.0])\nm = torch.exp(a)\n"), engine,
                   torch_engine())
    assert masked.comparison.divergence is None
    assert masked.comparison.mask == engine.masks[0]
    assert "masked:engine" in hits(masked) and "masked:signed_zero" not in hits(masked)
    unmasked = check(parse("a = torch.tensor([1.0, 2.0])\nb = torch.exp(a)\n"), engine,
                     torch_engine())
    assert unmasked.comparison.divergence is not None
    assert unmasked.comparison.divergence.field == "b.values"


def test_a_generated_program_stopped_by_a_limit_is_an_error_with_its_program() -> None:
    hangs = load_engine("tests.conformance.engine_hangs")
    with pytest.raises(GeneratedLimit) as info:
        check_generated(parse("a = torch.rand(3)\nb = torch.exp(a)"), hangs,
                        torch_engine(), HitRates(), None, item_timeout=1.0)
    assert info.value.verdict == ERROR
    assert info.value.fields["program"] == "a = torch.rand(3)\nb = torch.exp(a)\n"
    assert info.value.fields["reason"].startswith(
        "a generated program was stopped at statement 2 (statements numbered in order): ")
    assert "  program:\n    a = torch.rand(3)\n    b = torch.exp(a)" in str(info.value)


class _Config:
    def __init__(self, **options: Any) -> None:
        self.options = {"--engine": "my_engine", "--hypothesis-db": None, "--shard": None,
                        "hypothesis_seed": None, "--expectations": None,
                        "--item-timeout": 60.0, **options}

    def getoption(self, name: str, default: Any = None) -> Any:
        return self.options.get(name, default)


@pytest.mark.parametrize("options, drawn, saves, expected", [
    # derandomized: the same options draw the same programs
    ({}, None, False, "--hypothesis-profile default"),
    ({"--shard": "2/3", "hypothesis_seed": "night-7"}, None, False,
     "--hypothesis-profile default --shard 2/3 --hypothesis-seed night-7"),
    # the campaign's database: the failure was saved there and replays first
    ({"--hypothesis-db": "redis://user:secret@db:6379/0", "--shard": "1/2"}, 123, True,
     "--hypothesis-profile default --hypothesis-db redis://db:6379/0 --shard 1/2"),
    # a random profile's own seed, where no database saved the failure (a shard's K would
    # be hashed with the seed: it only labelled this run)
    ({"--shard": "1/2"}, 123, False, "--hypothesis-profile default --hypothesis-seed 123"),
    ({}, 123, True, "--hypothesis-profile default"),
    ({"--expectations": "my expectations.yaml", "--item-timeout": 5.0}, None, False,
     "--hypothesis-profile default --expectations 'my expectations.yaml' --item-timeout 5"),
])
def test_the_repro_names_what_replays_the_run(options: dict[str, Any], drawn: int | None,
                                              saves: bool, expected: str) -> None:
    config: Any = _Config(**options)
    assert generated_report.repro(config, "default", drawn, saves) == (
        "pytest --generated-programs -k generated_suite --engine my_engine " + expected)


# ---- end to end, in a user's directory ----------------------------------------------------

def pytest_run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTEST_") and k != "AUTOGRAD_CONFORMANCE_PROFILE"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, check=False)


def rerun(cwd: Path, command: str, *more: str) -> subprocess.CompletedProcess[str]:
    """The printed command as a user pastes it, with `more` arguments."""
    words = shlex.split(command)
    assert words[0] == "pytest"
    return pytest_run(cwd, *words[1:], *more)


def generated(directory: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    data: dict[str, Any] = json.loads((directory / "conformance.json").read_text())
    jsonschema.validate(data, SCHEMA)
    [record] = [r for r in data["items"] if r["id"] == GENERATED_ID]
    return data, record


def failure_section(output: str) -> list[str]:
    """The lines pytest prints for the generated item's failure, under its header."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if re.match(r"^_+ test_generated_programs_agree_with_torch _+$", line))
    end = next(i for i in range(start + 1, len(lines)) if re.match(r"^(=|-|_){5,}", lines[i]))
    return lines[start + 1:end]


def test_a_divergence_reads_like_a_case_failure_everywhere_and_its_rerun_replays_it(
        tmp_path: Path) -> None:
    (tmp_path / "wrong_leaves.py").write_text(WRONG_LEAVES)
    # `ci`: derandomized, and its shrinking has no wall-time bound, so that the replay
    # shrinks as far as the run did on a loaded machine too
    result = pytest_run(tmp_path, "--generated-programs", "--engine", "wrong_leaves",
                        "--hypothesis-profile", "ci", "--shard", "2/3",
                        "--conformance-report", "out", "--save-divergences", "found")
    assert result.returncode == 1, result.stdout + result.stderr
    data, record = generated(tmp_path / "out")
    found = (tmp_path / "found" / "divergence-wrong_leaves.yaml").read_text()
    # the record: a case failure's fields, and the YAML case
    assert record["verdict"] == "diverges"
    d = record["divergence"]
    assert d["field"] and d["torch"] != d["engine"]
    program = record["program"].splitlines()
    assert d["statement"] == program[d["line"] - 1].strip() and len(program) == d["line"]
    assert record["case_yaml"] == found
    assert record["saved_case"] == "found/divergence-wrong_leaves.yaml"
    assert record["repro"] == ("pytest --generated-programs -k generated_suite --engine "
                               "wrong_leaves --hypothesis-profile ci --shard 2/3")
    # the terminal: the report, short; no traceback, fixtures' reprs or IR
    section = failure_section(result.stdout)
    text = "\n".join(section)
    assert record["report"] in text
    assert record["report"].splitlines()[:3] == [
        f"{GENERATED_ID}: wrong_leaves diverges from torch on a generated program",
        f"  at line {d['line']} `{d['statement']}`",
        f"  field `{d['field']}`: " + text.split(f"field `{d['field']}`: ")[1].split("\n")[0]]
    assert f"  rerun: {record['repro']}" in section
    assert "  as a YAML case (saved to found/divergence-wrong_leaves.yaml):" in section
    assert len(section) <= 10 + len(program) + len(found.splitlines())
    for noise in ("def check_generated", "Counter(", "Program(body", "Falsifying",
                  "conformance_engine ="):
        assert noise not in result.stdout, noise
    # one line of hit rates, not the table
    assert re.search(r"^\d+ generated programs: \d+ hit rates, the lowest .*\(the table: "
                     r"--hit-rates", result.stdout, re.M)
    assert "-- api" not in result.stdout
    # summary.md: the same report, whole
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert f"```\n{record['report']}\n```" in summary
    assert "<details>\n<summary>" in summary and "\n-- api\n" in summary
    # the rerun, pasted in the same directory, replays the same programs to the same failure
    again = rerun(tmp_path, record["repro"], "--conformance-report", "again", "--hit-rates")
    assert again.returncode == 1, again.stdout + again.stderr
    replayed, same = generated(tmp_path / "again")
    for key in ("program", "divergence", "case_yaml", "repro"):
        assert same[key] == record[key], key
    assert replayed["generated"] == data["generated"]  # program for program
    assert "-- api" in again.stdout  # --hit-rates: the table


def test_a_random_profiles_failure_replays_from_the_seed_it_drew(tmp_path: Path) -> None:
    (tmp_path / "wrong_leaves.py").write_text(WRONG_LEAVES)
    (tmp_path / "conftest.py").write_text(RANDOM_NO_DATABASE)
    result = pytest_run(tmp_path, "--generated-programs", "--engine", "wrong_leaves",
                        "--hypothesis-profile", "random-no-db", "--shard", "1/2",
                        "--conformance-report", "out")
    assert result.returncode == 1, result.stdout + result.stderr
    data, record = generated(tmp_path / "out")
    seed = re.fullmatch(r"pytest --generated-programs -k generated_suite --engine wrong_leaves "
                        r"--hypothesis-profile random-no-db --hypothesis-seed (\d+)",
                        record["repro"])
    assert seed, record["repro"]
    # --tb=long: pytest's own traceback, hypothesis' notes and all; the record the same
    again = rerun(tmp_path, record["repro"], "--conformance-report", "again", "--tb=long")
    assert again.returncode == 1, again.stdout + again.stderr
    assert "def test_generated_programs_agree_with_torch" in again.stdout
    replayed, same = generated(tmp_path / "again")
    for key in ("program", "divergence", "case_yaml", "repro"):
        assert same[key] == record[key], key
    assert replayed["generated"] == data["generated"]


def test_a_message_text_alone_diverges_as_for_a_case_item(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A generated program is decided by the one decision of case items (run/decision.py):
    a message text alone that differs diverges (reported as the message divergence, as a
    case item's record carries it), and passes with --lenient-messages."""
    from dataclasses import replace

    from conformance import generated_suite
    from conformance.gen.program_check import Checked
    from conformance.run.compare import Comparison, Divergence

    engine = load_engine("torch")
    source = "a = torch.tensor([1.0, 2.0])\nb = torch.exp(a)\n"
    agrees = check(parse(source), engine, torch_engine())
    assert not agrees.diverges
    text = Divergence(1, 2, "warnings.text", ["torch's"], ["the engine's"], strict=True)
    # the comparison the check found, but for one warning's text (as compare gives it)
    only_text = replace(agrees, source=source, comparison=Comparison(None, text))

    def checked(*_: Any, **__: Any) -> Checked:
        return only_text

    monkeypatch.setattr(generated_suite, "_bounded_check", checked)
    monkeypatch.setattr(generated_suite, "current_build_context",
                        lambda: type("Context", (), {"is_final": False})())
    assert only_text.diverges and only_text.verdict(strict_messages=False) == "pass"
    log = HitRates()
    generated_suite.check_generated(parse(source), engine, torch_engine(), log, None,
                                    strict_messages=False)  # lenient: a pass
    with pytest.raises(generated_suite.GeneratedDivergence) as info:
        generated_suite.check_generated(parse(source), engine, torch_engine(), log, None)
    fields = info.value.fields
    assert fields["divergence"] is None
    assert (fields["message_divergence"]["field"], fields["message_divergence"]["line"],
            fields["message_divergence"]["statement"]) == ("warnings.text", 2,
                                                           "b = torch.exp(a)")
    record = report_records.generated_record(GENERATED_ID, "torch", "failed", "text",
                                             verdict=DIVERGES, fields=fields, repro="pytest")
    jsonschema.validate(record, {**SCHEMA["$defs"]["item"], "$defs": SCHEMA["$defs"]})
