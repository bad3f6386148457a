"""The generated-program suite: random autograd programs on torch and the engine under test.

`autograd-conformance run` passes this file to pytest; the project's tests import the test
from here, so the README's test command runs it too. Any divergence is shrunk by hypothesis
to a minimal program, reported with its first divergent statement and field, and, with
`--save-divergences DIR`, written there as a ready YAML case.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, note
from hypothesis.control import current_build_context

from conformance.engines import Engine
from conformance.expectations import NONE as NO_EXPECTATIONS
from conformance.expectations import Expectations
from conformance.generated import Checked, HitRates, as_case, check, hits, save_case, truncate
from conformance.language import to_source
from conformance.limits import RunLimit, contained, deadline
from conformance.program import Program
from conformance.progress import Progress
from conformance.strategies import programs, without_local_constants


class GeneratedDivergence(AssertionError):
    def __init__(self, checked: Checked, engine: str) -> None:
        self.checked = checked
        d = checked.comparison.divergence
        assert d is not None
        lines = checked.source.splitlines()
        statement = lines[d.line - 1].strip() if 0 < d.line <= len(lines) else "?"
        super().__init__(
            f"{engine} diverges from torch on a generated program\n"
            f"  at line {d.line}: `{statement}`\n  {d.describe()}\n"
            f"  program:\n" + "\n".join(f"    {line}" for line in lines))


class GeneratedLimit(AssertionError):
    """A generated program ran into a whole-run limit (conformance.limits)."""


def _bounded_check(program: Program, engine: Engine, torch: Engine, item_timeout: float
                   ) -> Checked:
    try:
        with deadline(item_timeout, "a generated program"), contained():
            return check(program, engine, torch)
    except RunLimit as stopped:  # also an engine's own KeyboardInterrupt, SystemExit, ...
        source = to_source(program)
        at = "" if stopped.line is None else \
            f" at statement {stopped.line} (statements numbered in order)"
        raise GeneratedLimit(
            f"a generated program was stopped{at}: {stopped}\n  program:\n"
            + "\n".join(f"    {line}" for line in source.splitlines())) from None


def check_generated(program: Program, engine: Engine, torch: Engine, log: HitRates,
                    save_dir: str | None, known: Expectations = NO_EXPECTATIONS,
                    matched: set[int] | None = None, item_timeout: float = 0.0) -> None:
    """Run one generated program on both engines; raise GeneratedDivergence if they differ
    in a way the expectations file does not list (a listed one is counted, not shrunk).
    `item_timeout` seconds (0: none) bound the program's runs; a whole-run limit raises
    GeneratedLimit with the program."""
    checked = _bounded_check(program, engine, torch, item_timeout)
    found = hits(checked)
    d = checked.comparison.divergence
    if d is not None:
        lines = checked.source.splitlines()
        statement = lines[d.line - 1].strip() if 0 < d.line <= len(lines) else ""
        entry = known.for_generated(d.field, statement, "cpu", "float32")
        if entry is not None:
            found.add("known_divergence")
            if matched is not None:
                matched.add(entry.index)
            log.record(found)
            return
    log.record(found)
    if not checked.diverges:
        return
    # Only the final, shrunk example is reported in full (hypothesis replays it last): cut
    # after the divergent statement, and turned into a case.
    if current_build_context().is_final:
        d = checked.comparison.divergence
        assert d is not None
        checked = check(truncate(checked.program, d.line), engine, torch)
        case = as_case(checked, engine.name, torch)
        note(f"as a YAML case:\n{case}")
        if save_dir:
            path = save_case(case, Path(save_dir),
                             f"divergence-{engine.name.replace('.', '_')}")
            note(f"saved to {path}")
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
        generated_progress: Progress, conformance_item_timeout: float) -> None:
    try:
        check_generated(program, conformance_engine, torch_engine, generated_log,
                        save_divergences, known_divergences, matched_expectations,
                        conformance_item_timeout)
    finally:
        generated_progress.tick(generated_log.programs)
