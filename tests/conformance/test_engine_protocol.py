"""Engine protocol v2 (conformance/engines): the optional contexts, reset and field masks,
gradients engine-made by identity, and exception types by their builtin base."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import conformance.run.interpreter as interpreter_module
from conformance.case.classify import exception_name
from conformance.case.language import parse
from conformance.case.loader import load_case
from conformance.run.compare import compare
from conformance.run.engine import Engine, load_engine
from conformance.run.interpreter import run_program
from conformance.run.runner import DIVERGES, MASKED, PASS, Item, run_item
from conformance.run.trace import ERROR, FieldMask, TensorSnapshot
from tests.conformance import wrong_engines as wrong

ROOT = Path(__file__).resolve().parents[2]
TORCH = load_engine("torch")

PROGRAM = parse("""\
a = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.no_grad():
    b = a * 2
loss = (a * a).sum()
loss.backward()
""")


class Recorder:
    """A v2 engine's hooks that note what the harness did, and when."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.in_statement = False

    @contextlib.contextmanager
    def context(self, device: str, dtype: str) -> Iterator[None]:
        self.log.append(f"enter {device} {dtype}")
        yield
        self.log.append("exit")

    @contextlib.contextmanager
    def statement(self) -> Iterator[None]:
        assert not self.in_statement, "statement contexts must not nest"
        self.in_statement = True
        self.log.append("statement")
        try:
            yield
        finally:
            self.in_statement = False

    def reset(self) -> None:
        self.log.append("reset")

    def engine(self, **more: Any) -> Engine:
        return wrong.patched("v2", conformance_context=self.context,
                             conformance_statement=self.statement,
                             conformance_reset=self.reset, **more)


def test_contexts_and_reset_surround_the_engine_run_only(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    rec = Recorder()
    observed_inside: list[bool] = []
    real_observe = interpreter_module.observe

    def observe(*args: Any, **kwargs: Any) -> Any:
        observed_inside.append(rec.in_statement)
        return real_observe(*args, **kwargs)

    monkeypatch.setattr(interpreter_module, "observe", observe)
    monkeypatch.setattr(interpreter_module, "WARM_UPS", ())   # a warm-up is a run of its own
    trace = run_program(rec.engine(), PROGRAM, dtype="float64")
    assert trace.failure is None
    # reset, then one item context; one statement context per simple statement (4: the
    # `with` itself enters none, its inner assignment does)
    assert rec.log == ["reset", "enter cpu float64"] + ["statement"] * 4 + ["exit"]
    assert observed_inside == [False] * 5  # observation runs outside every statement context
    before = len(rec.log)
    run_program(TORCH, PROGRAM)  # torch, the truth, has none of them
    assert len(rec.log) == before


def test_observation_is_exempt_from_dynamo_only_for_engines_with_a_context() -> None:
    def f() -> int:
        return 1

    reference = load_engine("reference_engine")
    assert reference.exempt(f) is f and TORCH.exempt(f) is f
    import torch._dynamo  # noqa: F401  (loaded: the exemption is then due)

    assert "torch._dynamo" in sys.modules
    exempt = Recorder().engine().exempt(f)
    assert exempt is not f and exempt() == 1
    assert reference.exempt(f) is f  # no context: no compiler to be exempt from


def test_a_gradient_stays_engine_made_after_grad_is_set_to_none() -> None:
    program = parse("""\
x = torch.tensor([1.0, 2.0], requires_grad=True)
(x * 3).sum().backward()
g = x.grad
x.grad = None
y = torch.tensor([1.0, 2.0])
""")
    trace = run_program(load_engine("reference_engine"), program)
    g_after, y = trace.steps[-1].names["g"], trace.steps[-1].names["y"]
    assert isinstance(g_after, TensorSnapshot) and g_after.engine_made
    assert isinstance(y, TensorSnapshot) and not y.engine_made


class TorchRuntimeErrorLike(RuntimeError):
    pass


def test_exception_types_are_recorded_by_their_builtin_base() -> None:
    assert exception_name(TorchRuntimeErrorLike("x")) == "RuntimeError"
    assert exception_name(KeyError("x")) == "KeyError"

    def exp(x: Any) -> Any:
        raise TorchRuntimeErrorLike("exp is not implemented in this engine")

    program = parse("a = torch.tensor([1.0])\nb = torch.exp(a)\n")
    step = run_program(wrong.patched("sub", exp=exp), program).steps[-1]
    assert step.outcome.status == ERROR and step.outcome.type == "RuntimeError"


def test_a_masked_field_is_reported_as_masked_and_does_not_hide_later_fields() -> None:
    program = parse("""\
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.exp(a)
""")
    expected = run_program(TORCH, program)
    renamed = run_program(TORCH, program)
    snap = renamed.steps[1].names["b"]
    assert isinstance(snap, TensorSnapshot)
    other = TensorSnapshot(**{**snap.__dict__, "grad_fn": "CompiledFunctionBackward",
                              "graph": "CompiledFunctionBackward(AccumulateGrad)"})
    renamed.steps[1].names["b"] = other
    masks = (FieldMask("b.grad_fn", "graphs are compiled"), FieldMask("b.graph", "ditto"))
    result = compare(expected, renamed, "float32", masks)
    assert result.divergence is None and result.masked is not None
    assert result.masked.field == "b.grad_fn" and result.mask == masks[0]
    # a real difference after a masked field of the same tensor is still found
    wrong_values = TensorSnapshot(**{**other.__dict__, "requires_grad": False})
    renamed.steps[1].names["b"] = wrong_values
    result = compare(expected, renamed, "float32", masks)
    assert result.divergence is not None and result.divergence.field == "b.requires_grad"


def test_run_item_gives_masked_never_pass(tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    path.write_text("description: exp\nfeatures: [ops]\nprogram: |\n"
                    "  a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                    "  b = torch.exp(a)\n", encoding="utf-8")
    item = Item(load_case(path), "cpu", "float32")
    assert run_item(item, wrong.WRONG_EXP).verdict == DIVERGES
    masked = Engine(wrong.WRONG_EXP.name, wrong.WRONG_EXP.module)
    object.__setattr__(masked, "masks", (FieldMask("b.values", "values are approximate"),))
    result = run_item(item, masked)
    assert result.verdict == MASKED and "values are approximate" in result.reason
    assert run_item(item, TORCH).verdict == PASS


def test_malformed_masks_are_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    module = type(sys)("bad_masks_engine")
    module.conformance_masks = [("*.grad_fn", "")]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bad_masks_engine", module)
    with pytest.raises(ValueError, match="conformance_masks"):
        load_engine("bad_masks_engine")
