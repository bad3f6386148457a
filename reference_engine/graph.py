"""Graph nodes: the objects torch exposes as ``grad_fn``.

Every node has ``next_edges`` (one per differentiable forward input: the producing
node and which of its outputs), ``input_metadata`` (shape/dtype/device of each
forward output, used to validate incoming grads), a sequence number that orders
execution, and the tensor hooks registered on the tensors it produced.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Optional

from .dtypes import device, dtype

if TYPE_CHECKING:
    from .tensor import Tensor

Edge = tuple[Optional["Node"], int]
Hook = Callable[["Tensor"], Optional["Tensor"]]

_sequence = itertools.count()
# AccumulateGrad nodes get the largest sequence number, so the engine runs them as soon as
# they are ready (torch: accumulate_grad.cpp constructs with UINT64_MAX).
MAX_SEQUENCE = 2**64 - 1


class Meta(NamedTuple):
    shape: tuple[int, ...]
    dtype: dtype
    device: device


class Node:
    def __init__(self, next_edges: list[Edge], sequence_nr: int | None = None) -> None:
        self.next_edges = next_edges
        self.sequence_nr = next(_sequence) if sequence_nr is None else sequence_nr
        self.input_metadata: list[Meta] = []
        # Hooks of the tensors this node produced, keyed by their output_nr.
        self.tensor_pre_hooks: dict[int, dict[int, Hook]] = {}
        self.retains_grad_hooks: dict[int, Hook] = {}

    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self) -> tuple[Edge, ...]:
        return tuple(self.next_edges)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        raise NotImplementedError

    def release_variables(self) -> None:
        """Drop saved tensors once the node has run without retain_graph."""

    def needs(self, i: int) -> bool:
        return self.next_edges[i][0] is not None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"


class GraphRoot(Node):
    """Fans the root grads out to several roots (only used when there is more than one)."""

    def __init__(self, edges: list[Edge], grads: list[Tensor | None]) -> None:
        super().__init__(edges)
        self.grads = grads

    def name(self) -> str:
        return "torch::autograd::GraphRoot"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return list(self.grads)


_node_classes: dict[str, type[Any]] = {}


def node_class(name: str, base: type[Any]) -> type[Any]:
    """One Python class per torch node name, so type(grad_fn).__name__ reads like torch."""
    key = f"{base.__name__}.{name}"
    if key not in _node_classes:
        _node_classes[key] = type(name, (base,), {})
    return _node_classes[key]


_hook_ids = itertools.count()


class RemovableHandle:
    def __init__(self, table: dict[int, Any]) -> None:
        self.id = next(_hook_ids)
        self._table = table

    def remove(self) -> None:
        self._table.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *args: object) -> None:
        self.remove()
