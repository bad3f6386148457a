"""The generator's forward-mode and complex programs (conformance.gen.forward): well-formed,
and the floors of their hit rates: every generated op's jvp compared through an unpacked
tangent, and every complex op's gradient compared, in a share of programs of their own
tables (strategies.FORWARD, strategies.COMPLEX); their share of the default profile is
floored in test_strategies.py. What the floors count is read from torch's runs alone
(which statements completed): the engine's agreement is the generated suite's business."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given

from conformance.case import program as ir
from conformance.case.language import parse, to_source
from conformance.gen import op_table, strategies
from conformance.gen.custom_functions import JVP_FUNCTIONS
from conformance.gen.forward import COMPLEX_OPS
from conformance.gen.program_check import Checked, hits, number
from conformance.gen.strategies import programs, sample_programs
from conformance.report.hit_rates import HitRates
from conformance.run.compare import Comparison
from conformance.run.engine import load_engine
from conformance.run.interpreter import run_program
from conformance.run.limits import RunLimit, contained, deadline

TORCH = load_engine("torch")


@given(programs(actions=strategies.FORWARD))
def test_a_forward_program_prints_then_parses_to_itself(program: ir.Program) -> None:
    assert parse(to_source(program)) == program


@given(programs(actions=strategies.COMPLEX))
def test_a_complex_program_prints_then_parses_to_itself(program: ir.Program) -> None:
    assert parse(to_source(program)) == program


# torch's trace stands for both engines': `hits` reads torch's steps, and of the comparison
# only the mask a masked difference took, which a comparison without masks never has (so
# none is run: comparing a trace with itself was a tenth of these tests' time)
AGREED = Comparison(None, None)


def torch_rates(sample: list[ir.Program], item_timeout: float) -> HitRates:
    """torch's hit rates on `sample`. Each program's run has its own bound, as a generated
    program's in the generated suite: `item_timeout` seconds (--item-timeout, 60 s), then
    its watchdog ends the process; the items that read these rates have no other limit.
    The runs snapshot no names: `hits` reads the steps' outcomes alone, and the snapshots
    were about three quarters of the runs' CPU (benchmarks/README.md, issue 26);
    test_an_unobserved_run_has_the_observed_runs_outcomes holds the two alike."""
    rates = HitRates()
    for p in sample:
        numbered = number(p)
        try:
            with deadline(item_timeout, "a forward-mode or complex program"), contained():
                trace = run_program(TORCH, numbered, continue_on_error=True,
                                    observe_names=False)
        except RunLimit as stopped:
            # an AssertionError, not the RunLimit (a BaseException): pytest keeps a module
            # fixture's Exception and raises it again in every item that asks for it, so a
            # stopped computation is not started again by the next item
            raise AssertionError(f"{stopped}, in:\n{to_source(numbered)}") from None
        rates.record(hits(Checked(numbered, "", trace, trace, AGREED)))
    return rates


# The samples and their rates are module fixtures, computed once per process however the
# first item that asks for them ends (a value or an error, which pytest keeps and raises again
# in the next): a functools.cache was left empty when pytest-timeout stopped the first item,
# so the second started the whole computation again. Their items have no pytest-timeout
# backstop (timeout(0)): their time is the sum of the programs', so the machine's load (121 s
# of CPU, stopped at 900 s under load 12-26, benchmarks/README.md), and a verdict must not
# depend on it; each program keeps its own bound (torch_rates).
@pytest.fixture(scope="module")
def forward_sample() -> list[ir.Program]:
    return sample_programs(200, actions=strategies.FORWARD)


@pytest.fixture(scope="module")
def forward_rates(forward_sample: list[ir.Program], conformance_item_timeout: float
                  ) -> HitRates:
    return torch_rates(forward_sample, conformance_item_timeout)


@pytest.fixture(scope="module")
def complex_rates(conformance_item_timeout: float) -> HitRates:
    return torch_rates(sample_programs(100, actions=strategies.COMPLEX),
                       conformance_item_timeout)


# Measured on these 200 programs (60 rows drawn): every generated op's jvp is compared in at
# least 4.0 % of them (log), a custom Function's in 62 %; a tangent is observed in 81 %.
# With every registry row drawn (267), every op but the one torch gives no forward formula
# (index_reduce) still has its jvp compared in at least 2 %.
JVP_FLOOR = 0.02


@cache
def without_forward_formula() -> frozenset[str]:
    """The generated ops torch has no forward-mode formula for: their sample call on duals
    raises NotImplementedError (index_reduce)."""
    import torch
    import torch.autograd.forward_ad as fw

    found = set()
    for op in op_table.generated_ops():
        with fw.dual_level():
            inputs = [fw.make_dual(torch.rand(s, dtype=torch.float64) + 0.5,
                                   torch.ones(s, dtype=torch.float64))
                      for s in op.sample.shapes]
            try:
                op_table.torch_call(op.row, inputs, op_table.torch_args(op.sample))
            except NotImplementedError:
                found.add(op.name)
            except (RuntimeError, TypeError, ValueError, IndexError):
                pass  # another failure: the op is not exempt
    return frozenset(found)


@pytest.mark.timeout(0)
def test_every_generated_op_has_its_jvp_compared(forward_rates: HitRates) -> None:
    rates = forward_rates
    assert rates.rate("observed_tangent") >= 0.7, rates.table()
    assert rates.rate("jvp:Function.apply") >= 0.4, rates.table()
    exempt = without_forward_formula()
    assert len(exempt) < len(op_table.generated_ops()) // 10, exempt
    low = {op.name: rates.rate(f"jvp:{op.name}") for op in op_table.generated_ops()
           if op.name not in exempt and rates.rate(f"jvp:{op.name}") < JVP_FLOOR}
    assert low == {}, low


@pytest.mark.timeout(0)
def test_every_jvp_function_is_applied(forward_sample: list[ir.Program],
                                       forward_rates: HitRates) -> None:
    rates = forward_rates
    text = "\n".join(to_source(p) for p in forward_sample)
    assert all(f"{name}.apply(" in text for name in JVP_FUNCTIONS)
    assert rates.rate("feature:custom_function") > 0


# Measured on these 100 programs: every complex op's gradient is compared in at least
# 29 % of them (exp), a complex backward completes in 65 %.
COMPLEX_FLOOR = 0.15


@pytest.mark.timeout(0)
def test_every_complex_op_has_its_gradient_compared(complex_rates: HitRates) -> None:
    rates = complex_rates
    assert rates.rate("completed_complex_backward") >= 0.5, rates.table()
    low = {op: rates.rate(f"complex_grad:{op}") for op in COMPLEX_OPS
           if rates.rate(f"complex_grad:{op}") < COMPLEX_FLOOR}
    assert low == {}, low


def test_an_unobserved_run_has_the_observed_runs_outcomes(
        forward_sample: list[ir.Program]) -> None:
    """The hit rates above come from runs that snapshot no names: such a run's steps have
    the lines, outcomes and warnings of the observed run's, in forward-mode and complex
    programs alike, so the rates are those the observed runs give."""
    sample = forward_sample[:12] + sample_programs(6, actions=strategies.COMPLEX)
    for p in sample:
        numbered = number(p)
        observed = run_program(TORCH, numbered, continue_on_error=True)
        unobserved = run_program(TORCH, numbered, continue_on_error=True,
                                 observe_names=False)
        assert any(step.names for step in observed.steps)
        assert not any(step.names for step in unobserved.steps)
        assert [(s.line, s.outcome, s.warnings) for s in unobserved.steps] == [
            (s.line, s.outcome, s.warnings) for s in observed.steps], to_source(numbered)
