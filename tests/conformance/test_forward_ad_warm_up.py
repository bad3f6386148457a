"""The first forward-mode item of a fresh process shows no stray warning (issue 22).

torch's first make_dual of a process imports torch._decomp, whose torch.jit.script calls
emit DeprecationWarnings; interpreter.WARM_UPS takes them before the first item runs. Each
check runs in a fresh Python process, the only place where "first" is true.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "cases" / "forward_ad" / "test_default_level.yaml"

SCRIPT = """
import sys
from conformance.case.loader import load_case
from conformance.run import interpreter
from conformance.run.engine import load_engine
from conformance.run.runner import Item, run_item

if sys.argv[2] == "cold":
    interpreter.WARM_UPS = ()
path = sys.argv[1]
case = load_case(path, open(path).read())
result = run_item(Item(case, "cpu", "float32"), load_engine("reference_engine"))
print(result.verdict)
print(result.divergence.describe() if result.divergence else result.reason)
"""


@pytest.mark.parametrize("warmth", ["warm", "cold"])
def test_first_forward_mode_item_of_a_process(warmth: str) -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(CASE), warmth], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    verdict, _, reason = out.partition("\n")
    if warmth == "warm":
        assert verdict == "pass", reason
    else:   # without the warm-up the same item diverges on torch's stray warnings
        assert verdict == "diverges", reason
        assert "field `warnings`" in reason and "DeprecationWarning" in reason, reason
