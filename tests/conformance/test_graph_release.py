"""The harness holds no graph a program let go of: rebinding the last name of a tensor frees
its graph at once (as torch's is), without waiting for Python's cycle collector, so a case can
watch a graph being freed (allow_mutation_on_saved_tensors' clones dropped, saved tensors
released)."""

from __future__ import annotations

import weakref

import pytest

import reference_engine
from conformance.case import language
from conformance.run.engine import Engine
from conformance.run.interpreter import run_program
from conformance.run.tensor_read import graph_signature


def test_graph_signature_keeps_no_node(no_cycle_collector: None) -> None:
    x = reference_engine.ones(2, requires_grad=True)
    y = (x * 2).sum()
    node = weakref.ref(y.grad_fn)
    assert graph_signature(y.grad_fn) == "SumBackward0(MulBackward0(AccumulateGrad, None))"
    del y
    assert node() is None


@pytest.mark.parametrize("full_snapshots", [False, True])
def test_rebinding_a_name_frees_its_graph(no_cycle_collector: None,
                                         full_snapshots: bool) -> None:
    program = language.parse(
        "with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:\n"
        "    a = torch.randn(2, 3, requires_grad=True).clone()\n"
        "    out = (a ** 2).sum()\n"
        "    a.sin_()\n"
        "    assert len(ctx.cloned) == 1\n"
        "    out = None\n"
        "    assert len(ctx.cloned) == 0\n")
    trace = run_program(Engine("reference_engine", reference_engine), program,
                        full_snapshots=full_snapshots)
    assert [s.outcome.status for s in trace.steps] == ["ok"] * 7
