"""Isolation at run time: the interpreter's store checks, the engine-state guard, verdicts.

What the loader cannot see (a value reached through a list, a call's result, an alias of
ctx) is refused by the interpreter; whatever process-global engine state a run changes is
restored after it, and the item that changed it is an error naming the change.
"""

from __future__ import annotations

import types
from typing import Any

import pytest
import torch

import reference_engine
from conformance.case.language import parse
from conformance.case.loader import load_case
from conformance.run import isolation
from conformance.run.engine import Engine, load_engine
from conformance.run.interpreter import run_program
from conformance.run.runner import ERROR, PASS, Item, run_item
from conformance.run.trace import ASSERTION, Trace
from tests.conformance.wrong_engines import patched

TORCH = load_engine("torch")
REFERENCE = load_engine("reference_engine")


def run(engine: Engine, source: str) -> Trace:
    return run_program(engine, parse(source))


@pytest.mark.parametrize(("source", "message"), [
    ("fs = [nn.Parameter]\nfs[0].requires_grad = False",
     "cannot set `requires_grad` on the class `Parameter`"),
    ("d = torch.get_default_dtype()\nd.requires_grad = True",
     "cannot set `requires_grad` on a `dtype` object"),
    ("ns = [torch.autograd]\nns[0].grad = None", "cannot set `grad` on a `Namespace` object"),
    ("x = torch.ones(2, requires_grad=True)\ny = x.exp()\nfs = [y.grad_fn]\n"
     "fs[0].requires_grad = False", "cannot set `requires_grad` on a `ExpBackward0` object"),
    ("fs = [nn.Module]\nfs[0][0] = 1", "cannot assign items of the class `Module`"),
    ("fs = [torch.autograd.Function]\nfs[0].mark_dirty(nn.Parameter)",
     "attribute `mark_dirty` of the class `Function` is not in the supported API"),
])
def test_stores_on_objects_the_program_did_not_make_are_refused(source: str,
                                                               message: str) -> None:
    trace = run(TORCH, source)
    assert trace.failure is not None and trace.failure.outcome.status == ASSERTION
    assert message in str(trace.failure.outcome.text)
    assert not {"requires_grad", "dirty_tensors"} & set(vars(torch.nn.Parameter))
    assert torch.nn.Parameter(torch.ones(1)).requires_grad


ALIASED_CTX = """\
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        c = ctx
        f = c.{attr}
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g * 2
x = torch.ones(2, requires_grad=True)
y = Scale.apply(x)
"""


@pytest.mark.parametrize("engine", [TORCH, REFERENCE], ids=lambda e: e.name)
def test_ctx_reached_by_another_name_offers_its_table_only(engine: Engine) -> None:
    refused = run(engine, ALIASED_CTX.format(attr="apply"))
    assert refused.failure is not None and refused.failure.line == 11
    assert "ctx attribute `apply` is not in the supported API" in str(
        refused.failure.outcome.text)
    assert run(engine, ALIASED_CTX.format(attr="needs_input_grad")).failure is None


@pytest.mark.parametrize("engine", [TORCH, REFERENCE], ids=lambda e: e.name)
def test_a_run_that_switches_grad_mode_off_is_set_back_and_says_so(engine: Engine) -> None:
    trace = run(engine, "x = torch.ones(2, requires_grad=True)\ntorch.set_grad_enabled(False)\n"
                        "y = x * 2\nassert not y.requires_grad\n")
    assert trace.failure is None
    assert [c.describe() for c in trace.state_changes] == ["grad mode disabled (was enabled)"]
    assert engine.module.is_grad_enabled()
    # switched back by the program itself: nothing to report
    clean = run(engine, "torch.set_grad_enabled(False)\ntorch.set_grad_enabled(True)\n")
    assert clean.state_changes == []


@pytest.mark.parametrize("engine", [TORCH, REFERENCE], ids=lambda e: e.name)
def test_a_run_that_leaves_anomaly_mode_on_is_set_back_and_says_so(engine: Engine) -> None:
    trace = run(engine, "torch.autograd.set_detect_anomaly(True, check_nan=False)\n"
                        "assert torch.is_anomaly_enabled()\n")
    assert trace.failure is None
    assert sorted(c.describe() for c in trace.state_changes) == [
        "anomaly mode enabled (was disabled)",
        "anomaly mode's NaN check disabled (was enabled)"]
    assert not engine.module.is_anomaly_enabled()
    assert engine.module.is_anomaly_check_nan_enabled()


def test_every_torch_setting_in_the_table_is_read_restored_and_named() -> None:
    from torch.autograd.graph import saved_tensors_hooks

    hooks = saved_tensors_hooks(lambda t: t, lambda t: t)
    threads = torch.get_num_threads()
    with isolation.guard(TORCH) as changes:
        torch.set_default_dtype(torch.float64)
        torch.set_grad_enabled(False)
        torch.set_anomaly_enabled(True, False)
        torch.use_deterministic_algorithms(True, warn_only=True)
        hooks.__enter__()
        hooks.__enter__()
        torch.autograd.forward_ad.enter_dual_level()
        torch.set_printoptions(precision=2)
        torch.set_num_threads(threads + 1)
    named = {c.setting: c for c in changes}
    assert set(named) == {s.name for s in isolation.SETTINGS} - {"the default device",
                                                                  "inference mode"}
    assert all(c.restored for c in changes)
    assert named["the default dtype"].describe() == (
        "the default dtype at torch.float64 (was at torch.float32)")
    assert named["the saved-tensor default hooks"].describe() == (
        "the saved-tensor default hooks with a (pack, unpack) pair on top (was empty)")
    assert TORCH.global_state() == {
        "the default dtype": torch.float32, "the default device": torch.device("cpu"),
        "grad mode": True, "inference mode": False, "anomaly mode": False,
        "anomaly mode's NaN check": True, "deterministic algorithms": False,
        "deterministic algorithms' warn-only": False, "the saved-tensor default hooks": None,
        "forward AD": -1, "the number of intra-op threads": threads, "the print options": {
            "precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
            "sci_mode": None}}


def test_an_engine_lacking_a_setting_is_checked_for_what_it_has() -> None:
    state = {"grad": True}
    module = types.ModuleType("tiny")
    module.is_grad_enabled = lambda: state["grad"]  # type: ignore[attr-defined]
    engine = Engine("tiny", module)
    assert engine.global_state() == {"grad mode": True}
    with isolation.guard(engine) as changes:
        state["grad"] = False  # no set_grad_enabled: it cannot be set back
    assert [c.describe() for c in changes] == [
        "grad mode disabled (was enabled), which could not be restored"]
    assert reference_engine.is_grad_enabled()
    assert set(REFERENCE.global_state()) == {
        "the default dtype", "the default device", "grad mode", "inference mode",
        "anomaly mode", "anomaly mode's NaN check", "the saved-tensor default hooks",
        "forward AD"}


def item(program: str) -> Item:
    body = "".join(f"  {line}\n" for line in program.splitlines())
    case = load_case("cases/iso/case.yaml", "description: d\nfeatures: [grad_mode]\n"
                     f"devices: [cpu]\nprogram: |\n{body}")
    return Item(case, "cpu", "float32")


POLLUTER = "x = torch.ones(2, requires_grad=True)\ntorch.set_grad_enabled(False)\ny = x * 2\n"


def test_the_item_that_leaves_grad_mode_off_is_an_error_and_the_next_one_passes() -> None:
    result = run_item(item(POLLUTER), REFERENCE)
    assert result.verdict == ERROR
    assert result.reason.startswith(
        "torch left grad mode disabled (was enabled) after running the item; the harness "
        "set it back so that no other item sees it. A case must leave process state as it "
        "found it")
    innocent = run_item(item("x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
                             "assert y.requires_grad\nm = nn.Linear(2, 2)\n"
                             "assert m.weight.requires_grad\n"), REFERENCE)
    assert innocent.verdict == PASS, innocent.reason


def test_a_leaking_item_that_also_fails_says_both() -> None:
    result = run_item(item(POLLUTER + "assert y.requires_grad\n"), REFERENCE)
    assert result.verdict == ERROR
    assert "torch left grad mode disabled" in result.reason
    assert "The run stopped early, at cases/iso/case.yaml:8 `assert y.requires_grad`" in \
        result.reason


class _NoGradThatForgets:
    """no_grad whose exit does not switch grad mode back on: an engine bug."""

    def __enter__(self) -> None:
        torch.set_grad_enabled(False)

    def __exit__(self, *exc: Any) -> None:
        pass


def test_an_engine_that_leaves_state_torch_restores_is_an_error() -> None:
    engine = patched("forgetful", no_grad=_NoGradThatForgets)
    result = run_item(item("x = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n"
                           "    y = x * 2\n"), engine)
    assert result.verdict == ERROR
    assert result.reason.startswith("forgetful left grad mode disabled (was enabled)")
    assert "torch left it as it found it" in result.reason
    assert torch.is_grad_enabled()


LEAKED_LEVEL = ("fwAD.enter_dual_level()\n"
                "x = fwAD.make_dual(torch.ones(2), torch.ones(2))\n")


@pytest.mark.parametrize("engine", [TORCH, REFERENCE], ids=lambda e: e.name)
def test_a_dual_level_left_open_is_exited_and_named(engine: Engine) -> None:
    trace = run(engine, LEAKED_LEVEL)
    assert trace.failure is None
    assert [c.describe() for c in trace.state_changes] == [
        "forward AD at dual level 0 (was with no dual level)"]
    assert engine.module.autograd.forward_ad._current_level == -1


def test_the_item_after_one_that_leaves_a_level_open_passes() -> None:
    leaky = run_item(item(LEAKED_LEVEL), REFERENCE)
    assert leaky.verdict == ERROR
    assert leaky.reason.startswith("torch left forward AD at dual level 0 (was with no dual "
                                   "level)")
    # with the level still open this make_dual would be refused (nested level)
    after = run_item(item("with fwAD.dual_level():\n"
                          "    x = fwAD.make_dual(torch.ones(2), torch.ones(2))\n"
                          "    assert fwAD.unpack_dual(x).tangent is not None\n"), REFERENCE)
    assert after.verdict == PASS, after.reason


def test_the_reference_engines_saved_tensor_hooks_are_restored() -> None:
    hooks = reference_engine.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
    with isolation.guard(REFERENCE) as changes:
        hooks.__enter__()
        hooks.__enter__()
    assert [c.describe() for c in changes] == [
        "the saved-tensor default hooks with a (pack, unpack) pair on top (was empty)"]
    assert reference_engine._C._autograd._top_saved_tensors_default_hooks(True) is None


def _exp_printing_briefly(x: Any) -> Any:
    torch.set_printoptions(precision=2)
    return torch.exp(x)


def _exp_on_one_thread(x: Any) -> Any:
    torch.set_num_threads(1 if torch.get_num_threads() != 1 else 2)
    return torch.exp(x)


PRINTED = "x = torch.tensor([1.0, 2.0])\ny = torch.exp(x)\ns = str(torch.tanh(x))\n"


@pytest.mark.parametrize(("exp", "setting"), [
    (_exp_printing_briefly, "the print options"),
    (_exp_on_one_thread, "the number of intra-op threads")])
def test_an_engine_leaving_print_options_or_threads_is_an_error_and_the_next_passes(
        exp: Any, setting: str) -> None:
    """Round five: torch's print options and intra-op thread count were not in the table:
    an engine that set a precision of 2 made every later item's `str(x)` diverge."""
    threads = torch.get_num_threads()
    result = run_item(item(PRINTED), patched("leaky", exp=exp))
    assert result.verdict == ERROR
    assert result.reason.startswith(f"leaky left {setting} at "), result.reason
    assert torch._tensor_str.get_printoptions()["precision"] == 4  # type: ignore[attr-defined]
    assert torch.get_num_threads() == threads
    assert run_item(item(PRINTED), REFERENCE).verdict == PASS
