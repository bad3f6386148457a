"""cuda as a label: every case's cuda items keep the case's own assertions on the engine.

Where torch has no CUDA device (as on CI here) the cuda items of the conformance suite are
skipped, so nothing compares the engine's cuda behaviour with torch's. This is the weaker
check that remains: run each case's program on the reference engine with cuda as the default
device, and require that its own assert / assert_close / raises / warns hold, as they hold
for torch on cpu. It catches the engine breaking on the cuda label (a device mismatch it
invents, a message path that crashes); it cannot catch a cuda-only difference from torch.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.case.loader import load_case
from conformance.run import expectations
from conformance.run.engine import load_engine
from conformance.run.interpreter import run_program

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "cases").rglob("*.yaml"))
ENGINE = load_engine("reference_engine")
KNOWN = expectations.load(expectations.default_path(ROOT, "reference_engine"))


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.relative_to(p.parents[2]).as_posix())
def test_case_holds_on_engine_with_cuda_label(path: Path) -> None:
    case = load_case(path)
    if "cuda" not in case.devices:
        pytest.skip("the case does not run on cuda")
    for dtype in case.dtypes:
        item_id = f"{path.relative_to(ROOT).as_posix()}::cuda-{dtype}"
        if KNOWN.for_item(item_id, "cuda", dtype) is not None:
            continue  # a listed divergence: the engine is known not to keep this case
        trace = run_program(ENGINE, case.program, seed=case.seed, dtype=dtype, device="cuda")
        failure = trace.failure
        assert failure is None, (
            f"{path}:{failure.line + case.line_offset} ({dtype}): {failure.outcome.describe()}")
