"""torch.utils.checkpoint: checkpoint and checkpoint_sequential (torch/utils/checkpoint.py),
written on the engine's public API as torch's is on its own.

Reentrant (use_reentrant=True): a custom Function runs `function` without grad and saves
its tensor inputs; its backward runs `function` again with grad on detached inputs and
backpropagates through that graph (a backward inside a backward). Non-reentrant: the
forward runs under saved-tensor hooks that save a placeholder for each tensor autograd would
save; the first unpack in a backward reruns `function` under hooks that collect the
recomputed tensors, stopping once the last one needed was saved (early stop), and each
placeholder hands out its tensor once per backward. Under a GraphExecGroup the backward calls
in it share one recomputation, each placeholder handing out its tensor once in all.

debug=True (or set_checkpoint_debug_enabled(True), which wins over the argument): a
CheckpointError raised while unpacking is raised again as torch's debug text (from it),
whose sections of recorded operator logs and Python stacks the engine leaves empty (it
records none: torch's LoggingTensorMode and captured tracebacks are not modelled).
Not modelled (refused, or ignored where torch's effect cannot be observed on a CPU engine):
preserve_rng_state (the harness serves random values itself; it is accepted and ignored),
the operator logs and stacks of debug's text, device states. CPU autocast's state (enabled,
dtype, cache) is taken when checkpoint is called and restored for each recomputation, as
torch's _get_autocast_kwargs; the device type's (CUDA's) is never enabled. context_fn is
taken (non-reentrant): selective checkpointing's contexts are checkpoint_selective.py.
determinism_check "default" compares each recomputed tensor's shape, dtype and device with
the forward's; "none" compares nothing.
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from .. import autocast_mode, autograd, engine, messages
from ..autograd_graph import saved_tensors_hooks
from ..function import Function
from ..grad_mode import enable_grad, is_grad_enabled, no_grad
from ..saved import SavedVariable
from ..tensor import Tensor
from .checkpoint_selective import (
    CheckpointPolicy,
    SelectiveCheckpointContext,
    create_selective_checkpoint_contexts,
)

__all__ = ["CheckpointError", "CheckpointPolicy", "GraphExecGroup",
           "SelectiveCheckpointContext", "checkpoint", "checkpoint_sequential",
           "create_selective_checkpoint_contexts", "set_checkpoint_debug_enabled",
           "set_checkpoint_early_stop"]


class CheckpointError(RuntimeError):
    """torch.utils.checkpoint.CheckpointError."""


def _detach_variable(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool,
                *args: Any) -> Any:
        if not any(a.requires_grad for a in args if isinstance(a, Tensor)):
            warnings.warn(messages.CHECKPOINT_NO_INPUT_REQUIRES_GRAD, UserWarning,
                          stacklevel=2)
        ctx.run_function = run_function
        ctx.cpu_autocast_kwargs = _cpu_autocast_kwargs()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx: Any, *args: Any) -> Any:
        # torch._C._is_checkpoint_valid: false in a backward that runs only part of the graph
        # (autograd.grad, backward(inputs=...))
        if engine.TASK_NODES[-1] is not None:
            raise RuntimeError(messages.CHECKPOINT_REENTRANT_GRAD)
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors, strict=True):
            inputs[i] = t
        detached = _detach_variable(tuple(inputs))
        with enable_grad(), autocast_mode.autocast("cpu", **ctx.cpu_autocast_kwargs):
            outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        with_grad = [(o, g) for o, g in zip(outputs, args, strict=False)
                     if isinstance(o, Tensor) and o.requires_grad]
        if not with_grad:
            raise RuntimeError(messages.CHECKPOINT_NO_OUTPUT_REQUIRES_GRAD)
        autograd.backward([o for o, _ in with_grad], [g for _, g in with_grad])
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached)
        return (None, None, *grads)


# ids for unpacks outside any backward, apart from the graph tasks' (which count up from 0)
_outside_ids = itertools.count(-2, -1)


def _cpu_autocast_kwargs() -> dict[str, Any]:
    """CPU autocast's state, to recompute under (torch's _get_autocast_kwargs)."""
    return {"enabled": autocast_mode.is_autocast_enabled("cpu"),
            "dtype": autocast_mode.get_autocast_dtype("cpu"),
            "cache_enabled": autocast_mode.is_autocast_cache_enabled()}


class _StopRecomputation(Exception):
    pass


class _Holder:
    """The placeholder saved instead of a tensor; per backward (graph task id), the index of
    its recomputed tensor, None once handed out."""

    def __init__(self) -> None:
        self.handles: dict[object, int | None] = {}


class _Frame:
    def __init__(self, function: Callable[..., Any], args: tuple[Any, ...],
                 early_stop: bool, recompute_context: Any) -> None:
        self.function = function
        self.recompute_context = recompute_context
        self.cpu_autocast_kwargs = _cpu_autocast_kwargs()
        self.early_stop = early_stop
        self.forward_completed = False
        self.ignore_saved_mismatch = False
        # torch saves the inputs as SavedVariables before its own hooks are pushed: under an
        # enclosing checkpoint they go through that one's hooks (so recomputing this one
        # recomputes the enclosing one first); otherwise they unpack as the input objects
        self.args = [SavedVariable(a, is_output=False) if isinstance(a, Tensor) else a
                     for a in args]
        self.holders: list[weakref.ref[_Holder]] = []
        self.recomputed: dict[object, list[Tensor]] = {}
        # determinism_check="default": each saved tensor's shape, dtype and device, which
        # the recomputed one must have (torch's _default_meta_extractor); "none": no check
        self.metadata: Callable[[Tensor], Any] = lambda x: None
        self.metadatas: list[Any] = []

    def pack(self, x: Tensor) -> _Holder:
        holder = _Holder()
        self.holders.append(weakref.ref(holder))
        self.metadatas.append(self.metadata(x))
        return holder

    def unpack(self, holder: _Holder) -> Tensor:
        # under a GraphExecGroup the group is the id: its backward calls share one
        # recomputation (and may each unpack a placeholder once in all)
        gid: object = _graph_exec_group["current"]
        if gid is None:
            gid = engine.current_graph_task_id()
            if gid == -1:
                # outside a backward each unpack recomputes (torch draws a fresh uuid)
                gid = next(_outside_ids)
        if gid not in self.recomputed:
            self.recompute(gid)
        index = holder.handles.get(gid)
        if index is None:
            raise CheckpointError(messages.checkpoint_unpack_twice(
                _graph_exec_group["current"] is not None))
        holder.handles[gid] = None
        return self.recomputed[gid][index]

    def recompute(self, gid: object) -> None:
        saved: list[Tensor] = []
        self.recomputed[gid] = saved

        def pack(x: Tensor) -> Tensor:
            x = x.detach() if x.requires_grad else x
            index = len(saved)
            saved.append(x)
            if index >= len(self.holders):
                if not self.forward_completed:
                    # a backward inside the checkpointed function itself
                    self.ignore_saved_mismatch = True
                    return x
                raise CheckpointError(messages.CHECKPOINT_MORE_SAVED)
            holder = self.holders[index]()
            if holder is not None:
                holder.handles[gid] = index
            if self.early_stop and len(saved) == len(self.holders):
                raise _StopRecomputation
            return x

        try:
            args = [a.unpack() if isinstance(a, SavedVariable) else a for a in self.args]
            with saved_tensors_hooks(pack, lambda x: x), enable_grad(), \
                    autocast_mode.autocast("cpu", **self.cpu_autocast_kwargs), \
                    self.recompute_context:
                self.function(*args)
        except _StopRecomputation:
            pass
        if self.ignore_saved_mismatch:
            return
        if len(saved) != len(self.holders):
            raise CheckpointError(messages.checkpoint_count_mismatch(len(self.holders),
                                                                     len(saved)))
        different = [(i, meta, self.metadata(saved[i]))
                     for i, (ref, meta) in enumerate(zip(self.holders, self.metadatas,
                                                         strict=True))
                     if ref() is not None and meta != self.metadata(saved[i])]
        if different:
            raise CheckpointError(messages.checkpoint_metadata_mismatch(different))


def _default_metadata(x: Tensor) -> dict[str, Any]:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_DETERMINISM_CHECKS: dict[str, Callable[[Tensor], Any]] = {
    "default": _default_metadata, "none": lambda x: None}


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Any = None, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs: Any) -> Any:
    if use_reentrant is None:
        warnings.warn(messages.CHECKPOINT_USE_REENTRANT_NOT_PASSED, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not None or debug is not False:
            raise ValueError(messages.CHECKPOINT_CONTEXT_FN_REENTRANT)
        return CheckpointFunction.apply(function, preserve, *args)
    # set_checkpoint_debug_enabled, where set, wins over the argument
    debug = debug if _debug["set"] is None else bool(_debug["set"])
    if debug and context_fn is not None:
        raise ValueError(messages.CHECKPOINT_DEBUG_CONTEXT_FN)
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(messages.checkpoint_determinism_check(list(_DETERMINISM_CHECKS),
                                                               determinism_check))
    # the forward runs under the first context, each recomputation under the second
    # (create_selective_checkpoint_contexts' modes); torch calls context_fn first of all
    forward_context, recompute_context = ((contextlib.nullcontext(), contextlib.nullcontext())
                                          if context_fn is None else context_fn())
    if not is_grad_enabled():
        return function(*args, **kwargs)
    # set_checkpoint_early_stop, where set, wins over the argument
    frame = _Frame(lambda *a: function(*a, **kwargs), args,
                   early_stop if _early_stop["set"] is None else bool(_early_stop["set"]),
                   recompute_context)
    frame.metadata = _DETERMINISM_CHECKS[determinism_check]
    suppressed = True
    with saved_tensors_hooks(frame.pack, _debug_unpack(frame.unpack) if debug else frame.unpack), \
            forward_context:
        result = function(*args, **kwargs)
        suppressed = False
    if suppressed:
        raise RuntimeError(messages.CHECKPOINT_FORWARD_CONTEXT_SUPPRESSED)
    frame.forward_completed = True
    return result


def _debug_unpack(unpack: Callable[[_Holder], Tensor]) -> Callable[[_Holder], Tensor]:
    """debug mode's unpack hook: a CheckpointError becomes torch's debug text (the
    operator logs and stacks it would list are not recorded: left empty)."""
    def unpack_with_debug_text(holder: _Holder) -> Tensor:
        try:
            return unpack(holder)
        except CheckpointError as e:
            raise CheckpointError(messages.CHECKPOINT_DEBUG_TEMPLATE.format(
                forward_traces="", recompute_traces="", forward_ops="", recompute_ops="")
            ) from e
    return unpack_with_debug_text


class GraphExecGroup:
    """torch.utils.checkpoint.GraphExecGroup: the non-reentrant checkpoints that backward
    calls under one instance reach recompute at most once for all of them; those calls must
    not need the same saved activation (unpacking a placeholder twice raises)."""

    def __enter__(self) -> GraphExecGroup:
        if _graph_exec_group["current"] is not None:
            raise RuntimeError(messages.graph_exec_group_nested(_graph_exec_group["current"]))
        _graph_exec_group["current"] = self
        return self

    def __exit__(self, *args: object) -> None:
        _graph_exec_group["current"] = None


# the GraphExecGroup entered, None outside one (torch._C._get_graph_exec_group)
_graph_exec_group: dict[str, GraphExecGroup | None] = {"current": None}


# set_checkpoint_early_stop's setting, None where no block sets it; read when a checkpoint
# runs its forward.
_early_stop: dict[str, bool | None] = {"set": None}


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    prev = _early_stop["set"]
    _early_stop["set"] = enable
    try:
        yield
    finally:
        _early_stop["set"] = prev


# set_checkpoint_debug_enabled's setting, None where no block sets it (or it sets None)
_debug: dict[str, bool | None] = {"set": None}


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    prev = _debug["set"]
    _debug["set"] = enabled
    try:
        yield
    finally:
        _debug["set"] = prev


def checkpoint_sequential(functions: Any, segments: int, input: Any,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Runs `functions` (a sequence of callables) in `segments` chunks, each but the last
    checkpointed (torch.utils.checkpoint.checkpoint_sequential)."""
    if use_reentrant is None:
        warnings.warn(messages.CHECKPOINT_SEQUENTIAL_USE_REENTRANT_NOT_PASSED, UserWarning,
                      stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    functions = list(functions)

    def run_function(start: int, end: int) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)
