"""The generated-program suite: random autograd programs on torch and the engine under test.

`autograd-conformance run` passes this file to pytest; the project's tests import the test
from here, so the README's test command runs it too. Any divergence is shrunk by hypothesis
to a minimal program and reported as a case failure is (conformance.report.generated): the
program, its first divergent statement and field with both values, the ready YAML case (with
`--save-divergences DIR`, also written there) and a command that replays it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis.control import current_build_context

from conformance.case.language import to_source
from conformance.case.program import Program
from conformance.gen.divergence_case import as_case, save_case
from conformance.gen.program_check import Checked, check, hits, truncate
from conformance.gen.progress import Progress
from conformance.gen.strategies import programs, without_local_constants
from conformance.report import generated as generated_report
from conformance.report.generated import GeneratedFailure
from conformance.report.hit_rates import HitRates
from conformance.run.decision import decide
from conformance.run.engine import Engine
from conformance.run.expectations import NONE as NO_EXPECTATIONS
from conformance.run.expectations import Expectations
from conformance.run.limits import RunLimit, contained, deadline
from conformance.run.runner import DIVERGES, ERROR


class GeneratedDivergence(GeneratedFailure):
    """The engine diverged from torch on a generated program; the final, shrunk one carries
    its YAML case (`case`) and where it was saved."""

    def __init__(self, checked: Checked, engine: str, case: str | None = None,
                 saved: str | None = None) -> None:
        self.checked = checked
        super().__init__(*generated_report.divergence(checked, engine, case, saved))


class GeneratedLimit(GeneratedFailure):
    """A generated program ran into a whole-run limit (conformance.run.limits)."""

    verdict = ERROR


def _bounded_check(program: Program, engine: Engine, torch: Engine, item_timeout: float,
                   source_lines: bool = True) -> Checked:
    try:
        with deadline(item_timeout, "a generated program"), contained():
            return check(program, engine, torch, source_lines=source_lines)
    except RunLimit as stopped:  # also an engine's own KeyboardInterrupt, SystemExit, ...
        raise GeneratedLimit(*generated_report.limit(to_source(program), stopped.line,
                                                     str(stopped))) from None


def check_generated(program: Program, engine: Engine, torch: Engine, log: HitRates,
                    save_dir: str | None, known: Expectations = NO_EXPECTATIONS,
                    matched: set[int] | None = None, item_timeout: float = 0.0,
                    strict_messages: bool = True) -> None:
    """Run one generated program on both engines; raise GeneratedDivergence if they differ
    in a way the expectations file does not list (a listed one is counted, not shrunk).
    Whether they differ is the one decision's, as for a case item (run/decision.py: a
    message text alone differs unless `strict_messages` is off).
    `item_timeout` seconds (0: none) bound the program's runs; a whole-run limit raises
    GeneratedLimit with the program."""
    # A divergent program's source lines (a print, a parse and its runs again) serve only
    # to match its statement against the expectations' entries that name one: without such
    # entries the shrinker's candidates skip them (the field an entry names is the same
    # either way; the final example is checked again below, with its lines; a candidate's
    # own exception, which no report shows, names no statement then).
    checked = _bounded_check(program, engine, torch, item_timeout, source_lines=any(
        k.statement is not None for k in known.known))
    found = hits(checked)
    diverges = checked.verdict(strict_messages) == DIVERGES
    d = checked.first
    if diverges and d is not None:
        lines = checked.source.splitlines()
        statement = lines[d.line - 1].strip() if 0 < d.line <= len(lines) else ""
        entry = known.for_generated(d.field, statement, "cpu", "float32")
        decision = decide(DIVERGES, "", () if entry is None else (entry,))
        if decision.known and decision.entry is not None:
            found.add("known_divergence")
            if matched is not None:
                matched.add(decision.entry.index)
            log.record(found)
            return
    log.record(found)
    if not diverges:
        return
    # Only the final, shrunk example is reported in full (hypothesis replays it last): cut
    # after the divergent statement, and turned into a case.
    if current_build_context().is_final:
        d = checked.first
        assert d is not None
        checked = check(truncate(checked.program, d.line), engine, torch)
        case = as_case(checked, engine.name, torch)
        saved = None
        if save_dir:
            saved = str(save_case(case, Path(save_dir),
                                  f"divergence-{engine.name.replace('.', '_')}"))
        raise GeneratedDivergence(checked, engine.name, case, saved)
    raise GeneratedDivergence(checked, engine.name)


@pytest.fixture(autouse=True)
def _programs_from_the_generator_alone() -> Iterator[None]:
    """The programs drawn depend on the generator's code and the profile's seed only, not on
    which modules the process imported before (see strategies.without_local_constants):
    `run`, one worker of `pytest -n auto` and a test that imports this suite draw alike."""
    with without_local_constants():
        yield


@given(program=programs())
def test_generated_programs_agree_with_torch(
        program: Program, conformance_engine: Engine, torch_engine: Engine,
        generated_log: HitRates, save_divergences: str | None,
        known_divergences: Expectations, matched_expectations: set[int],
        generated_progress: Progress, conformance_item_timeout: float,
        conformance_strict_messages: bool) -> None:
    try:
        check_generated(program, conformance_engine, torch_engine, generated_log,
                        save_divergences, known_divergences, matched_expectations,
                        conformance_item_timeout, conformance_strict_messages)
    finally:
        generated_progress.tick(generated_log.programs)
