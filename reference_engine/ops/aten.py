"""torch.ops.aten's op objects, as far as selective activation checkpointing reaches them: a
policy (utils/checkpoint_selective.py) is called with the op it is asked about, and compares
it with `torch.ops.aten.sin.default` (by `==`, `is` or `in` a list).

The engine has no dispatcher: its analogue of an aten op call is a call of a registry op
(`torch.sin`, `Tensor.sin`, `Tensor.sin_`, the facade's exports; __init__.py routes them
through utils/checkpoint_selective.dispatch). An op has one overload object here where torch
has one per signature (`mul.Tensor`, `mul.Scalar`): it is named after the overload torch picks
for the call the registry's forward models (`OVERLOADS`, else `default`), and stands for all
of them. An op a registry op calls inside the engine is not a call of its own (a composite
op is one call, where torch's dispatch mode sees the aten ops it decomposes into). Calling an
overload runs the forward the facade binds to it, for the registry's rows whose only API is
their aten op (registry.ATEN_ONLY: `torch.ops.aten.slice.Tensor`); calling another is not
modelled (NotImplementedError).
"""

from __future__ import annotations

from typing import Any

from .. import messages
from ..registry import ATEN_OVERLOADS

# (the registry's table: case programs may name these ops, conformance reads it there)
OVERLOADS = ATEN_OVERLOADS


class OpOverload:
    """torch._ops.OpOverload: one op; compared by identity (one object per name)."""

    def __init__(self, name: str, overload: str) -> None:
        self._name = f"aten.{name}"
        self._overloadname = overload
        # the forward a call runs: bound by the facade for the registry's ATEN_ONLY rows,
        # whose only API is their aten op (`torch.ops.aten.slice.Tensor`); None elsewhere
        self._forward: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._forward is None:
            raise NotImplementedError(messages.aten_call_not_modelled(str(self)))
        return self._forward(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self._name}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        return f"{self._name}.{self._overloadname}"


class OpOverloadPacket:
    """torch._ops.OpOverloadPacket (`torch.ops.aten.sin`): its attribute is the overload."""

    def __init__(self, name: str) -> None:
        self._qualified_op_name = f"aten.{name}"
        self._overload = OpOverload(name, OVERLOADS.get(name, "default"))

    def __getattr__(self, overload: str) -> OpOverload:
        if overload == self.__dict__["_overload"]._overloadname:
            return self.__dict__["_overload"]
        raise AttributeError(messages.aten_no_overload(self.__dict__["_qualified_op_name"],
                                                       overload))

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._qualified_op_name}')>"

    def __str__(self) -> str:
        return self._qualified_op_name


_PACKETS: dict[str, OpOverloadPacket] = {}


def packet(name: str) -> OpOverloadPacket:
    """The one packet of an op name (made on first use)."""
    if name not in _PACKETS:
        _PACKETS[name] = OpOverloadPacket(name)
    return _PACKETS[name]


def overload(name: str) -> OpOverload:
    return packet(name)._overload


def __getattr__(name: str) -> Any:
    # torch.ops.aten.<name>: the registry's ops (the facade makes their packets when it
    # routes them, so another name is not an op of the engine)
    if name in _PACKETS:
        return _PACKETS[name]
    raise AttributeError(messages.aten_no_op(name))
