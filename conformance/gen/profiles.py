"""Hypothesis profiles for generated programs, and how one is chosen.

- `default`: what `autograd-conformance run` uses: enough programs to meet the hit-rate floors
  with a margin, in seconds. Derandomized, so that the command's verdict is reproducible;
  `dev` and `nightly` explore new programs on every run.
- `dev`: quick local iterations.
- `ci`: derived from hypothesis' own `ci` profile (derandomized, no deadline, no database,
  print_blob); what the README's test command (`pytest -n auto`) uses.
- `nightly`: thousands of programs.

Choose with `--hypothesis-profile NAME` or the environment variable
AUTOGRAD_CONFORMANCE_PROFILE; without either, tests run under `ci`.

`default` and `ci` have no example database of their own. With `--hypothesis-db`
(conformance.gen.campaign) the loaded profile gets one: hypothesis then replays the failures saved
there before drawing its programs (derandomized profiles draw the same programs as without
it), and saves the failures it finds.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis.database import ExampleDatabase
from hypothesis.errors import InvalidArgument

ENV_VAR = "AUTOGRAD_CONFORMANCE_PROFILE"
FALLBACK = "ci"
# Generated programs are built from many small draws and run two engines each: the checks
# for slow or large data say nothing about them.
_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
# How much shrinking one failure gets, per profile. The bound is a count of successful shrinks
# (hypothesis' internal MAX_SHRINKS, 500 by default), so a shrunk program does not depend on
# the machine's load. Hypothesis also stops shrinking after MAX_SHRINKING_SECONDS (300 s):
# `ci`, the profile tests run under, lifts that wall-time bound, so a test's result never
# depends on speed; the other profiles keep it as a guard for a command run by hand.
SHRINKS = {"default": 500, "dev": 100, "ci": 500, "nightly": 2000}
SHRINK_SECONDS: dict[str, float] = {"default": 60, "dev": 30, "ci": float("inf"),
                                    "nightly": 300}

# Hypothesis stops at the first failure (then shrinks it). By default it goes on drawing for
# up to 10 s of wall time after a first failure, looking for others, and shrinks the
# smallest it met: what a run reports, and how many programs it ran, then depended on the
# machine's speed, and a printed rerun did not replay the run exactly. A run reports one
# failure of the generated-program test anyway (conformance.report.generated). Hence
# report_multiple_bugs=False in every profile below.

try:
    _HYPOTHESIS_CI = settings.get_profile("ci")
except InvalidArgument:  # an older hypothesis without the built-in profile
    _HYPOTHESIS_CI = settings(derandomize=True, deadline=None, database=None, print_blob=True)

# The random profiles first: a profile registered without a parent inherits from the settings
# loaded, and registering `default` below replaces the loaded profile when it is hypothesis'
# own `default` (hypothesis re-applies a profile registered under the loaded name), so `dev`
# and `nightly` registered after it drew the same programs on every run. derandomize=False
# is explicit too: on a CI machine hypothesis starts with its derandomized `ci` loaded.
settings.register_profile("dev", max_examples=40, deadline=None, derandomize=False,
                          suppress_health_check=_SUPPRESS, report_multiple_bugs=False)
settings.register_profile("nightly", max_examples=5000, deadline=None, derandomize=False,
                          suppress_health_check=_SUPPRESS, report_multiple_bugs=False)
settings.register_profile("default", max_examples=250, deadline=None, derandomize=True,
                          database=None, suppress_health_check=_SUPPRESS,
                          report_multiple_bugs=False)
settings.register_profile("ci", parent=_HYPOTHESIS_CI, max_examples=300, deadline=None,
                          suppress_health_check=_SUPPRESS, report_multiple_bugs=False)
PROFILES = ("default", "dev", "ci", "nightly")


def bound_shrinking(profile: str) -> None:
    """Set hypothesis' shrink bounds for `profile`; only the constants that exist are set."""
    bound_shrinking_to(SHRINKS.get(profile, 500), SHRINK_SECONDS.get(profile, 300))


def bound_shrinking_to(shrinks: int, seconds: float) -> None:
    from hypothesis.internal.conjecture import engine

    if hasattr(engine, "MAX_SHRINKS"):
        engine.MAX_SHRINKS = shrinks
    if hasattr(engine, "MAX_SHRINKING_SECONDS"):
        engine.MAX_SHRINKING_SECONDS = seconds  # type: ignore[assignment]


def choose(explicit: str | None) -> str:
    """The profile to load: the explicit option, else the environment variable, else ci."""
    name = explicit or os.environ.get(ENV_VAR) or FALLBACK
    try:
        settings.get_profile(name)
    except InvalidArgument:
        raise ValueError(f"unknown hypothesis profile {name!r} (from "
                         f"{'--hypothesis-profile' if explicit else ENV_VAR}); choose one of "
                         f"{', '.join(PROFILES)}") from None
    return name


def load(explicit: str | None, database: ExampleDatabase | None = None) -> str:
    """Load the chosen profile (with `database`, a copy of it that uses that example
    database); return the chosen profile's name."""
    name = choose(explicit)
    if database is None:
        settings.load_profile(name)
    else:
        # a profile of its own, as hypothesis' plugin names its derived ones, so that the
        # named profile stays as registered for later sessions of the same process.
        # derandomize is inherited, not passed: hypothesis refuses a database beside an
        # explicit derandomize=True, but the engine does use one that a profile inherits
        # it with (the reuse phase replays saved failures, then the derandomized draws).
        derived = f"{name}-with-database"
        settings.register_profile(derived, parent=settings.get_profile(name),
                                  database=database)
        settings.load_profile(derived)
    bound_shrinking(name)
    untrace_failures()
    return name


def untrace_failures() -> None:
    """Turn off hypothesis' line tracing after a failure. On Python 3.11 and earlier, from a
    test's first failure on, hypothesis runs every later example (each shrink, each of its
    explain phase's experiments) under sys.settrace, to print which lines only failing
    examples ran; that made the shrinking of a failing generated program about 2.7 times
    slower (benchmarks/README.md), and the report replaces hypothesis' printout. Tracing only
    watches: the examples run, and so the shrunk program, are the same without it.
    Hypothesis supports replacing `_should_trace` (its comment there); it also decides
    whether to trace for hypothesis' observability, which this project does not use. Done
    when a profile of this project is loaded (a conformance run), not on import: the plugin
    is imported by every pytest run of the environment."""
    from hypothesis import core

    state = getattr(core, "StateForActualGivenExecution", None)
    if state is not None and hasattr(state, "_should_trace"):
        state._should_trace = _never


def _never(self: object) -> bool:
    return False
