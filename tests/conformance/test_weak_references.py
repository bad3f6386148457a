"""Weak references in the case language (`weakref.ref(x)`, called for x or None) measure the
engine, not the harness: the harness holds no value a program let go of (not its tensors,
not its Functions' ctx objects, which in torch keep their node's metadata alive), and the
reference engine frees a graph by reference counting alone, as torch does. Misuse is refused
when the case is loaded."""

from __future__ import annotations

import weakref
from typing import Any

import pytest
import torch

import reference_engine
from conformance.case import language
from conformance.case.diagnostics import CaseError
from conformance.case.loader import load_case
from conformance.run.engine import Engine
from conformance.run.interpreter import run_program

ENGINES = [Engine("reference_engine", reference_engine), Engine("torch", torch)]



def _statuses(engine: Engine, source: str, full_snapshots: bool = False) -> list[str]:
    trace = run_program(engine, language.parse(source), full_snapshots=full_snapshots)
    return [s.outcome.status for s in trace.steps]


@pytest.mark.parametrize("full_snapshots", [False, True])
@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.name)
def test_a_tensor_let_go_of_is_freed(no_cycle_collector: None, engine: Engine,
                                     full_snapshots: bool) -> None:
    source = ("x = torch.rand(2, requires_grad=True)\n"
              "y = (x * 2).exp()\n"        # exp saves its output: no cycle through it
              "r = weakref.ref(y)\n"
              "assert r() is not None\n"
              "y = None\n"
              "assert r() is None\n")
    assert _statuses(engine, source, full_snapshots) == ["ok"] * 6


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.name)
def test_node_metadata_goes_with_the_graph(no_cycle_collector: None, engine: Engine) -> None:
    # the harness held every ctx for the whole run, which in torch kept the node's
    # metadata alive after the program let go of the output
    source = ("class Twin(torch.autograd.Function):\n"
              "    @staticmethod\n"
              "    def forward(ctx, x):\n"
              "        return x.clone()\n"
              "    @staticmethod\n"
              "    def backward(ctx, g):\n"
              "        return g\n"
              "out = Twin.apply(torch.rand(1, requires_grad=True))\n"
              "m = object()\n"
              "out.grad_fn.metadata[0] = m\n"
              "r = weakref.ref(m)\n"
              "m = None\n"
              "assert r() is not None\n"
              "out = None\n"
              "assert r() is None\n")
    assert _statuses(engine, source) == ["ok"] * 9


def test_a_saved_output_does_not_hold_its_node(no_cycle_collector: None) -> None:
    # torch's SavedVariable keeps no grad_fn for an output (the cycle output -> grad_fn ->
    # saved output); the reference engine keeps the output's tensor_data only
    x = reference_engine.rand(2, requires_grad=True)
    y = x.exp()
    node = weakref.ref(y.grad_fn)
    assert y.grad_fn._saved_result is not y
    del y
    assert node() is None


@pytest.mark.parametrize(("source", "line", "message"), [
    ("x = torch.rand(1)\nr = weakref.proxy(x)\n", 2, "`weakref.proxy` is not in"),
    ("x = torch.rand(1)\nr = weakref.finalize(x, len)\n", 2, "`weakref.finalize` is not in"),
    ("weakref = 1\n", 1, "reserved name `weakref`"),
    ("y = torch.rand(1, requires_grad=True) * 2\ny.grad_fn.next_functions[0] = 1\n", 2,
     "engine object reached by attribute"),
    ("torch.autograd.metadata[0] = 1\n", 1, "belongs to the engine"),
    ("x = torch.rand(1)\ndel x\n", 2, "`Delete` statements"),
])
def test_misuse_is_refused_at_load(source: str, line: int, message: str) -> None:
    with pytest.raises(CaseError, match=message) as refused:
        language.parse(source)
    assert refused.value.line == line


def test_weak_references_and_metadata_items_load() -> None:
    program = language.parse("y = torch.rand(1, requires_grad=True) * 2\n"
                             "y.grad_fn.metadata['k'] = object()\n"
                             "r = weakref.ref(y.grad_fn.metadata['k'])\n"
                             "assert r() is not None\n")
    assert language.to_source(program).count("weakref.ref(") == 1


def test_retain_grad_holds_its_tensor_weakly(no_cycle_collector: None) -> None:
    # torch's retain_grad hook holds a weak_intrusive_ptr: no cycle tensor -> grad_fn ->
    # hook -> tensor, and a retained grad still lands on a live tensor
    x = reference_engine.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = y / 2
    kept = x * 3
    kept.retain_grad()
    ref = weakref.ref(y)
    del y
    assert ref() is None
    (z.sum() + kept.sum()).backward()
    assert kept.grad is not None and kept.grad.tolist() == [1.0, 1.0]


def test_clear_saved_tensors_on_access_keeps_none(no_cycle_collector: None) -> None:
    # python_function.cpp: the first read hands the saved tensors out and keeps none (and
    # to_save is freed once the forward saved it)
    freed: list[bool] = []

    class Once(reference_engine.autograd.Function):
        clear_saved_tensors_on_access = True

        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            x, = ctx.saved_tensors
            ref = weakref.ref(x)
            del x
            freed.append(ref() is None)
            return g

    Once.apply(reference_engine.randn(3, requires_grad=True).clone()).sum().backward()
    assert freed == [True]


def test_a_dirty_saved_input_is_not_held_by_its_node(no_cycle_collector: None) -> None:
    # python_function.cpp drops dirty_tensors once read: the node holding the tensor marked
    # dirty (its own output) would keep it alive (test_custom_function_saving_mutated_view_
    # no_leak)
    class Dirty(reference_engine.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    x = reference_engine.tensor(1.0, requires_grad=True).clone()
    x = x.view_as(x)
    y = Dirty.apply(x)
    ref = weakref.ref(x)
    del x, y
    assert ref() is None


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.name)
def test_a_leaf_holds_its_accumulate_grad_weakly(no_cycle_collector: None,
                                                 engine: Engine) -> None:
    # torch's grad_accumulator_ is a weak_ptr: the graph's edges keep the node alive, and it
    # goes with the graph while the leaf lives on (a strong one made a leaf <-> node cycle)
    source = ("x = torch.rand(2, requires_grad=True)\n"
              "y = x * 2\n"
              "m = object()\n"
              "y.grad_fn.next_functions[0][0].metadata[0] = m\n"
              "r = weakref.ref(m)\n"
              "m = None\n"
              "assert r() is not None\n"
              "y = None\n"
              "assert r() is None\n"
              "z = x * 3\n"                 # a new graph gets a new node, without the metadata
              "assert len(z.grad_fn.next_functions[0][0].metadata) == 0\n")
    assert _statuses(engine, source) == ["ok"] * 11


# The cases that watch a value freed through a weak reference. A run does not switch the
# cycle collector off, which may so collect a cycle between two statements: here, with it
# off, the reference engine must free each by reference counting alone, as torch does.
WATCHING_CASES = [
    "cases/test_autograd/forward_ad/test_forward_level_cleanup.yaml",
    "cases/test_autograd/forward_ad/test_detach_view_tracking.yaml",
    "cases/anomaly/printstack_cleanup_frees_node_metadata.yaml",
    "cases/anomaly/assign_parent_cleanup_frees_node_metadata.yaml",
    "cases/test_autograd/retain_grad/test_retain_grad_cycle.yaml",
    "cases/test_autograd/custom_function/test_clear_saved_tensors_on_access.yaml",
    "cases/test_autograd/custom_function/test_custom_function_saving_mutated_view_no_leak.yaml",
    "cases/checkpoint/custom_function_saved_tensors_freed_after_early_stop.yaml",
    "cases/test_autograd/checkpoint/test_nested_checkpoint_graph_dies.yaml",
    "cases/test_autograd/checkpoint/test_nested_checkpoint_two_children_graph_dies.yaml",
]


@pytest.mark.parametrize("path", WATCHING_CASES)
def test_watching_cases_hold_by_reference_counting(no_cycle_collector: None, path: str) -> None:
    case = load_case(path)
    assert "weakref.ref(" in language.to_source(case.program)
    trace = run_program(ENGINES[0], case.program, seed=case.seed)
    assert trace.failure is None, trace.failure
