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

from . import anomaly_mode, messages
from .dtypes import device, dtype, type_string

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
    # torch's generated nodes compute only the grads the running backward wants (see
    # should_compute); a custom Function's backward and GraphRoot return all of theirs.
    computes_only_wanted = True

    def __init__(self, next_edges: list[Edge], sequence_nr: int | None = None) -> None:
        self.next_edges = next_edges
        self.sequence_nr = next(_sequence) if sequence_nr is None else sequence_nr
        self.input_metadata: list[Meta] = []
        # Hooks of the tensors this node produced, keyed by their output_nr.
        self.tensor_pre_hooks: dict[int, dict[int, Hook]] = {}
        self.retains_grad_hooks: dict[int, Hook] = {}
        # Hooks registered on the node itself (grad_fn.register_prehook / register_hook),
        # keyed by handle id, in registration order.
        self.pre_hooks: dict[int, Callable[..., Any]] = {}
        self.post_hooks: dict[int, Callable[..., Any]] = {}
        if anomaly_mode.is_anomaly_enabled():
            anomaly_mode.record(self)

    def name(self) -> str:
        return type(self).__name__

    @property
    def metadata(self) -> dict[Any, Any]:
        """torch's `grad_fn.metadata`: a dict the node keeps for its users, empty at first
        and the same dict on every read."""
        return self.__dict__.setdefault("_metadata", {})

    @property
    def next_functions(self) -> tuple[Edge, ...]:
        return tuple(self.next_edges)

    def register_prehook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """hook(grad_outputs) -> new grad_outputs or None, before the node runs."""
        handle = RemovableHandle(self.pre_hooks)
        self.pre_hooks[handle.id] = hook
        return handle

    def register_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """hook(grad_inputs, grad_outputs) -> new grad_inputs or None, after it ran."""
        handle = RemovableHandle(self.post_hooks)
        self.post_hooks[handle.id] = hook
        return handle

    def call_pre_hooks(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        """torch's call_pre_hooks: each node pre-hook may replace the incoming grads."""
        if not self.pre_hooks:   # the common case, at every node of every backward
            return grads
        for hook in list(self.pre_hooks.values()):
            result = hook(tuple(grads))
            if result is not None:
                grads = list(_hook_result(result, grads, hook))
        return grads

    def call_post_hooks(self, outputs: list[Tensor | None], inputs: list[Tensor | None]
                        ) -> list[Tensor | None]:
        """torch's call_post_hooks: each node hook sees (grad_inputs, grad_outputs) and may
        replace grad_inputs (the grads the node passes to its next functions)."""
        for hook in list(self.post_hooks.values()):
            result = hook(tuple(outputs), tuple(inputs))
            if result is not None:
                outputs = list(_hook_result(result, outputs, hook))
        return outputs

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        raise NotImplementedError

    def __call__(self, *grads: Any) -> Any:
        """THPCppFunction_call: apply the node to one grad (or None) per output, under the
        caller's grad mode and without hooks; one result, or a tuple when there are none or
        several."""
        from .tensor import Tensor  # late: tensor imports this module (the core circle)
        if len(grads) != len(self.input_metadata):
            raise TypeError(messages.node_call_arity(len(self.input_metadata), len(grads)))
        for i, g in enumerate(grads):
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(messages.node_call_not_variable(i))
        out = self.apply(list(grads))
        return out[0] if len(out) == 1 else tuple(out)

    def release_variables(self) -> None:
        """Drop saved tensors once the node has run without retain_graph."""

    def needs(self, i: int) -> bool:
        return self.next_edges[i][0] is not None

    def should_compute(self, i: int) -> bool:
        """torch's task_should_compute_output: input i has an edge, and the running backward
        executes (or captures at) the node it leads to, so its grad is wanted."""
        fn = self.next_edges[i][0]
        wanted = TASK_NODES[-1]
        return fn is not None and (wanted is None or fn in wanted)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"


# The nodes each running backward executes or captures at (torch's GraphTask exec_info),
# innermost last; None for a backward that runs every node it reaches.
TASK_NODES: list[set[Node] | None] = [None]


class GraphRoot(Node):
    """Fans the root grads out to several roots (only used when there is more than one)."""

    def __init__(self, edges: list[Edge], grads: list[Tensor | None]) -> None:
        super().__init__(edges)
        self.grads = grads

    computes_only_wanted = False

    def name(self) -> str:
        return "torch::autograd::GraphRoot"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return list(self.grads)


def hook_name(hook: Any) -> str:
    return str(getattr(hook, "__name__", type(hook).__name__))


def _hook_result(result: Any, original: list[Any], hook: Any) -> tuple[Any, ...]:
    """A node hook's replacement values, checked as torch's python_hook.cpp checks them."""
    if not isinstance(result, tuple):
        raise TypeError(messages.hook_result_type("tuple", type(result).__name__))
    if len(result) != len(original):
        raise RuntimeError(messages.hook_result_count(hook_name(hook), len(result),
                                                      len(original)))
    for old, new in zip(original, result, strict=True):
        check_hook_value(old, new, hook)
    return result


def check_hook_value(original: Any, result: Any, hook: Any) -> None:
    """check_single_result + check_variable_result: a hook may not change a grad's
    presence, type, device or size."""
    from .tensor import Tensor  # late: tensor imports this module (the core circle)
    if result is None:
        return
    if original is None:
        raise RuntimeError(messages.HOOK_REPLACED_NONE)
    if not isinstance(result, Tensor):
        raise TypeError(messages.hook_result_type("Variable", type(result).__name__))
    name = hook_name(hook)
    if result.dtype is not original.dtype or result.device.type != original.device.type:
        raise RuntimeError(messages.hook_changed_type(name, _type_string(original),
                                                      _type_string(result)))
    if tuple(result.shape) != tuple(original.shape):
        raise RuntimeError(messages.hook_changed_size(name))


def _type_string(t: Tensor) -> str:
    return type_string(t.dtype, t.device)


_node_classes: dict[tuple[str, str], type[Any]] = {}


def node_class(name: str, base: type[Any]) -> type[Any]:
    """One Python class per torch node name, so type(grad_fn).__name__ reads like torch."""
    key = (base.__name__, name)
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
