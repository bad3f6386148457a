"""torch.autograd.graph (torch/autograd/graph.py): gradient edges (where a tensor's gradient
is computed, a value autograd.grad and backward accept in place of the tensor, as an output
to start from or an input to stop at), saved-tensor hooks as context managers, and hooks
over several tensors (register_multi_grad_hook)."""

from __future__ import annotations

import contextlib
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from . import engine, inplace_write, messages, saved
from .dtypes import device
from .function import BackwardCFunction
from .grad_mode import enable_grad, no_grad
from .graph import Node, RemovableHandle
from .ops.basic import copying, to_copy
from .tensor import Tensor

__all__ = ["GradientEdge", "allow_mutation_on_saved_tensors", "disable_saved_tensors_hooks",
           "get_gradient_edge", "increment_version", "register_multi_grad_hook", "save_on_cpu",
           "saved_tensors_hooks"]


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
    if isinstance(node, BackwardCFunction):
        with enable_grad():
            token = tensor.view_as(tensor).grad_fn
    return GradientEdge(node, tensor.output_nr, token)


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Bumps each tensor's version counter, as an in-place op would; an inference tensor has
    none and is skipped (no error, in inference mode or out of it)."""
    tensors = (tensor,) if isinstance(tensor, Tensor) else tensor
    if not isinstance(tensors, Iterable):
        raise RuntimeError(messages.INCREMENT_VERSION_NOT_ITERABLE)
    for t in tensors:
        if not t.is_inference():
            t._version_counter.bump()


def edge_of(x: Tensor | GradientEdge) -> tuple[Node | None, int]:
    """The engine's (node, input_nr) for a tensor or a GradientEdge."""
    return engine.gradient_edge(x) if isinstance(x, Tensor) else (x.node, x.output_nr)


class saved_tensors_hooks:
    """Within the block, every tensor saved for backward is kept as `pack_hook(tensor)` and
    given back by `unpack_hook(packed)`; the innermost block's pair wins."""

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        saved.push_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        saved.pop_default_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on cpu and moved back to their device when unpacked
    (pin_memory only changes how torch copies, not what is saved)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple[device, Tensor]:
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed: tuple[device, Tensor]) -> Tensor:
            where, tensor = packed
            return to_copy.to(tensor, where)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Within the block, setting saved-tensor hooks raises RuntimeError(error_message); so
    does entering it while hooks are set. The previous state comes back on exit."""
    previous = saved.disabled_error_message()
    try:
        saved.disable_hooks(error_message)
        yield
    finally:
        if previous is None:
            saved.enable_hooks()
        else:
            saved.disable_hooks(previous, fail_if_non_empty=False)


class _MultiHandle:
    """Removes each tensor hook a multi-grad hook registered."""

    def __init__(self, handles: tuple[RemovableHandle, ...]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    # a context manager, as every torch hook handle (torch's _MultiHandle is a
    # RemovableHandle): leaving the block removes the hooks
    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *args: object) -> None:
        self.remove()


MULTI_GRAD_MODES = ("all", "any")


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable[[Any], None], *,
                             mode: str = "all") -> _MultiHandle:
    """"all": once per backward, after the grads of every tensor that backward computes,
    `fn(grads)` with None for the others; "any": `fn(grad)` with the first grad computed.
    Both are tensor hooks on each tensor, keyed by the running backward (graph task)."""
    if mode not in MULTI_GRAD_MODES:
        raise ValueError(messages.multi_grad_mode(MULTI_GRAD_MODES, mode))
    if mode == "any":
        ran: set[int] = set()

        def first_only(grad: Tensor) -> None:
            task = engine.current_graph_task_id()
            if task not in ran:
                ran.add(task)
                fn(grad)

        return _MultiHandle(tuple(t.register_hook(first_only) for t in tensors
                                  if t.requires_grad))
    nodes: list[Node | None] = [engine.gradient_edge(t)[0] for t in tensors]
    seen: dict[int, int] = {}                     # per graph task: grads received so far
    grads: dict[int, list[Tensor | None]] = {}
    expected: dict[str, int] = {}

    def receiver(i: int) -> Callable[[Tensor], None]:
        def hook(grad: Tensor) -> None:
            task = engine.current_graph_task_id()
            count = seen.get(task, 0)
            seen[task] = count + 1
            buffer = grads.setdefault(task, [None] * len(tensors))
            if count == 0:  # the first call knows which tensors this backward reaches
                expected["calls"] = sum(engine.will_engine_execute_node(n) for n in nodes
                                        if n is not None)
            buffer[i] = grad
            if count == expected["calls"] - 1:
                del seen[task], grads[task]
                fn(buffer)
        return hook

    return _MultiHandle(tuple(t.register_hook(receiver(i)) for i, t in enumerate(tensors)))


# ---- allow_mutation_on_saved_tensors (torch/autograd/graph.py) ---------------------------
# A tensor saved for backward is remembered by (id, data pointer, version) and its storage
# by (data pointer, version); an in-place write to any tensor of that storage and version
# first clones the saved original, and backward unpacks the clone. The maps are weak, as
# torch's: once a graph frees its saved tensors (their handles), they are forgotten.
_allow_mutation_enabled = {"on": False}


class _Handle:
    pass


def _data_ptr(t: Tensor) -> int:
    """torch's storage identity (_get_sid reads the storage, not the tensor's first element):
    a view's is its root's, also when its data are a copy here (a conj view)."""
    root = t._base if t._base is not None else t
    return int(root._data.__array_interface__["data"][0])


class _AllowMutationOnSavedContext:
    def __init__(self) -> None:
        self.cloned: weakref.WeakKeyDictionary[_Handle, Tensor] = weakref.WeakKeyDictionary()
        self.original: weakref.WeakKeyDictionary[_Handle, Tensor] = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle: weakref.WeakValueDictionary[tuple[int, int, int], _Handle] = \
            weakref.WeakValueDictionary()
        self.sid_to_tid: defaultdict[tuple[int, int], set[tuple[int, int, int]]] = \
            defaultdict(set)

    def pack(self, tensor: Tensor) -> _Handle:
        sid = (_data_ptr(tensor), tensor._version_counter.value)
        tid = (id(tensor), *sid)
        self.sid_to_tid[sid].add(tid)
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None:   # the same tensor at the same version is saved once
            handle = _Handle()
            self.tid_to_weakhandle[tid] = handle
            self.original[handle] = tensor
        return handle

    def unpack(self, handle: _Handle) -> Tensor:
        if not _allow_mutation_enabled["on"]:
            raise AssertionError(messages.ALLOW_MUTATION_OUTSIDE_CONTEXT)
        if handle in self.cloned:
            return self.cloned[handle]
        if handle not in self.original:
            raise AssertionError(messages.ALLOW_MUTATION_OUTSIDE_CONTEXT)
        return self.original[handle]

    def before_write(self, t: Tensor) -> None:
        for tid in self.sid_to_tid.get((_data_ptr(t), t._version_counter.value), ()):
            handle = self.tid_to_weakhandle.get(tid)
            # saved once but freed by a backward since, or cloned already
            if handle is None or handle in self.cloned:
                continue
            with no_grad():
                self.cloned[handle] = copying.clone(self.original[handle])
            del self.original[handle]

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[_AllowMutationOnSavedContext]:
    """Tensors saved for backward may be modified in place within the block: each is cloned
    before its first write, and backward (in the same block) uses the clone. torch's order:
    the hooks are entered before nesting is refused, and the `finally` that clears the
    state runs for a refused nested block too (leaving the outer one disabled)."""
    ctx = _AllowMutationOnSavedContext()
    with saved_tensors_hooks(ctx.pack, ctx.unpack):
        inplace_write.BEFORE_WRITE.append(ctx.before_write)
        try:
            if _allow_mutation_enabled["on"]:
                raise RuntimeError(messages.ALLOW_MUTATION_NESTED)
            _allow_mutation_enabled["on"] = True
            yield ctx
        finally:
            ctx.clear()
            _allow_mutation_enabled["on"] = False
            inplace_write.BEFORE_WRITE.remove(ctx.before_write)
