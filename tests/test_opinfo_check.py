"""The OpInfo check: OpInfo's samples and error inputs of covered entries, run on torch and
on the reference engine and compared by compare.compare, over a fixed subset of the covered
entries (`python -m conformance.opinfo` runs them all, about 45 s); that it finds a wrong
gradient; that a part the map leaves out is known, and reported stale once it agrees."""

from __future__ import annotations

import dataclasses
import re

import pytest

pytest.importorskip("expecttest", reason="OpInfo needs the dev extra's expecttest")

import reference_engine
from conformance.gen.fault_injection import WrongSign, engine_copy
from conformance.opinfo import command, database, entry_check, opmap
from conformance.run.engine import Engine, load_engine
from conformance.run.verdicts import Verdict

# A fixed subset: elementwise with gradgrad (mul, exp, sigmoid), reductions with keywords
# (sum, prod, amax), shape and indexing (reshape, transpose, cat, index_select, unbind),
# softmax, an OpInfo lambda rebound to the engine (where), and entries with parts the map
# leaves out as diverging (cat, pow, prod...) or unsupported (to). Measured: about 6 s.
SUBSET = ("mul", "exp", "sigmoid", "sum", "prod", "amax", "reshape", "transpose", "cat",
          "index_select", "unbind", "softmax", "where", "pow", "to")
REFERENCE = Engine("reference_engine", reference_engine)


@pytest.fixture(scope="module")
def torch_engine() -> Engine:
    return load_engine("torch")


@pytest.fixture(scope="module")
def omap() -> opmap.OpMap:
    return opmap.load_map()


def test_the_subset_is_covered(omap):
    covered = opmap.join(omap, opmap.rows()).covered()
    assert [k for k in SUBSET if k not in covered] == []


@pytest.mark.parametrize("key", SUBSET)
def test_opinfo_samples_agree_with_torch_or_are_left_out(key, torch_engine, omap):
    items = command.run([key], command.DTYPES, REFERENCE, torch_engine, omap)
    failing = [line for item in items if not item.ok for line in command.report(item, False)]
    assert failing == []
    assert command.stale(items, omap) == []
    assert all(item.result and item.result.parts for item in items), "nothing was checked"


def test_every_step_runs_on_a_sample_with_gradgrad(torch_engine):
    op = database.autograd_entries()["mul"]
    plan = entry_check.plan(op, "mul", "float64")
    assert plan.gradgrad and plan.steps == entry_check.STEPS
    result = entry_check.check(op, plan, REFERENCE, torch_engine)
    lines = {s.line for s in result.expected.steps if s.outcome.status == "ok"}
    assert {plan.line(0, step) for step in entry_check.STEPS} <= lines
    assert [s.line for s in result.actual.steps] == [s.line for s in result.expected.steps]
    assert {p.verdict for p in result.parts} == {Verdict.PASS.value}


def test_a_wrong_gradient_is_found_on_opinfos_samples(torch_engine):
    module = engine_copy("opinfo_faulted_engine")
    fault = WrongSign(module)
    faulted = Engine("opinfo_faulted_engine", module)
    op = database.autograd_entries()["mul"]
    plan = entry_check.plan(op, "mul", "float64")
    fault.targets = frozenset({"MulBackward0"})
    try:
        result = entry_check.check(op, plan, faulted, torch_engine)
    finally:
        fault.targets = frozenset()
    diverging = [p for p in result.parts if p.verdict == Verdict.DIVERGES.value]
    assert diverging, "the wrong sign of mul's backward went unnoticed"
    assert all(p.short.startswith("grads: grads[") for p in diverging)
    # and without the fault the same copy agrees: the fault, not the copy, diverged
    again = entry_check.check(op, plan, faulted, torch_engine)
    assert {p.verdict for p in again.parts} == {Verdict.PASS.value}


def test_parts_run_alone_have_the_verdicts_they_have_in_full(torch_engine):
    # check(only=...) runs the named parts alone (item.py's other-dtype check of a map line):
    # each has the verdict, detail and message it has in the full check, a diverging one too
    module = engine_copy("opinfo_only_engine")
    WrongSign(module, frozenset({"MulBackward0"}))
    faulted = Engine("opinfo_only_engine", module)
    op = database.autograd_entries()["mul"]
    plan = entry_check.plan(op, "mul", "float32")
    full = {p.part: p for p in entry_check.check(op, plan, faulted, torch_engine).parts}
    only = frozenset({("sample", 1), ("sample", 3), ("jvp", 2), ("error input", 0)}
                     if plan.errors else {("sample", 1), ("sample", 3), ("jvp", 2)})
    alone = entry_check.check(op, plan, faulted, torch_engine, only=only)
    assert {(p.kind, p.index) for p in alone.parts} == only
    assert any(p.verdict == Verdict.DIVERGES.value for p in alone.parts)
    assert [dataclasses.astuple(p) for p in alone.parts] == \
        [dataclasses.astuple(full[p.part]) for p in alone.parts]
    # and only their steps ran, on both engines
    ran = {plan.part_of(s.line) for t in (alone.expected, alone.actual) for s in t.steps}
    assert ran == only


def test_a_left_out_part_is_known_and_stale_once_it_agrees(torch_engine, omap):
    op = database.autograd_entries()["add"]
    plan = entry_check.plan(op, "add", "float64")
    sample_0 = opmap.Part("sample 0: why", "sample", 0, "why", 0)
    result = entry_check.check(op, plan, REFERENCE, torch_engine, left_out=(sample_0,))
    assert result.parts[0].verdict == Verdict.PASS.value  # add's sample 0 agrees
    entry = dataclasses.replace(omap.get("add"), left_out=(sample_0,))
    with_line = dataclasses.replace(omap, entries=(entry,))
    stale = command.stale([command.Item("add", "float64", result)], with_line)
    assert stale == ["add: `sample 0: why` agrees with torch now: delete it"]
    # a part that diverges (cholesky_solve's float32 sample 6, a second-order grad rounded
    # otherwise) is known
    op = database.autograd_entries()["cholesky_solve"]
    plan = entry_check.plan(op, "cholesky_solve", "float32")
    left_out = omap.get("cholesky_solve").left_out
    result = entry_check.check(op, plan, REFERENCE, torch_engine, left_out=left_out)
    assert result.parts[6].verdict == Verdict.KNOWN.value
    assert "gradgrad" in result.parts[6].detail
    result = entry_check.check(op, plan, REFERENCE, torch_engine)
    assert result.parts[6].verdict == Verdict.DIVERGES.value


def test_the_command_runs_entries_and_refuses_unknown_ones(capsys):
    assert command.main(["mul", "--dtype", "float64"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^ok   mul float64: \d+ pass$", out, re.M)
    assert re.match(r"1 entries, 1 items \(0 failing\): \d+ samples", out.splitlines()[-1])
    with pytest.raises(SystemExit):
        command.main(["no_such_op"])
    assert "not OpInfo entries with autograd in the map: no_such_op" in capsys.readouterr().err


def test_the_forward_mode_step_is_a_part_of_its_own(torch_engine):
    op = database.autograd_entries()["mul"]
    plan = entry_check.plan(op, "mul", "float64")
    assert plan.forward_ad and "jvp" in plan.steps
    result = entry_check.check(op, plan, REFERENCE, torch_engine)
    jvps = [p for p in result.parts if p.kind == "jvp"]
    assert len(jvps) == len(plan.samples) and {p.verdict for p in jvps} == {"pass"}
    line = plan.line(0, "jvp")
    assert plan.part_of(line) == ("jvp", 0) and plan.step_of(line) == "jvp"
    step = next(s for s in result.expected.steps if s.line == line)
    assert step.outcome.status == "ok" and "jvp[0]" in step.names  # torch gave a tangent


def test_a_wrong_jvp_is_found_and_only_in_the_jvp_parts(torch_engine):
    module = engine_copy("opinfo_wrong_jvp_engine")
    right = module.forward_ad.tangent_of

    def wrong(spec, *args, **kwargs):  # mul's tangent with the wrong sign
        out = right(spec, *args, **kwargs)
        return module.ops.basic.elementwise.neg(out) if spec.grad_fn == "MulBackward0" else out

    module.forward_ad.tangent_of = wrong
    op = database.autograd_entries()["mul"]
    plan = entry_check.plan(op, "mul", "float64")
    result = entry_check.check(op, plan, Engine("opinfo_wrong_jvp_engine", module), torch_engine)
    diverging = [p for p in result.parts if p.verdict == Verdict.DIVERGES.value]
    assert diverging and {p.kind for p in diverging} == {"jvp"}
    assert all(p.short.startswith("jvp: jvp[0]") for p in diverging)
    assert {p.verdict for p in result.parts if p.kind == "sample"} == {Verdict.PASS.value}


def test_an_engine_without_forward_ad_is_unsupported_there(torch_engine):
    lacking = load_engine("tests.conformance.engine_lacks_api")  # its autograd has no forward_ad
    op = database.autograd_entries()["mul"]
    result = entry_check.check(op, entry_check.plan(op, "mul", "float64"), lacking, torch_engine)
    jvps = [p for p in result.parts if p.kind == "jvp"]
    assert jvps and {p.verdict for p in jvps} == {Verdict.UNSUPPORTED.value}
    assert all("torch.autograd.forward_ad" in p.detail for p in jvps)


def test_a_jvp_part_is_left_out_by_its_own_line(torch_engine):
    op = database.autograd_entries()["mul"]
    plan = entry_check.plan(op, "mul", "float64")
    jvp_0 = opmap.Part("jvp 0: why", "jvp", 0, "why", 0)
    assert opmap._part("mul", "jvp 0: why") == jvp_0  # the map's syntax
    assert opmap._part("mul", "jvp 1-2: why").last == 2
    assert jvp_0.covers("jvp", 0) and not jvp_0.covers("sample", 0)
    assert opmap.Part("kwarg alpha: why", "kwarg", "alpha", "why").covers("jvp", 3, ("alpha",))
    result = entry_check.check(op, plan, REFERENCE, torch_engine, left_out=(jvp_0,))
    assert [p.left_out for p in result.parts if p.left_out] == ["jvp 0: why"]


def test_the_time_limit_is_each_samples(torch_engine):
    """--item-timeout bounds each sample (with its jvp step) of an OpInfo item, as it bounds
    one case program: an item of many samples, each well inside the limit, is not stopped
    by their sum (linalg.solve_triangular has 432), and a sample over it is named."""
    import time

    from conformance.run.limits import ItemTimeout

    module = engine_copy("opinfo_slow_mul_engine")
    mul, calls = module.mul, []

    def slow_mul(*args, **kwargs):  # 0.05 s a call: a sample calls it 4 times
        calls.append(1)
        time.sleep(0.05)
        return mul(*args, **kwargs)

    module.mul = slow_mul
    slow = Engine("opinfo_slow_mul_engine", module)
    op = database.autograd_entries()["mul"]
    plan = entry_check.plan(op, "mul", "float64")
    plan = dataclasses.replace(plan, samples=plan.samples[:8], errors=())
    result = entry_check.check(op, plan, slow, torch_engine,
                               limit=entry_check.Limit(0.8, "the item X"))
    assert len(calls) * 0.05 > 0.8  # the samples' sleeps alone are over the limit ...
    assert {p.verdict for p in result.parts} == {Verdict.PASS.value}  # ... and none stopped
    with pytest.raises(ItemTimeout, match=r"^sample 0 of the item X ran longer than the time "
                       r"limit of 0\.1 s \(--item-timeout\)"):
        entry_check.check(op, plan, slow, torch_engine, limit=entry_check.Limit(0.1, "the item X"))


def test_the_running_test_is_found_as_torch_finds_it_without_reading_sources() -> None:
    # OpInfo's sample iterators look for the running unittest test (extract_test_fn, by
    # inspect.stack()); plan draws with a stand-in that walks the frames alone: the same
    # answer, a test function inside a unittest test and None elsewhere (an OpInfo item)
    import io
    import unittest

    from torch.testing._internal import common_utils

    from conformance.opinfo import plan

    found: list[object] = []

    class Case(unittest.TestCase):
        def test_draw(self) -> None:
            found.extend([common_utils.extract_test_fn(), plan._test_fn_of_the_stack()])

    unittest.TextTestRunner(stream=io.StringIO()).run(Case("test_draw"))
    assert found == [Case.test_draw, Case.test_draw]
    assert common_utils.extract_test_fn() is None and plan._test_fn_of_the_stack() is None
    with plan._test_fn_found_without_source():
        assert common_utils.extract_test_fn is plan._test_fn_of_the_stack
    assert common_utils.extract_test_fn is not plan._test_fn_of_the_stack
