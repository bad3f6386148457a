"""The few ops whose result's size neither their operands' shapes nor torch's meta device
tell (conformance.predict): it is in their operands' values (`F.one_hot(i)` makes max(i) + 1
columns, `repeat_interleave(t)` sum(t) elements) or grows as a power of a size
(`combinations(x, r)`, which torch computes through an r-dimensional grid of n ** r
elements). Their elements are counted before the call (operation_limits)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.run.tensor_read import tensor_values

# An op's name (a function's last path component, or a method's name) -> its rule.
Rule = Callable[[list[Any], dict[str, Any], Callable[[Any], bool]], int]


def _values(t: Any) -> np.ndarray:
    return np.asarray(tensor_values(t)).reshape(-1)


def _one_hot(args: list[Any], kwargs: dict[str, Any], is_tensor: Callable[[Any], bool]
             ) -> int:
    indices = args[0] if args else kwargs.get("tensor")
    classes = kwargs.get("num_classes", args[1] if len(args) > 1 else -1)
    if not is_tensor(indices) or not isinstance(classes, int) or classes != -1:
        return 0  # a class count given: the operands' sizes count it (predict.scan)
    values = _values(indices)
    top = int(values.max()) + 1 if values.size else 0
    return int(values.size) * max(top, 0)


def _repeat_interleave(args: list[Any], kwargs: dict[str, Any],
                       is_tensor: Callable[[Any], bool]) -> int:
    tensors: list[Any] = [a for a in [*args, kwargs.get("repeats")] if is_tensor(a)]
    if not tensors:
        return 0
    repeats = _values(tensors[-1])  # the repeats (alone: `repeat_interleave(repeats)`)
    total = int(np.abs(repeats.astype(np.int64)).sum()) if repeats.size else 0
    # each repeat copies at most one whole slice of the input
    return total * max(math.prod(tensors[0].shape), 1) if len(tensors) > 1 else total


def _combinations(args: list[Any], kwargs: dict[str, Any],
                  is_tensor: Callable[[Any], bool]) -> int:
    x: Any = args[0] if args else kwargs.get("input")
    r = kwargs.get("r", args[1] if len(args) > 1 else 2)
    if not is_tensor(x) or not isinstance(r, int):
        return 0
    n, r = math.prod(x.shape), max(r, 0)
    # the grid torch masks (n ** r), and the result: r columns of the combinations
    return max(n ** r, math.comb(n + r - 1 if kwargs.get("with_replacement") else n, r) * r)


RULES: dict[str, Rule] = {"one_hot": _one_hot, "repeat_interleave": _repeat_interleave,
                          "combinations": _combinations}


def elements(name: str, args: list[Any], kwargs: dict[str, Any],
             is_tensor: Callable[[Any], bool]) -> int:
    """The elements the op `name` would make of `args` and `kwargs` by its rule (0: no rule,
    or nothing its rule can tell)."""
    rule = RULES.get(name.rsplit(".", 1)[-1])
    if rule is None:
        return 0
    try:
        return rule(args, kwargs, is_tensor)
    except (TypeError, ValueError, AttributeError, OverflowError):
        return 0  # malformed operands: the engine reports them itself
