"""The generated-program comparison's rule for the sign of a NaN copysign reads
(conformance/gen/nan_sign.py): masked where it alone carries a divergence, nothing else."""

from __future__ import annotations

import pytest

from conformance.case.language import parse, to_source
from conformance.gen import nan_sign
from conformance.gen.program_check import check, hits
from conformance.run.engine import load_engine

TORCH = load_engine("torch")
REFERENCE = load_engine("reference_engine")

# sqrt(-1) is +nan in torch, -nan in NumPy (IEEE 754 leaves it unspecified)
NAN_SIGN_READ = """\
x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
n = torch.sqrt(torch.tensor([-1.0, 4.0, -9.0]))
y = torch.copysign(x, n)
z = x.copysign(n)
y.sum().backward()
"""


def test_the_sign_operands_nans_are_made_positive_and_nothing_else() -> None:
    program = parse("a = torch.ones(2)\nb = torch.zeros(2)\n"
                    "y = torch.copysign(a, b.exp())\nz = a.copysign(2.0)\n"
                    "w = a.copysign(other=b) + a\n")
    assert to_source(nan_sign.nan_signs_positive(program)) == (
        "a = torch.ones(2)\nb = torch.zeros(2)\n"
        "y = torch.copysign(a, torch.where(torch.isnan(b.exp()), "
        "torch.abs(b.exp().detach()), b.exp()))\n"
        "z = a.copysign(2.0)\n"
        "w = a.copysign(other=torch.where(torch.isnan(b), torch.abs(b.detach()), b)) + a\n")


def test_a_divergence_carried_by_a_nans_sign_alone_is_masked() -> None:
    program = parse(NAN_SIGN_READ)
    raw = check(program, REFERENCE, TORCH, dtype="float32")
    assert raw.nan_sign is not None and raw.nan_sign.field == "y.values"
    assert not raw.diverges
    assert "masked:nan_sign" in hits(raw)
    assert any(s.line == 5 for s in raw.torch_trace.steps)  # compared to the end


def test_any_other_difference_still_diverges(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copysign whose sign operand holds no NaN, and a later difference of the program,
    are reported as before (with the rewritten program, the one whose run diverged)."""
    program = parse(NAN_SIGN_READ + "w = torch.copysign(x, torch.tensor([-1.0, 1.0, -1.0]))\n"
                    "v = w.exp()\n")
    right = REFERENCE.module.copysign
    monkeypatch.setattr(REFERENCE.module, "copysign",
                        lambda a, b: right(a, b).abs())  # b's sign never read
    checked = check(program, REFERENCE, TORCH, dtype="float32")
    assert checked.diverges and checked.comparison.divergence is not None
    assert checked.nan_sign is None and "torch.isnan" in checked.source
