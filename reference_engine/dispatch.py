"""The ops the core calls: one table, filled by the package facade.

The core (tensor.py and tensor_*.py, engine.py, forward_ad.py) sits below the ops, which
are written on it, yet a tensor's methods and the passes use some of them: Tensor.T is a
permute, `x + y` an add, the engine sums a grad to its input's shape, forward mode makes a
tangent's view. Rather than import up a layer, the core calls `dispatch.<name>(...)`;
reference_engine/__init__.py fills the table (`provide`) once every op module is imported,
before any tensor exists. This table is the one place the core reaches the ops, so the
import graph stays layered (tests/reference_engine/test_layout.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import messages

_PROVIDED: dict[str, Callable[..., Any]] = {}


def provide(**functions: Callable[..., Any]) -> None:
    """Enter functions in the table under their keyword names (each name once)."""
    for name, function in functions.items():
        if name in _PROVIDED:
            raise RuntimeError(messages.dispatch_provided_twice(name))
        _PROVIDED[name] = function
        globals()[name] = function


def __getattr__(name: str) -> Callable[..., Any]:
    """A name not (yet) provided: say where the table is filled."""
    raise AttributeError(messages.dispatch_not_provided(name))
