"""The generated-program comparison's rule for float32 rounding a later op amplifies
(conformance/gen/rounding.py): torch's float64 twin of the program bounds the difference;
a wrong value still diverges."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.case.language import parse, to_source
from conformance.gen import rounding
from conformance.gen.check import _check, check, hits, number
from conformance.run.compare import values_differ
from conformance.run.engine import load_engine
from tests.conformance.wrong_engines import WRONG_EXP

TORCH = load_engine("torch")
REFERENCE = load_engine("reference_engine")

# torch's float32 cosh(4) and the engine's (rounded from float64) are an ULP apart; exp
# multiplies that by cosh(4) = 27.3, past float32's rtol (the ci profile met it)
AMPLIFIED = """\
x = torch.tensor([2.0, 1.5, 2.1, 1.9], requires_grad=True)
y = torch.exp(torch.cosh(x * x))
y.sum().backward()
"""


def test_the_twin_writes_every_narrow_dtype_float64_and_nothing_else() -> None:
    program = parse("a = torch.ones(2, dtype=torch.float32)\nb = a.float() + a\n"
                    "c = torch.zeros(2, dtype=torch.complex64)\nd = a.to(torch.int64)\n")
    assert to_source(rounding.float64_twin(program)) == (
        "a = torch.ones(2, dtype=torch.float64)\nb = a.double() + a\n"
        "c = torch.zeros(2, dtype=torch.complex128)\nd = a.to(torch.int64)\n")


@pytest.mark.parametrize(("engine", "reference", "why"), [
    (1000.004, None, "values"),          # past float32's tolerance (0.0013), no reference
    (1000.004, 999.997, None),           # torch is further from float64 than that
    (1000.004, 999.999, "values"),       # torch is close to float64: not rounding
    (1000.012, 1000.005, "values"),      # nor where the engine is further from it
    (3e38, 3e38, "values"),              # torch overflowed, the engine did not
])
def test_the_reference_widens_only_by_torchs_own_distance_from_float64(
        engine: float, reference: float | None, why: str | None) -> None:
    torch_value = np.array([np.inf if engine == 3e38 else 1000.0], dtype=np.float32)
    ref = None if reference is None else np.array([reference])
    assert values_differ(torch_value, np.array([engine], dtype=np.float32), "float32",
                         ref) == why


def test_amplified_rounding_is_masked_and_counted() -> None:
    program = number(parse(AMPLIFIED))
    raw = _check(program, "", REFERENCE, TORCH, "float32", "cpu")
    assert raw.comparison.divergence is not None  # without the rule it diverges
    assert raw.comparison.divergence.field == "y.values"
    checked = check(program, REFERENCE, TORCH)
    assert not checked.diverges
    assert checked.rounding is not None and checked.rounding.field == "y.values"
    assert "masked:float32_rounding" in hits(checked)


def test_a_wrong_value_still_diverges_under_the_rule() -> None:
    # exp 1 % off: torch's float32 exp is within an ULP of float64, so the bound adds nothing
    checked = check(number(parse(AMPLIFIED)), WRONG_EXP, TORCH)
    assert checked.diverges
    assert checked.comparison.divergence is not None
    assert checked.comparison.divergence.field == "y.values"
