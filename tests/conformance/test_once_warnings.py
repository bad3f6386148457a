"""No verdict depends on what ran before it through torch's once-per-process warnings.

torch gives some warnings once per process (TORCH_WARN_ONCE: `x.T` on a tensor that is not
2-d, `float(x)` of an `x` that requires grad, backward with create_graph=True). The harness
runs every engine under `set_warn_always(True)`, so that torch gives them at every statement
that gives them, and compares them as any warning (issue 20: whichever of two identical items
ran first in a worker diverged and its twin passed). The same pair of identical items runs
here in both orders, in this process (whose once-state earlier tests may have used) and in
fresh pytest processes with two workers; every verdict must be the same: pass for an engine
that gives the warnings, a divergence at the same statement for one that lacks them.
"""

from __future__ import annotations

import importlib
import re
import types
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import reference_engine
from conformance.case.loader import load_case
from conformance.report.trace_codec import trace_from_json, trace_to_json
from conformance.run import interpreter
from conformance.run.compare import compared_once
from conformance.run.engine import Engine, load_engine
from conformance.run.runner import DIVERGES, PASS, Item, run_item

PROGRAM = """\
x = torch.ones(3, requires_grad=True)
t = x.T
s = torch.ones(()).T
f = float(x.sum())
u = torch.tensor([x.sum(), x.sum()])
(x * x).sum().backward(create_graph=True)
with torch.no_grad():
    g = float(x.sum())
"""
CASE = ("description: torch's once-per-process warnings\nfeatures: [views, warnings]\n"
        "devices: [cpu]\nprogram: |\n" + "".join(f"  {line}\n" for line in
                                                PROGRAM.splitlines()))
REFERENCE = load_engine("reference_engine")
# the modules (`reference_engine.tensor` is also torch.tensor's name, the function)
TENSOR_MODULE = importlib.import_module("reference_engine.tensor")
# x.T's warnings are given where Tensor.T is written (the matrix views)
OPERATORS_MODULE = importlib.import_module("reference_engine.tensor_operators")
WARN_MODULE = importlib.import_module("reference_engine.warn")


def _twins(tmp_path: Path) -> list[Item]:
    items = []
    for name in ("first", "second"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(CASE)
        items.append(Item(load_case(path), "cpu", "float32"))
    return items


def _verdicts(items: list[Item], engine: Engine) -> list[tuple[str, Any]]:
    """Each item's verdict and first divergence (field and line), run in both orders."""
    out = []
    for order in (items, items[::-1]):
        for item in order:
            result = run_item(item, engine)
            d = result.divergence
            out.append((result.verdict, None if d is None else (d.field, d.line, d.actual)))
    return out


def test_an_engine_giving_the_warnings_passes_in_both_orders(tmp_path: Path) -> None:
    verdicts = _verdicts(_twins(tmp_path), REFERENCE)
    assert verdicts == [(PASS, None)] * 4


def test_an_engine_lacking_them_diverges_in_both_orders_alike(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the reference engine without its TORCH_WARN_ONCE warnings (x.T's among them)
    monkeypatch.setattr(TENSOR_MODULE, "warn_once", lambda *a, **k: None)
    monkeypatch.setattr(OPERATORS_MODULE, "warn_once", lambda *a, **k: None)
    verdicts = _verdicts(_twins(tmp_path), REFERENCE)
    assert verdicts == [(DIVERGES, ("warnings", 2, []))] * 4


class _OnceOnly(types.ModuleType):
    """reference_engine without set_warn_always: its once-warnings come once per process."""

    def __getattr__(self, name: str) -> Any:
        if name in ("set_warn_always", "is_warn_always_enabled"):
            raise AttributeError(name)
        return getattr(reference_engine, name)


def test_without_set_warn_always_the_once_warnings_are_left_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WARN_MODULE, "_given", set())  # a fresh process's state
    engine = Engine("once-only", _OnceOnly("once-only"))
    items = _twins(tmp_path)
    first = run_item(items[0], engine)
    assert first.engine_trace is not None and first.torch_trace is not None
    assert not first.engine_trace.warn_always and first.torch_trace.warn_always
    assert not compared_once(first.torch_trace, first.engine_trace)
    # the engine warned at the first item and not at the second; neither verdict shows it
    warned = [[w.kind for s in run_item(i, engine).engine_trace.steps  # type: ignore[union-attr]
               for w in s.warnings] for i in items]
    assert warned == [[], []]  # both after `first`: the once-state is used
    # each site once: float() and torch.tensor([...]) share one (maybe_warn_requires_grad)
    assert [w.kind for s in first.engine_trace.steps for w in s.warnings] == [
        "tensor_T_deprecated", "tensor_T_deprecated", "scalar_from_requires_grad",
        "create_graph_reference_cycle"]
    assert _verdicts(items, engine) == [(PASS, None)] * 4
    # a recording keeps the fact (autograd-conformance diff compares as the verdict does)
    stored = trace_from_json(trace_to_json(first.engine_trace, items[0].case))
    assert not stored.warn_always
    assert trace_from_json(trace_to_json(first.torch_trace, items[0].case)).warn_always


def test_the_run_sets_warn_always_and_restores_it() -> None:
    torch = load_engine("torch").module
    seen = []
    interpreter.run_program(load_engine("torch"), interpreter.ir.Program(()))
    for before in (False, True):
        torch.set_warn_always(before)
        with interpreter.warn_always(load_engine("torch")) as armed:
            seen.append((armed, torch.is_warn_always_enabled()))
        assert torch.is_warn_always_enabled() is before
    torch.set_warn_always(False)
    assert seen == [(True, True), (True, True)]


class _FirstUse(types.ModuleType):
    """reference_engine whose `exp` warns the first time the process calls it, as a lazy
    import's warnings would."""

    def __init__(self) -> None:
        super().__init__("first-use")
        self.used = False

    def __getattr__(self, name: str) -> Any:
        if name != "exp":
            return getattr(reference_engine, name)

        def exp(x: Any) -> Any:
            if not self.used:
                self.used = True
                warnings.warn("a lazy import's warning", DeprecationWarning, stacklevel=2)
            return reference_engine.exp(x)
        return exp


@pytest.mark.parametrize("warmed", [False, True])
def test_first_use_warnings_are_warmed_up(monkeypatch: pytest.MonkeyPatch,
                                          warmed: bool) -> None:
    monkeypatch.setattr(interpreter, "WARM_UPS",
                        ("y = torch.exp(torch.ones(1))",) if warmed else ())
    engine = Engine("first-use", _FirstUse())
    program = interpreter.language.parse("x = torch.exp(torch.ones(2))\n")
    warned = [[w.text for s in interpreter.run_program(engine, program).steps
               for w in s.warnings] for _ in range(2)]
    assert warned == ([[], []] if warmed else [["a lazy import's warning"], []])


# ---- fresh processes, two workers --------------------------------------------------------
LACKING = """\
import importlib
importlib.import_module("reference_engine.tensor").warn_once = lambda *a, **k: None
importlib.import_module("reference_engine.tensor_operators").warn_once = lambda *a, **k: None
"""


def _xdist(pytester: pytest.Pytester, names: list[str]) -> dict[str, str | None]:
    for name in names:
        (pytester.path / "cases").mkdir(exist_ok=True)
        (pytester.path / "cases" / name).write_text(CASE)
    result = pytester.runpytest_subprocess(*[f"cases/{n}" for n in names], "-n", "2",
                                           "--junitxml=out.xml")
    outcomes: dict[str, str | None] = {}
    for case in ET.parse(pytester.path / "out.xml").getroot().iter("testcase"):
        failure = case.find("failure")
        assert case.find("skipped") is None and case.find("error") is None, result.stdout.str()
        message = None if failure is None else failure.get("message", "")
        # the verdict without the item's own file name
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = None if message is None \
            else re.sub(r"cases/\w\.yaml", "FILE", message)
    assert len(outcomes) == len(names), result.stdout.str()
    return outcomes


@pytest.mark.parametrize("lacking", [False, True], ids=["gives-them", "lacks-them"])
def test_identical_items_under_two_workers_get_one_verdict(
        pytester: pytest.Pytester, lacking: bool) -> None:
    if lacking:
        pytester.makeconftest(LACKING)
    outcomes = _xdist(pytester, ["a.yaml", "b.yaml", "c.yaml", "d.yaml"])
    if not lacking:
        assert set(outcomes.values()) == {None}, outcomes
        return
    (verdict,) = set(outcomes.values())  # one verdict for every twin, whatever its worker
    assert verdict is not None and "diverges from torch" in verdict and "field `warnings`: " \
        "torch has [('tensor_T_deprecated', 'UserWarning')], engine has []" in verdict, verdict
