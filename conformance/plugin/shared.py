"""What the plugin's modules share: the stash keys of a run, the user properties that carry
records from xdist workers to the controller, the generated-program test's id, and the state
of this process's generated-program items."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conformance.report.hit_rates import HitRates

if TYPE_CHECKING:
    from conformance.case import paths
    from conformance.plugin.session import RunState
    from conformance.report import directory as report_dir
    from conformance.run import expectations

RESULT_PROPERTY = "conformance_result"
# ids of case items: path.yaml::device-dtype
CASE_ID = re.compile(r"\.yaml::(cpu|cuda)-float(32|64)$")
HITS_PROPERTY = "conformance_generated_hits"
MATCHED_PROPERTY = "conformance_known_matched"
# The record of a case file that failed to load, carried on its CollectReport (whose extra
# attributes travel from xdist workers to the controller).
LOAD_ERROR_ATTRIBUTE = "conformance_load_error"
# The generated-program test's name (conformance/generated_suite.py); not imported here, as
# importing that module decorates the test with whatever hypothesis profile is loaded then.
GENERATED_TEST = "test_generated_programs_agree_with_torch"
GENERATED_ID = f"conformance/generated_suite.py::{GENERATED_TEST}"

# Hit counts of the generated-program items run in this process (reset per item).
GENERATED_LOG = HitRates()
# The run's stash keys (typed in annotations: the types are imported for type checking only)
EXPECTATIONS: pytest.StashKey[expectations.Expectations] = pytest.StashKey()
PROFILE = pytest.StashKey[str]()
STARTED = pytest.StashKey[float]()
CASE_ROOTS = pytest.StashKey[tuple[Path, ...]]()
IDS: pytest.StashKey[paths.CaseIds] = pytest.StashKey()
TAKEN_IDS = pytest.StashKey[dict[str, Path]]()
# Indices of generated-program expectations entries matched by the programs this session ran
# in this process (case items' entries are judged from their records: baseline.usage).
MATCHED = pytest.StashKey[set[int]]()
LOAD_ERRORS = pytest.StashKey[int]()  # case files that failed to load in this process
RUN_STATE: pytest.StashKey[RunState] = pytest.StashKey()
# What this run did with its report directory (`run` reads it: cli/final_line.Observer).
REPORT_OUTCOME: pytest.StashKey[report_dir.ReportOutcome] = pytest.StashKey()
SHARD_SEED = pytest.StashKey[int | None]()
# Set when this run is a conformance run (options.is_conformance_run): the hooks of any other
# run return at once, so that it never loads the harness.
ACTIVE = pytest.StashKey[bool]()
CAMPAIGN = pytest.StashKey[dict[str, Any]]()


def active(config: pytest.Config) -> bool:
    return config.stash.get(ACTIVE, False)


def is_generated(item: pytest.Item) -> bool:
    return "generated_log" in getattr(item, "fixturenames", ())
