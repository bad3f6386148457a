"""The tensors an operation would compute with, known before an engine runs it (limits.
MAX_TENSOR_ELEMENTS, checked by the interpreter on every operator, index and call).

Two rules, one for every op family:

- `scan`: an operand beyond the limit refuses the operation outright (nearly every op makes a
  tensor at least the size of its input; a view beyond the limit, such as an `expand`'s, can
  be made and observed, not operated on). It also gives a cheap upper bound on any tensor the
  operation can make: the product of every operand's sizes (each tensor's elements squared,
  for the ops that make n * n of n; each integer, float scale and list length counted at
  least 1). Below the limit nothing more is done: the common case costs
  one pass over the operands.
- `largest_made`: above that bound, the operation is run on torch's meta device (tensors of
  the operands' shapes and dtypes, no data, no memory), and every aten op it runs is
  watched, inside composite ops too: the largest tensor one makes (not a view) or is given
  (a broadcast a loss then reduces) is the answer. Torch's own shape rules (broadcasting,
  matmul, indexing, cat, ...) for every op, and no table of formulas to keep: an engine with
  torch's API has torch's shapes. Where the meta run cannot complete (torch needs data, as
  inside `allclose`) or cannot start (an operand with no meta counterpart), the operands'
  broadcast shape stands in (`broadcast_elements`); and the interpreter checks what every
  operation made, after it.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from conformance.run.limits import MAX_TENSOR_ELEMENTS


class _NoMeta(Exception):
    """An operand without a meta counterpart."""


def scan(operands: Iterable[Any], is_tensor: Callable[[Any], bool]
         ) -> tuple[tuple[int, ...] | None, int, bool]:
    """(the shape of an operand beyond the limit or None, the bound on any result, whether a
    tensor is among the operands), lists and tuples searched through."""
    bound = 1
    tensors = False
    stack = list(operands)
    while stack:
        v = stack.pop()
        if is_tensor(v):
            tensors = True
            count = math.prod(v.shape)
            if count > MAX_TENSOR_ELEMENTS:
                return tuple(int(n) for n in v.shape), bound, True
            # a dimension of 0 counts 1: (n, 0) @ (0, m) makes n * m zeros; and counted
            # squared: an op may make n * n elements of n (diag, diag_embed, diagflat)
            count = count or math.prod(max(int(n), 1) for n in v.shape)
            bound *= count * count
        elif isinstance(v, (list, tuple)):
            bound *= max(len(v), 1)
            stack.extend(v)
        elif isinstance(v, int) and not isinstance(v, bool):
            bound *= max(abs(v), 1)
        elif isinstance(v, float):  # a scale (F.interpolate's scale_factor)
            bound *= max(math.ceil(abs(v)), 1) if math.isfinite(v) else MAX_TENSOR_ELEMENTS + 1
    return None, bound, tensors


@functools.cache
def torch_module() -> Any:
    import torch  # the truth side's own module: the harness runs it in every process

    return torch


def shapes(operands: Iterable[Any], is_tensor: Callable[[Any], bool]) -> list[tuple[int, ...]]:
    """The shapes of the tensors among `operands` (lists and tuples searched), in order."""
    found: list[tuple[int, ...]] = []
    for v in operands:
        if is_tensor(v):
            found.append(tuple(int(n) for n in v.shape))
        elif isinstance(v, (list, tuple)):
            found.extend(shapes(v, is_tensor))
    return found


def largest_made(operation: Callable[..., Any], args: list[Any], kwargs: dict[str, Any],
                 is_tensor: Callable[[Any], bool]) -> tuple[int, tuple[int, ...], bool] | None:
    """The element count and shape of the largest tensor that running `operation` on `args`
    and `kwargs` (an engine's values) computes with, as torch does it on the meta device:
    every aten op it runs, also inside a composite op (a loss reducing a broadcast), is
    watched, and the largest tensor one makes that is not a view of its input, or is given
    (an expanded view an op then computes over), is the answer, with whether it is the whole
    answer: not where an aten op failed (torch needs data to go on inside `allclose`; a
    boolean mask), which may have computed more than it showed. An operation refused before
    any aten op ran (autograd.grad of tensors without a graph) computed nothing.
    None when an operand has no meta counterpart. `operation` is torch's callable for the
    operation (a function, an unbound Tensor method, an operator)."""
    try:
        margs = [_meta(a, is_tensor) for a in args]
        mkwargs = {k: _meta(v, is_tensor) for k, v in kwargs.items()}
    except _NoMeta:
        return None
    watch = _watcher()()
    complete = False
    try:
        # a meta op may warn as the real one will (a size mismatch of mse_loss): not a
        # warning of the statement's, and not recorded
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with watch:
                operation(*margs, **mkwargs)
        complete = True
    except Exception:  # the engine raises its own error, or torch needed data to go on
        complete = not watch.ran
    count, shape = watch.largest
    return count, shape, complete


def broadcast_elements(operands: Iterable[Any], is_tensor: Callable[[Any], bool]) -> int:
    """What an operation whose meta run could not complete may compute with, at most as far
    as its operands tell: their broadcast shape (an op that reduces a broadcast inside one
    aten kernel, as `allclose` does, shows it nowhere else), or the total of a list of
    tensors."""
    tensors = [s for s in (tuple(int(n) for n in v.shape) for v in operands if is_tensor(v))]
    total = sum(math.prod(s) for v in operands if isinstance(v, (list, tuple))
                for s in shapes(v, is_tensor))
    try:
        broadcast = math.prod(np.broadcast_shapes(*tensors)) if tensors else 0
    except ValueError:  # they do not broadcast together
        broadcast = 0
    return max(broadcast, total)


@functools.cache
def _watcher() -> type:
    """A TorchDispatchMode noting the largest tensor any aten op makes (not an alias of an
    input: a view or an in-place result, by the op's schema) or is given."""
    torch = torch_module()
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class Watch(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.largest: tuple[int, tuple[int, ...]] = (0, ())
            self.ran = False  # an aten op was called

        def note(self, t: Any) -> None:
            if isinstance(t, torch.Tensor) and t.numel() > self.largest[0]:
                self.largest = (t.numel(), tuple(t.shape))

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            self.ran = True
            for t in tree_flatten((args, kwargs))[0]:
                self.note(t)
            out = func(*args, **(kwargs or {}))
            results = out if isinstance(out, (tuple, list)) else (out,)
            for r, schema in zip(results, func._schema.returns, strict=False):
                if schema.alias_info is None:
                    for t in tree_flatten(r)[0]:
                        self.note(t)
            return out

    return Watch


def _meta(value: Any, is_tensor: Callable[[Any], bool]) -> Any:
    torch = torch_module()
    if is_tensor(value):
        dtype = getattr(torch, str(value.dtype).removeprefix("torch."), None)
        if not isinstance(dtype, torch.dtype):
            raise _NoMeta
        return torch.empty(tuple(int(n) for n in value.shape), dtype=dtype, device="meta")
    if isinstance(value, (list, tuple)):
        return type(value)(_meta(v, is_tensor) for v in value)
    if value is None or isinstance(value, (bool, int, float, str, slice, type(Ellipsis))):
        return value
    name = str(value).removeprefix("torch.")
    if type(value).__name__ == "dtype" and isinstance(getattr(torch, name, None), torch.dtype):
        return getattr(torch, name)
    raise _NoMeta  # a module, a hook, a node, a device (meta tensors stay on meta)
