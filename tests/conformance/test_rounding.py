"""The generated-program comparison's rule for float32 rounding a later op amplifies
(conformance/gen/rounding.py): torch's float64 twin of the program bounds the difference;
a wrong value still diverges."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conformance.case.language import parse, to_source
from conformance.gen import rounding
from conformance.gen.program_check import _check, check, hits, number
from conformance.run.compare import Jittered, values_differ
from conformance.run.engine import Engine, load_engine
from conformance.run.interpreter import run_program
from tests.conformance.wrong_engines import WRONG_EXP, patched

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


# The ci profile with every row drawn met this chain (stop 41): the engine's cosh(-1) is
# correctly rounded, torch's 1 ULP low; mean, rad2deg and tan near a pole (condition number
# about 300) leave the engine 350 times further from float64 than torch, whose roundings
# cancelled: torch -3.9961646, the engine -3.996035, float64 -3.9961642.
CHAIN = """\
x = torch.tensor([-1.0, -1.0, -0.0, -0.0, 0.5, 1.0], requires_grad=True)
y = torch.tan(torch.rad2deg(torch.mean(torch.cosh(x))))
y.backward()
"""


def test_the_amplified_chain_is_refused_by_torchs_distance_alone() -> None:
    program = number(parse(CHAIN))
    t = run_program(TORCH, program).steps[1].names["y"].values
    e = run_program(REFERENCE, program).steps[1].names["y"].values
    ref = np.asarray(rounding.reference(TORCH, program).steps[1].names["y"].values)
    assert abs(float(e) - float(ref)) > 100 * abs(float(t) - float(ref))
    assert values_differ(t, e, "float32", ref) == "values"  # a plain array: no jitter


def test_the_chains_measured_jitter_accepts_it() -> None:
    program = number(parse(CHAIN))
    ref = rounding.reference(TORCH, program).steps[1].names["y"].values
    assert isinstance(ref, Jittered) and ref.jitter is not None
    # the chain's amplification of half-ULP roundings, measured: near 2e-4 (x3)
    assert 3e-4 < float(ref.jitter) < 3e-3
    checked = check(program, REFERENCE, TORCH)
    assert not checked.diverges
    assert checked.rounding is not None and checked.rounding.field == "y.values"
    assert "masked:float32_rounding" in hits(checked)


def test_jitter_is_float32_rounding_size_where_nothing_amplifies() -> None:
    program = number(parse(AMPLIFIED.replace("torch.exp(torch.cosh(x * x))", "torch.exp(x)")))
    ref = rounding.reference(TORCH, program).steps[1].names["y"].values
    assert isinstance(ref, Jittered) and ref.jitter is not None
    assert (ref.jitter <= rounding.JITTER_FACTOR * 2.0 ** -23 * np.abs(ref)).all()


def _tan_wrong_grad(x: torch.Tensor) -> torch.Tensor:
    """tan whose backward uses the derivative tan(x)^2 (1 + tan(x)^2 less its 1): a hook
    scales the incoming gradient, so the graph and grad_fn stay TanBackward0's."""
    out = torch.tan(x)
    t2 = out.detach() ** 2
    if out.requires_grad:
        out.register_hook(lambda g: g * t2 / (1 + t2))
    return out


def _tan_one_percent_off(x: torch.Tensor) -> torch.Tensor:
    out = torch.tan(x)
    out.data.mul_(1.01)
    return out


@pytest.mark.parametrize("engine", [
    patched("wrong-tan-grad", tan=_tan_wrong_grad),
    patched("wrong-tan", tan=_tan_one_percent_off),
])
def test_a_wrong_formula_in_the_amplifying_chain_still_diverges(engine: Engine) -> None:
    checked = check(number(parse(CHAIN)), engine, TORCH)
    assert checked.diverges
    assert checked.comparison.divergence is not None
    assert checked.comparison.divergence.field in ("y.values", "x.grad.values")


def test_jitter_leaves_zerotensors_alone() -> None:
    # slogdet's sign tangent is an _efficientzerotensor, which has no storage: reading it
    # under the dispatch mode segfaulted (the ci profile's test with 310 rows, stop 42)
    import torch.autograd.forward_ad as fwad

    with rounding.jittered(TORCH, 1.0), fwad.dual_level():
        d = fwad.make_dual(torch.eye(3, dtype=torch.float64) * 2,
                           torch.ones(3, 3, dtype=torch.float64))
        sign, logabsdet = torch.linalg.slogdet(d)
        tangent = fwad.unpack_dual(sign).tangent
        assert tangent is not None and tangent._is_zerotensor()
        assert float(fwad.unpack_dual(logabsdet).tangent) == pytest.approx(1.5)


# A float64 program is its own twin, so only the jitter can bound it; torch's inverse of this
# A has an exact 0 at [3, 2] where the engine's is -6.5e-18 (a cancellation no factor on the
# result moves), so floor gives 0 against -1 (the 310-row ci profile met
# mish(masked.logsumexp(linalg.inv(A).floor())), stop 42)
F64 = rounding.JITTER_FLOAT64
FLOAT64_CANCELLING = """\
a = torch.tensor([[-1.0, -1.0, 3.0, -2.0], [0.0, 0.0, 2.0, 1.5], [2.0, 1.5, -1.0, -1.0], \
[1.5, 1.5, 0.0, 0.0]], dtype=torch.float64, requires_grad=True)
y = torch.linalg.inv(a).floor()
"""


def test_a_float64_programs_cancellation_is_jittered_at_float64s_size() -> None:
    program = number(parse(FLOAT64_CANCELLING))
    raw = _check(program, "", REFERENCE, TORCH, "float32", "cpu")
    assert raw.comparison.divergence is not None  # without the rule it diverges
    assert raw.comparison.divergence.field == "y.values"
    assert rounding.unit_roundoff(raw.torch_trace) == rounding.JITTER_FLOAT64
    ref = rounding.reference(TORCH, program, unit=F64).steps[1].names["y"].values
    assert isinstance(ref, Jittered) and ref.jitter is not None
    assert ref.jitter[3, 2] == rounding.JITTER_FACTOR  # floor flips between 0 and -1 there
    checked = check(program, REFERENCE, TORCH)
    assert not checked.diverges
    assert checked.rounding is not None and checked.rounding.field == "y.values"


def test_a_float64_programs_jitter_is_float64s_size_where_nothing_amplifies() -> None:
    program = number(parse(AMPLIFIED.replace("torch.exp(torch.cosh(x * x))", "torch.exp(x)")
                           .replace("1.9]", "1.9], dtype=torch.float64")))
    assert rounding.unit_roundoff(run_program(TORCH, program)) == rounding.JITTER_FLOAT64
    ref = rounding.reference(TORCH, program, unit=F64).steps[1].names["y"].values
    assert isinstance(ref, Jittered) and ref.jitter is not None
    assert (ref.jitter <= rounding.JITTER_FACTOR * 2.0 ** -49 * np.abs(ref)).all()
    # so exp 1 % off (far below float32's size of jitter) diverges in float64
    assert check(program, WRONG_EXP, TORCH).diverges


def test_an_op_that_rounds_nothing_is_not_perturbed() -> None:
    # the sum of values float32 holds is exact: floor of it keeps its power
    program = number(parse("a = torch.tensor([1.0, 2.0, -3.0, 0.5], dtype=torch.float64)\n"
                           "y = a.sum().floor()\n"))
    ref = rounding.reference(TORCH, program, unit=F64).steps[1].names["y"].values
    assert isinstance(ref, Jittered) and ref.jitter is not None
    assert float(ref.jitter) == 0.0


def test_a_complex_value_is_judged_against_its_twin_too() -> None:
    # benchmarks/generator_probe.py --table COMPLEX, program 46: exp of a complex64 sum of
    # exps; torch's sum is an ULP further from float64 than the engine's, and exp turns that
    # into 0.2 on the imaginary part (15 ULPs). The twin's shape is the values' (complex),
    # not their parts': it was never consulted for a complex value before.
    t = np.array(483402.28125 + 179403.078125j, dtype=np.complex64)
    e = np.array(483402.1875 + 179403.3125j, dtype=np.complex64)
    ref = np.array(483402.2329221748 + 179403.27378715668j)
    assert values_differ(t, e, "float32") == "values"
    assert values_differ(t, e, "float32", ref) is None
    # an engine as far again on the other side is further than torch: still diverges
    far = np.array(483402.1875 + 179404.0j, dtype=np.complex64)
    assert values_differ(t, far, "float32", ref) == "values"
