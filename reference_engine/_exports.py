"""The registry's rows made into torch's API: torch.<op> (or its namespace's function) is the
forward of each function row, Tensor.<op> that of each method row (the function itself, so
method and function cannot drift apart), Tensor.<op>_ its in-place form; each a call of the
row's aten op (ops/aten.py), seen by selective activation checkpointing's modes while one is
active, and refusing what torch's argument parser refuses for the op's tensor inputs.

Part of the facade: the package (reference_engine/__init__.py) calls install() once every
module a row names is imported, with itself, where the functions go.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import sys
from types import ModuleType
from typing import Any

from . import autocast_mode, messages, registry
from .ops import aten
from .tensor import Tensor
from .utils import checkpoint_selective as selective
from .utils.checkpoint_selective import ACTIVE_MODES as SAC_MODES


def install(package: ModuleType) -> None:
    """Set every row's forward on `package` (or the namespace under it the row names) and
    on Tensor; point the aten-only rows' overloads at their forwards; route Tensor's
    arithmetic operators and adapter view methods through their aten ops."""
    modules = {name: _module(package, name) for name in sorted(
        {r.module for r in registry.OPS} | {r.inplace for r in registry.OPS
                                            if r.inplace is not None})}
    for row in registry.OPS:
        forward = getattr(modules[row.module], row.attr)
        inputs = 0 if row.sample is None else len(row.sample.shapes)
        if row.function:
            setattr(_namespace(package, row.namespace) if row.namespace else package,
                    row.attr, _tensors_required(row, inputs, forward, False))
        if row.method:
            _attach(row.name, _tensors_required(row, inputs, forward, True))
        if row.inplace is not None and row.inplace_name is not None:
            _attach(row.inplace_name, _routed(row.parser_name + "_", getattr(
                modules[row.inplace], row.inplace_name)))

    # the rows whose only API is their aten op (`torch.ops.aten.slice.Tensor`): a call of the
    # overload runs the forward (ops/aten.py), routed as any registry op's call
    for name in registry.ATEN_ONLY:
        aten_row = next(r for r in registry.OPS if r.name == name)
        aten.overload(name)._forward = _routed(name, getattr(modules[aten_row.module],
                                                            aten_row.attr))

    # Tensor's arithmetic operators are calls of their aten ops too (`a * b` is
    # aten.mul.Tensor), and so are the view methods written as adapters (`x.view(-1)` is
    # aten.view.default)
    for dunder, aten_name in {"__add__": "add", "__radd__": "add", "__sub__": "sub",
                              "__mul__": "mul", "__rmul__": "mul", "__truediv__": "div",
                              "__neg__": "neg", "__iadd__": "add_", "__isub__": "sub_",
                              "__imul__": "mul_", "__itruediv__": "div_", "view": "view",
                              "expand": "expand", "permute": "permute"}.items():
        setattr(Tensor, dunder, _routed(aten_name, getattr(Tensor, dunder)))


# The registry names a row's module (`module`, and `inplace` for its in-place form); each is
# imported statically by the package (the engine imports nothing by name at run time, see
# tests/test_reference_engine_is_independent.py) and found here by the name the row gives.
def _module(package: ModuleType, name: str) -> Any:
    module = sys.modules.get(f"{package.__name__}.{name}")
    if module is None:
        raise ImportError(messages.registry_module_not_imported(name))
    return module


def _attach(name: str, forward: object) -> None:
    if name in vars(Tensor):
        raise AssertionError(f"Tensor.{name} is written in tensor.py and is a registry "
                             f"method: keep one")
    setattr(Tensor, name, forward)


def _tensors_required(row: registry.OpRow, n: int, forward: Any, method: bool) -> Any:
    """`forward`, refusing what torch's argument parser refuses for its first `n`
    parameters (the op's tensor inputs) with its TypeError: None always, where the forward
    would take it as a number or fail inside (found by the generator: `torch.atan2(x, g)`
    with a `g` that autograd.grad(allow_unused=True) gave as None), and any other
    non-Tensor where the row takes no number (`OpRow.numbers`, `OpRow.overloads`), where
    the forward would compute with it or fail with an AttributeError. A method counts
    positions after self. It is also the call of the row's aten op (see `_routed`)."""
    if n == 0:
        return _routed(row.parser_name, forward)
    name = row.parser_name
    params = [("input" if p == "self" else p)
              for p in list(inspect.signature(forward).parameters)[:n]]
    # per parameter: the types taken besides a Tensor (anything but None, numbers, none)
    # (torch's Scalar: a complex number too, `torch.sub(z, 2 - 1j)`)
    op = aten.overload(row.parser_name)   # routed here too: one frame, not two
    takes = [object if row.overloads else (builtins.int, builtins.float, builtins.complex)
             if i in row.numbers else () for i in range(n)]

    @functools.wraps(forward)
    def checked(*args: Any, **kwargs: Any) -> Any:
        for i, (param, arg) in enumerate(zip(params, args, strict=False)):
            if arg is None or not isinstance(arg, (Tensor, takes[i])):
                raise TypeError(messages.argument_must_be_tensor(
                    name, param, i + 1 - method, type(arg).__name__))
        return _call(name, op, forward, args, kwargs)

    return checked


def _namespace(package: ModuleType, dotted: str) -> Any:
    """The module of a row's namespace: `nn.functional` is nn.functional, found from the
    package's attributes (a new namespace is a module the package imports)."""
    return functools.reduce(getattr, dotted.split("."), package)


def _routed(aten_name: str, forward: Any) -> Any:
    """`forward` as a call of torch.ops.aten.<aten_name>: seen by selective activation
    checkpointing's modes while one is active (utils/checkpoint_selective.py)."""
    op = aten.overload(aten_name)

    @functools.wraps(forward)
    def call(*args: Any, **kwargs: Any) -> Any:
        return _call(aten_name, op, forward, args, kwargs)

    return call


def _call(aten_name: str, op: Any, forward: Any, args: tuple[Any, ...],
          kwargs: dict[str, Any]) -> Any:
    """The call of an aten op: CPU autocast's cast policy first (its dispatch key sits
    above the Python one), then the selective-checkpoint modes, then the forward."""
    if SAC_MODES:
        def run(*a: Any, **k: Any) -> Any:
            return selective.dispatch(op, forward, a, k)
        return autocast_mode.run(aten_name, run, args, kwargs)
    return autocast_mode.run(aten_name, forward, args, kwargs)
