"""The generated-program check as a fixture-free hypothesis test, for fuzzing runners.

The plugin's generated-program test (conformance/generated_suite.py) is a plain `@given`
test, but it takes its engine, hit log and options from session fixtures; a runner that
drives hypothesis tests outside pytest's fixtures (HypoFuzz collects only tests that request
none) passes it over. This one takes nothing but the program: the engine under test is
named by $AUTOGRAD_CONFORMANCE_ENGINE (default: reference_engine), imported once, from the
working directory too; known divergences (expectations files) are not consulted.

    AUTOGRAD_CONFORMANCE_ENGINE=my_engine hypothesis fuzz -- --pyargs conformance.fuzz_target

It uses the example database of the settings loaded (with the plugin, --hypothesis-db).
A database keeps each test's examples apart: what a fuzzer saves for this test replays when
this test runs (`pytest --pyargs conformance.fuzz_target --hypothesis-db DB`), not in the
plugin's generated-program test.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from hypothesis import given

from conformance.engines import DEFAULT_ENGINE, Engine, load_engine
from conformance.generated import HitRates
from conformance.generated_suite import check_generated
from conformance.program import Program
from conformance.runner import torch_engine
from conformance.strategies import programs

ENV_VAR = "AUTOGRAD_CONFORMANCE_ENGINE"


@functools.cache
def engines(name: str) -> tuple[Engine, Engine]:
    """The engine under test and torch, imported once per process."""
    return load_engine(name, Path.cwd()), torch_engine()


@given(program=programs())
def test_fuzz_generated_programs(program: Program) -> None:
    engine, torch = engines(os.environ.get(ENV_VAR, DEFAULT_ENGINE))
    check_generated(program, engine, torch, HitRates(), None)
