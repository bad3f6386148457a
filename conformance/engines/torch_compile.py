"""torch.compile (dynamo and AOTAutograd) as an engine under test: `--engine
conformance.engines.torch_compile`.

Torch's whole API is this module's (attribute lookups fall through to `torch`); what
differs is that, while a statement of the engine side executes, every call of a
differentiable op of the case vocabulary (`reference_engine.registry.OPS`, and the
arithmetic operators and indexing) that has an input requiring grad, with grad mode on, runs
as a function compiled by `torch.compile(fullgraph=True)` with the backend named by
`CONFORMANCE_TC_BACKEND`: `aot_eager` (default: AOTAutograd's forward and backward graphs,
run by eager kernels) or `inductor` (the same graphs compiled to C++; slow to compile).
The op's result then has AOTAutograd's `CompiledFunctionBackward` as its `grad_fn`, and
every backward through it runs the compiled backward graph.

What is compiled is one op call at a time, torch's own function with the program's
arguments, routed by a `TorchFunctionMode`: dynamo never traces the harness's interpreter,
so there are no graph breaks of the harness's making, and a divergence points at what
dynamo and AOTAutograd make of that op (its decomposition, its saved tensors, its views,
its backward). What this does not test: fusion across ops (each op is its own graph), and
ops on tensors that do not require grad (they run eagerly).

Known divergences: expectations/conformance.engines.torch_compile.yaml; findings:
docs/findings/torch_compile.md.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from conformance.engines import chosen_backend
from reference_engine.registry import OPS

BACKENDS = ("aot_eager", "inductor")
BACKEND_VARIABLE = "CONFORMANCE_TC_BACKEND"

# checked at import: a bad value is a usage error before anything runs
BACKEND = chosen_backend(BACKEND_VARIABLE, BACKENDS, "torch.compile")
# what expectations entries' `backend:` condition is checked against
conformance_backend = BACKEND

# The names compiled: the vocabulary's differentiable ops (function and method share the
# name), their operator forms, and indexing. In-place forms are left eager: what they
# change is the program's own tensor, which a compiled function cannot return. That holds
# for the rows that are in-place ops themselves (`zero_`, `fill_`, `copy_`, `as_strided_`)
# as for the `_` forms of the others, which are not rows.
OPERATORS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
             "__truediv__", "__rtruediv__", "__matmul__", "__rmatmul__", "__pow__",
             "__rpow__", "__neg__", "__getitem__")


def _in_place(name: str) -> bool:
    return name.endswith("_") and not name.startswith("__")


COMPILED = frozenset({r.name for r in OPS if r.differentiable and not _in_place(r.name)}
                     | set(OPERATORS))

# AOTAutograd makes one CompiledFunctionBackward node per compiled call instead of eager's
# per-op node: by design, and it would hide every other difference. Masked fields are
# reported (verdict `masked`), never passed.
_GRAPH = "AOTAutograd records a compiled op as one CompiledFunctionBackward node"
conformance_masks: tuple[tuple[str, str], ...] = (("*.grad_fn", _GRAPH), ("*.graph", _GRAPH))


def _call(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return func(*args, **kwargs)


_compiled: dict[str, Callable[..., Any]] = {}


def _compiled_call(name: str) -> Callable[..., Any]:
    """`_call` compiled, with a code object of its own per op name: dynamo keeps its cache
    and its recompile count per code object, so ops do not share one."""
    fn = _compiled.get(name)
    if fn is None:
        code = _call.__code__.replace(co_name=f"compiled_{name.strip('_')}")
        own = types.FunctionType(code, _call.__globals__, code.co_name)
        fn = _compiled[name] = torch.compile(own, backend=BACKEND, fullgraph=True,
                                             dynamic=False)
    return fn


def _requires_grad(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return value.requires_grad
    if isinstance(value, (list, tuple)):
        return any(_requires_grad(v) for v in value)
    return False


class _CompileOps(TorchFunctionMode):
    """Routes each call of a compiled name with an input requiring grad through its
    compiled function (the mode is off while its handler runs, so the call inside is
    torch's own)."""

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in COMPILED and torch.is_grad_enabled() and \
                (_requires_grad(args) or _requires_grad(tuple(kwargs.values()))):
            return _compiled_call(name)(func, args, kwargs)
        return func(*args, **kwargs)


# Each op name's compiled function is compiled again for every new shape, dtype or argument
# it meets (dynamic=False); past dynamo's recompile_limit (8 per code object) a fullgraph
# function fails with "Dynamo recompile limit exceeded", an error of the harness's making
# that eager torch has not: a generated program calling `sum` on nine shapes diverged at the
# ninth call. A run resets dynamo, so the limit only bounds one program's compiles.
RECOMPILE_LIMIT = 1000


def conformance_reset() -> None:
    """Before each run: forget everything dynamo compiled, so that an item's result never
    depends on the items run before it (dynamo's recompile counts, warnings given once)."""
    torch._dynamo.reset()
    _compiled.clear()
    torch._dynamo.config.recompile_limit = RECOMPILE_LIMIT
    torch._dynamo.config.accumulated_recompile_limit = RECOMPILE_LIMIT


@contextlib.contextmanager
def conformance_statement() -> Iterator[None]:
    """Around executing (not observing) each statement: compiled ops. A statement run from
    inside another (a hook's or a custom Function's body, called by torch during a
    backward) is already inside the mode."""
    if any(isinstance(m, _CompileOps) for m in torch.overrides._get_current_function_mode_stack()):
        yield
        return
    with _CompileOps():
        yield


def __getattr__(name: str) -> Any:
    # Everything else is torch's: `torch.tensor`, `torch.autograd.grad`, `is_tensor`, ...
    return getattr(torch, name)
