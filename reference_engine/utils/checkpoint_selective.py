"""Selective activation checkpointing (torch/utils/checkpoint.py: CheckpointPolicy,
SelectiveCheckpointContext, create_selective_checkpoint_contexts).

torch runs a non-reentrant checkpoint's forward under a caching TorchDispatchMode, which asks
the policy about each aten op and keeps the outputs of the ops it says to save; the
recomputation runs under a cached mode, which hands those outputs out again (once) instead
of computing them. Here the two modes sit at the engine's op-call level (`dispatch`, through
which the facade routes every registry op: ops/aten.py says how that maps onto aten ops).

One more difference: torch's modes sit below autograd, so a cached op's output gets its
autograd node from the layer above without the op running. The engine has no layer below
autograd: a cached op's forward runs again (building its node, saving what it saves), and
its outputs then take the cached values (an in-place write into them, allowed by
allow_cache_entry_mutation, shows as in torch: the cached value is the one written to).
For the same reason a policy asked about an in-place op sees its input with the op's
history already rebased and its version bumped (torch's sees the node before the op).
"""

from __future__ import annotations

import contextlib
import enum
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .. import messages
from ..grad_mode import no_grad
from ..ops.aten import OpOverload, OpOverloadPacket
from ..tensor import Tensor
from ..tensor_metadata import VersionCounter

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts"]


class CheckpointPolicy(enum.Enum):
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    # offloading is torch.compile's; eagerly these recompute, as in torch
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)


class SelectiveCheckpointContext:
    """What a policy is given first: torch 2.13 calls the policy only in the forward, so
    is_recompute is always False (deprecated there)."""

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class _Recompute:
    pass


_RECOMPUTE, _CONSUMED = _Recompute(), _Recompute()


class _VersionWrapper:
    """A cached output, detached, with its version then (a mutation of it is an error)."""

    def __init__(self, val: Any) -> None:
        self.val = val.detach() if isinstance(val, Tensor) else val
        self.version = self.val._version if isinstance(val, Tensor) else None

    def get_val(self, allow_mutation: bool) -> Any:
        if self.version is not None and not allow_mutation and \
                self.val._version != self.version:
            raise RuntimeError(messages.SAC_CACHED_TENSOR_MUTATED)
        return self.val


def _tree_map(fn: Callable[[Any], Any], out: Any) -> Any:
    return type(out)(_tree_map(fn, o) for o in out) if isinstance(out, (tuple, list)) \
        else fn(out)


Storage = defaultdict[OpOverload, dict[int, Any]]


class _Mode:
    """One of the two modes; entered as a context manager, active while on ACTIVE_MODES."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.counter: defaultdict[OpOverload, int] = defaultdict(int)

    def __enter__(self) -> _Mode:
        ACTIVE_MODES.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        ACTIVE_MODES.remove(self)

    def index(self, op: OpOverload) -> int:
        idx = self.counter[op]
        self.counter[op] += 1
        return idx

    def call(self, op: OpOverload, fn: Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
        raise NotImplementedError


class _CachingMode(_Mode):
    def __init__(self, policy_fn: Callable[..., Any], storage: Storage) -> None:
        super().__init__(storage)
        self.policy_fn = policy_fn

    def call(self, op: OpOverload, fn: Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
        out = fn(*args, **kwargs)
        idx = self.index(op)
        with _below_autograd():
            policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False,
                                                               op_output=out),
                                    op, *args, **kwargs)
        if isinstance(policy, bool):  # torch's _policy_from_bool
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        self.storage[op][idx] = _tree_map(_VersionWrapper, out) if policy in _SAVE \
            else _RECOMPUTE
        return out


class _CachedMode(_Mode):
    def __init__(self, storage: Storage, allow_cache_entry_mutation: bool) -> None:
        super().__init__(storage)
        self.allow_mutation = allow_cache_entry_mutation

    def __enter__(self) -> _Mode:
        # each recomputation counts from 0: a second one finds the entries consumed
        self.counter.clear()
        return super().__enter__()

    def call(self, op: OpOverload, fn: Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
        idx = self.index(op)
        entries = self.storage.get(op)
        if entries is None:
            raise RuntimeError(messages.sac_not_in_storage(str(op)))
        entry = entries.get(idx)
        if entry is None:
            raise RuntimeError(messages.sac_index_not_in_storage(str(op), idx))
        if entry is _CONSUMED:
            raise RuntimeError(messages.SAC_BACKWARD_EXTRA_TIME)
        if entry is _RECOMPUTE:
            return fn(*args, **kwargs)
        entries[idx] = _CONSUMED
        cached = _tree_map(lambda w: w.get_val(self.allow_mutation), entry)
        out = fn(*args, **kwargs)
        for o, c in zip(_flat(out), _flat(cached), strict=True):
            _take_value(o, c)
        return out


def _flat(out: Any) -> list[Any]:
    return [x for o in out for x in _flat(o)] if isinstance(out, (tuple, list)) else [out]


def _take_value(out: Any, cached: Any) -> None:
    if isinstance(out, Tensor) and isinstance(cached, Tensor) and \
            not np.array_equal(out._data, cached._data):
        out._data[...] = cached._data


@contextlib.contextmanager
def _below_autograd() -> Iterator[None]:
    """What torch's policy runs under, inside __torch_dispatch__ below the autograd and
    ADInplaceOrView layers: its ops record no graph and its in-place writes bump no version.
    (torch.is_grad_enabled() is False here where torch's says True.)"""
    VersionCounter.below_inplace_or_view = True
    try:
        with no_grad():
            yield
    finally:
        VersionCounter.below_inplace_or_view = False


# The modes entered, innermost last. torch pops a mode while its __torch_dispatch__ runs, so
# the op's own computation and the policy run without it: `dispatch` does the same.
ACTIVE_MODES: list[_Mode] = []


@contextlib.contextmanager
def disable_current_modes() -> Iterator[None]:
    """torch.utils._python_dispatch._disable_current_modes: no mode sees what runs inside
    (the harness reads values under it)."""
    saved = ACTIVE_MODES[:]
    ACTIVE_MODES.clear()
    try:
        yield
    finally:
        ACTIVE_MODES[:] = saved


def dispatch(op: OpOverload, fn: Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
    if not ACTIVE_MODES:
        return fn(*args, **kwargs)
    mode = ACTIVE_MODES.pop()
    try:
        return mode.call(op, fn, args, kwargs)
    finally:
        ACTIVE_MODES.append(mode)


def create_selective_checkpoint_contexts(policy_fn_or_list: Any,
                                         allow_cache_entry_mutation: bool = False
                                         ) -> tuple[_Mode, _Mode]:
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, OpOverload):
                # the engine's packet stands for torch's (its type is named as torch's)
                packet = isinstance(op, OpOverloadPacket)
                raise ValueError(messages.sac_not_an_overload(
                    str(op), "torch._ops.OpOverloadPacket" if packet else type(op).__name__,
                    packet))
        ops = policy_fn_or_list

        def policy_fn(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> CheckpointPolicy:
            return CheckpointPolicy.MUST_SAVE if op in ops \
                else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError(messages.SAC_POLICY_TYPE)
    storage: Storage = defaultdict(dict)
    return _CachingMode(policy_fn, storage), _CachedMode(storage, allow_cache_entry_mutation)
