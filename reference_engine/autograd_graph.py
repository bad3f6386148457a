"""torch.autograd.graph's gradient edges: where a tensor's gradient is computed, as a value
that autograd.grad and backward accept in place of the tensor (as an output to start from,
or an input to stop at)."""

from __future__ import annotations

from typing import NamedTuple

from . import engine, messages
from .grad_mode import enable_grad
from .graph import Node
from .tensor import Tensor


class GradientEdge(NamedTuple):
    node: Node
    output_nr: int
    # torch keeps a graph alive through a C++ node made for a custom Function's edge
    ownership_token: Node | None = None


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge into tensor's grad_fn, or into a leaf's AccumulateGrad."""
    if not tensor.requires_grad:
        raise RuntimeError(messages.GRADIENT_EDGE_NO_GRAD)
    node, _ = engine.gradient_edge(tensor)
    assert node is not None
    token = None
    from .function import BackwardCFunction
    if isinstance(node, BackwardCFunction):
        with enable_grad():
            token = tensor.view_as(tensor).grad_fn
    return GradientEdge(node, tensor.output_nr, token)


def edge_of(x: Tensor | GradientEdge) -> tuple[Node | None, int]:
    """The engine's (node, input_nr) for a tensor or a GradientEdge."""
    return engine.gradient_edge(x) if isinstance(x, Tensor) else (x.node, x.output_nr)
