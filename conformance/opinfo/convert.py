"""OpInfo's samples and callables, as an engine with torch's API takes them.

A sample's values are torch's: each tensor becomes the engine's `tensor(values, dtype=,
requires_grad=)` from a NumPy copy (the one way the harness makes an engine's tensors,
engines.Engine.tensor), a dtype, device or memory format the object at the same API path of
the engine (`torch.float64`), containers element by element. OpInfo's callables are reached
the same way: `torch.<name>` and `Tensor.<name>` by path (an aten overload,
`torch.ops.aten.<op>.<overload>`, too), a parameterless torch.nn module OpInfo passes as
the engine's module of its class (MODULE_ARGUMENTS), and OpInfo's own Python code (a
lambda such as `where`'s, which reorders arguments; a sample's output processing, with the
helpers of its module it closes over, as sample_inputs_svd's fn_U its uniformize) is run
with its global `torch` bound to the engine, when `torch` is all of torch it reaches (and
wrapper_set_seed, the one helper of torch's test suite given a stand-in: _unseeded). What
cannot be carried over is Unconvertible, naming it: never a value silently changed.
"""

from __future__ import annotations

import dis
import functools
import types
from collections.abc import Callable
from typing import Any

from conformance.run.engine import Engine
from conformance.run.tensor_read import tensor_values

_PLAIN = (bool, int, float, complex, str, type(None), slice, type(Ellipsis))


class Unconvertible(Exception):
    """A sample value or OpInfo callable the harness cannot give an engine."""


def _torch() -> Any:
    import torch

    return torch


def engine_value(engine: Engine, value: Any, memo: dict[int, Any]) -> Any:
    """`value` (a sample's input, argument or keyword argument) as the engine's; `memo` maps
    the ids of the torch tensors converted so far to the engine's, so a tensor a sample
    passes twice is one tensor in the engine too. MissingAPI when the engine lacks a dtype,
    device or format the value names; Unconvertible for a value with no rule."""
    torch = _torch()
    if isinstance(value, torch.Tensor):
        if id(value) not in memo:
            if value.layout != torch.strided:
                raise Unconvertible(f"a {value.layout} tensor (only strided tensors convert)")
            dtype = engine.resolve(str(value.dtype))
            memo[id(value)] = engine.tensor(tensor_values(value.resolve_conj().resolve_neg()),
                                            dtype=dtype, requires_grad=value.requires_grad)
        return memo[id(value)]
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, (torch.dtype, torch.memory_format, torch.layout)):
        return engine.resolve(str(value))
    if isinstance(value, torch.device):
        return engine.resolve("torch.device")(str(value))
    if isinstance(value, torch.Size):
        return tuple(int(n) for n in value)
    if isinstance(value, (list, tuple)):
        return type(value)(engine_value(engine, v, memo) for v in value)
    if isinstance(value, dict):
        return {k: engine_value(engine, v, memo) for k, v in value.items()}
    if type(value).__name__ in MODULE_ARGUMENTS and isinstance(value, torch.nn.Module):
        return _engine_module(engine, value)
    raise Unconvertible(f"a {type(value).__name__} ({value!r:.80})")


# torch.nn modules without parameters or buffers that OpInfo's samples pass (a distance to
# triplet_margin_with_distance_loss): each is built as the engine's `torch.nn.<class>` from
# its constructor's arguments, read from the attributes torch keeps them in
# (PairwiseDistance keeps p as `norm`)
MODULE_ARGUMENTS: dict[str, dict[str, str]] = {
    "PairwiseDistance": {"p": "norm", "eps": "eps", "keepdim": "keepdim"},
}


def _engine_module(engine: Engine, module: Any) -> Any:
    if any(True for _ in module.parameters()) or any(True for _ in module.buffers()):
        raise Unconvertible(f"a {type(module).__name__} with parameters or buffers")
    arguments = {arg: getattr(module, attr)
                 for arg, attr in MODULE_ARGUMENTS[type(module).__name__].items()}
    return engine.resolve(f"torch.nn.{type(module).__name__}")(**arguments)


def api_path(fn: Any, name: str | None = None) -> str | None:
    """The API path of a torch callable: `torch.<name>` when `fn` is that function (an
    OpInfo's `name`, e.g. `nn.functional.relu`), `torch.Tensor.<m>` for a Tensor method,
    `torch.ops.aten.<op>.<overload>` for an aten overload; None for other code."""
    torch = _torch()
    if name is not None:
        obj: Any = torch
        for part in name.split("."):
            obj = getattr(obj, part, None)
        if obj is not None and obj is fn:
            return f"torch.{name}"
    method = getattr(fn, "__name__", None)
    if method is not None and getattr(torch.Tensor, method, None) is fn:
        return f"torch.Tensor.{method}"
    if isinstance(fn, torch._ops.OpOverload) and fn.namespace == "aten":
        # an aten overload (OpInfo's `slice` is torch.ops.aten.slice.Tensor)
        return f"torch.ops.aten.{fn._opname}.{fn._overloadname}"
    return None


_REBOUND: dict[tuple[int, int], Callable[..., Any]] = {}


def engine_callable(engine: Engine, fn: Callable[..., Any], name: str | None = None
                    ) -> Callable[..., Any]:
    """`fn` (an OpInfo callable) as the engine's: the engine's object at `fn`'s API path
    (MissingAPI if it lacks it), or OpInfo's Python function with its global `torch` bound
    to the engine (and so each function of its module it closes over). Unconvertible when
    `fn` reaches torch otherwise (a torch helper it calls, a torch function it closes over),
    which would run torch on the engine's values."""
    if engine.name == "torch":
        return fn
    path = api_path(fn, name)
    if path is not None:
        return engine.resolve(path)
    if not isinstance(fn, types.FunctionType):
        raise Unconvertible(f"{fn!r:.80} is neither torch.<name>, a Tensor method nor Python "
                            "code")
    cached = _REBOUND.get((id(fn), id(engine.module)))
    if cached is None:
        _reaches_only_torch(fn)
        scope = dict(fn.__globals__)
        scope["torch"] = engine.module
        scope.update({n: _stand_ins()[id(v)] for n, v in scope.items() if id(v) in _stand_ins()})
        rebound = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__,
                                     _closure(engine, fn))
        rebound.__kwdefaults__ = fn.__kwdefaults__
        # the key holds ids: keep `fn` alive with its copy, so an id is never reused
        cached = _REBOUND[(id(fn), id(engine.module))] = rebound
        rebound.__wrapped__ = fn  # type: ignore[attr-defined]
    return cached


def _unseeded(op: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """OpInfo's wrapper_set_seed (torch.testing._utils) for another engine: torch seeds its
    generator with 42 around the call so that a random op repeats its values. No engine's
    generator draws torch's stream, whatever its seed, so the call is made as it is: a sample
    whose values are random diverges (the map leaves it out with its reason), one that draws
    nothing (a dropout not training) is compared as any other."""
    return op(*args, **kwargs)


@functools.cache   # torch is imported when a lambda is first rebound, not with this module
def _stand_ins() -> dict[int, Callable[..., Any]]:
    """The helpers of torch's test suite an OpInfo lambda may call, by id, each with what the
    rebound lambda calls instead (the helper itself would run torch)."""
    try:
        from torch.testing._utils import wrapper_set_seed
    except ImportError:   # another torch: the lambdas that call it are Unconvertible
        return {}
    return {id(wrapper_set_seed): _unseeded}


def _own_helper(fn: types.FunctionType, value: Any) -> bool:
    """Whether a value `fn` closes over is a Python function of the same module (OpInfo's
    own sample code: sample_inputs_svd's fn_U calls its uniformize), rebound with it."""
    return isinstance(value, types.FunctionType) and value.__globals__ is fn.__globals__


def _closure(engine: Engine, fn: types.FunctionType) -> tuple[Any, ...] | None:
    """`fn`'s closure cells, each own helper (_own_helper) rebound to the engine too."""
    if fn.__closure__ is None:
        return None
    return tuple(types.CellType(engine_callable(engine, c.cell_contents))
                 if _own_helper(fn, c.cell_contents) else c for c in fn.__closure__)


def _attributes_only(instructions: list[dis.Instruction], name: str, value: Any) -> bool:
    """Whether a closed-over OpInfo is only read for its attributes (`op_info.name`, as
    sample_inputs_linalg_lu's out_fn does): data, not torch code the function would call."""
    if type(value).__name__ != "OpInfo" and not any(
            c.__name__ == "OpInfo" for c in type(value).__mro__):
        return False
    uses = [k for k, i in enumerate(instructions)
            if i.opname == "LOAD_DEREF" and i.argval == name]
    return all(k + 1 < len(instructions) and instructions[k + 1].opname == "LOAD_ATTR"
               and not instructions[k + 1].argrepr.startswith("NULL|self + ")
               for k in uses)


def _reaches_only_torch(fn: types.FunctionType) -> None:
    """Unconvertible unless every global `fn` loads (but `torch`) and every value it closes
    over is outside torch: a helper of torch's test suite would call torch itself."""
    instructions = list(dis.get_instructions(fn))
    loaded = {i.argval for i in instructions if i.opname == "LOAD_GLOBAL"}
    values = [fn.__globals__.get(n) for n in loaded - {"torch"}
              if id(fn.__globals__.get(n)) not in _stand_ins()]
    values += [c.cell_contents for name, c in zip(fn.__code__.co_freevars, fn.__closure__ or (),
                                                  strict=True)
               if not _attributes_only(instructions, name, c.cell_contents)
               and not _own_helper(fn, c.cell_contents)]
    for value in values:
        module = getattr(value, "__module__", None) or getattr(value, "__name__", "")
        if callable(value) and str(module).split(".")[0] == "torch":
            raise Unconvertible(f"{fn.__qualname__} calls {getattr(value, '__name__', value)} "
                                "of torch, which cannot run on another engine's tensors")
