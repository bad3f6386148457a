"""The grad-mode context managers as function decorators, which case programs cannot reach
(the case language has no `def`): as torch's, the decorated function keeps its name and
docstring and runs in the mode (a mutation survivor: functools.wraps removed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import reference_engine as engine


def doubled(x: Any) -> Any:
    """Twice x."""
    return x * 2


@pytest.mark.parametrize("make", [lambda m: m.no_grad(), lambda m: m.enable_grad(),
                                  lambda m: m.set_grad_enabled(False), lambda m: m.no_grad])
def test_a_decorated_function_keeps_its_name_and_docstring(make: Callable[[Any], Any]) -> None:
    mine, theirs = make(engine)(doubled), make(torch)(doubled)
    for attribute in ("__name__", "__qualname__", "__doc__", "__wrapped__"):
        assert getattr(mine, attribute) == getattr(theirs, attribute)
    assert mine.__name__ == "doubled"


def test_a_decorated_function_runs_in_the_mode() -> None:
    x = engine.ones(2, requires_grad=True)
    assert not engine.no_grad()(doubled)(x).requires_grad
    assert engine.is_grad_enabled()
