"""An engine module for tests of the verdict `unsupported`: real torch, except that it lacks
`torch.amin` and `torch.autograd.grad` (API paths it has nothing at), its `torch.exp` is 1% off
(tests.conformance.engine_wrong_exp), its `torch.sigmoid` raises AttributeError from its own
code (a failure, not a missing API), and its `torch.full` makes an object without tensor
methods (so `Tensor.sum` is missing)."""

from __future__ import annotations

import types
from typing import Any

import torch

from tests.conformance.engine_wrong_exp import exp  # noqa: F401  (1% off: a divergence)

LACKING = frozenset({"amin"})

# torch.autograd without `grad` (an engine's namespace can lack a function too)
autograd = types.SimpleNamespace(
    backward=torch.autograd.backward, Function=torch.autograd.Function,
    Variable=torch.autograd.Variable, function=torch.autograd.function)


def sigmoid(x: Any) -> Any:
    return x.no_such_helper()  # the engine's own bug: AttributeError inside its code


class Tensor:
    """What this engine's `torch.full` returns: a value without tensor methods."""

    def __init__(self, value: Any) -> None:
        self.value = value


def full(*args: Any, **kwargs: Any) -> Tensor:
    return Tensor(torch.full(*args, **kwargs))


def __getattr__(name: str) -> Any:
    if name in LACKING:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(torch, name)
