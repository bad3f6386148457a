"""The engine's graph-task API outside a backward: refused with torch's own text."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import reference_engine


@pytest.mark.parametrize("engine", [torch, reference_engine], ids=["torch", "reference"])
def test_queue_callback_outside_backward_is_refused(engine: object) -> None:
    with pytest.raises(RuntimeError) as info:
        engine.autograd.Variable._execution_engine.queue_callback(  # type: ignore[attr-defined]
            lambda: None)
    assert str(info.value) == reference_engine.messages.QUEUE_CALLBACK_OUTSIDE_BACKWARD


def test_no_graph_task_runs_outside_backward() -> None:
    assert reference_engine.engine.current_graph_task_id() == -1
    with pytest.raises(RuntimeError):
        reference_engine.engine.will_engine_execute_node(
            (reference_engine.ones(1, requires_grad=True) * 2).grad_fn)


def test_disabled_hooks_are_restored_after_an_error_in_the_block() -> None:
    graph = reference_engine.autograd.graph
    with pytest.raises(ValueError), graph.disable_saved_tensors_hooks("off"):
        raise ValueError
    assert reference_engine._C._autograd._saved_tensors_hooks_is_enabled()



@pytest.mark.parametrize(("engine", "task_id"), [
    (torch, torch._C._current_graph_task_id),
    (reference_engine, reference_engine.engine.current_graph_task_id)], ids=["torch", "reference"])
def test_a_nested_backward_is_its_own_graph_task(engine: Any, task_id: Any) -> None:
    # as torch: a backward run inside another's hook has its own id, the innermost one
    # (a mutation survivor: the outermost task's id)
    ids: dict[str, int] = {}

    def inner_hook(grad: Any) -> None:
        ids["inner"] = task_id()

    def outer_hook(grad: Any) -> None:
        ids["outer"] = task_id()
        with engine.enable_grad():
            a = engine.ones(2, requires_grad=True)
            b = a * 3
            b.register_hook(inner_hook)
            engine.autograd.grad(b.sum(), a)
        ids["outer_again"] = task_id()

    x = engine.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(outer_hook)
    y.sum().backward()
    assert -1 not in ids.values()
    assert ids["inner"] != ids["outer"] == ids["outer_again"]
    assert task_id() == -1
