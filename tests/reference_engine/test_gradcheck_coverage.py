"""Every OpSpec of the reference engine is reached by test_gradcheck's rows.

The set of OpSpecs is read from the engine's modules (not written here), and the set that
the gradcheck rows reach is read from the graphs those rows build: the forward graph, which
test_backward_matches_central_difference checks, and the create_graph graph of its first
derivative, which test_double_backward_matches_central_difference checks. A new OpSpec
without a row that builds its node fails here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from typing import Any

import numpy as np
import pytest

import reference_engine as torch
from reference_engine.autograd_meta import OpSpec
from reference_engine.graph import Node
from tests.reference_engine.gradcheck_rows import OPS, _outputs

# OpSpecs whose node only a third-order graph builds: they appear in the backward formulas of
# other backward nodes (a formula's formula), which central differences of first and second
# derivatives cannot see. The test below requires each to be unreached at second order and
# reached at third, so this list cannot go stale.
# (AddBackward1, tensor + Scalar, was one until issue 24's activations: gelu's and
# softplus's second derivatives build it at second order)
THIRD_ORDER_ONLY: dict[str, str] = {}
# Rows whose third-order graph builds the THIRD_ORDER_ONLY nodes.
THIRD_ORDER_ROWS: tuple[str, ...] = ()
# OpSpecs with no derivative at all (derivatives.yaml's not_implemented): their backward
# raises torch's "the derivative for ... is not implemented", so central differences have
# nothing to check; test_the_underivable_have_no_derivative holds each to that.
NO_DERIVATIVE = ("UniqueBackward0", "Unique2Backward0", "UniqueDimBackward0",
                 "UniqueConsecutiveBackward0")


def _opspecs() -> dict[str, str]:
    """grad_fn name -> module.NAME of every OpSpec defined at module level in the engine."""
    found: dict[str, str] = {}
    for info in pkgutil.walk_packages(torch.__path__, "reference_engine."):
        module = importlib.import_module(info.name)
        for attr, value in vars(module).items():
            if isinstance(value, OpSpec):
                found.setdefault(value.grad_fn, f"{info.name}.{attr}")
    return found


def _node_names(roots: Iterable[Node | None]) -> set[str]:
    """Short class names of every node reachable from roots, including the op node a
    CopySlices wraps (it is not among its next_functions)."""
    names: set[str] = set()
    seen: set[int] = set()
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        names.add(node.name().rsplit("::", 1)[-1])
        wrapped = getattr(node, "fn", None)
        if isinstance(wrapped, Node):
            stack.append(wrapped)
        stack.extend(fn for fn, _ in node.next_functions if fn is not None)
    return names


def _graphs(name: str, order: int) -> set[str]:
    """Node names in the graphs of row `name` up to derivative `order` (1: forward graph,
    2: plus the graph of the first derivative, 3: plus that of the second)."""
    f, shapes = OPS[name]
    rng = np.random.default_rng(0)
    xs = [torch.tensor(rng.uniform(-1, 1, s), requires_grad=True) for s in shapes]
    total: Any = sum(((o * o).sum() for o in _outputs(f(*xs))), torch.tensor(0.0))
    names = _node_names([total.grad_fn])
    for _ in range(order - 1):
        if not total.requires_grad:
            break
        grads = torch.autograd.grad(total, xs, create_graph=True, allow_unused=True,
                                    materialize_grads=True)
        names |= _node_names(g.grad_fn for g in grads)
        total = sum((g.sum() for g in grads), torch.tensor(0.0))
    return names


def test_every_opspec_is_reached_by_gradcheck() -> None:
    specs = _opspecs()
    assert len(specs) > 50, "the engine's OpSpecs were not found"
    reached = set().union(*(_graphs(name, 2) for name in OPS))
    missing = {specs[n] for n in set(specs) - reached - set(THIRD_ORDER_ONLY)
               - set(NO_DERIVATIVE)}
    assert not missing, f"OpSpecs with no gradcheck row building their node: {sorted(missing)}"


def test_the_exceptions_are_still_exceptions() -> None:
    """THIRD_ORDER_ONLY is built at third order and not before."""
    specs = _opspecs()
    assert set(THIRD_ORDER_ONLY) <= set(specs)
    second = set().union(*(_graphs(name, 2) for name in OPS))
    third = set().union(*(_graphs(name, 3) for name in THIRD_ORDER_ROWS))
    assert not set(THIRD_ORDER_ONLY) & second, "reached at second order: drop the exception"
    assert set(THIRD_ORDER_ONLY) <= third


def test_the_underivable_have_no_derivative() -> None:
    """Each NO_DERIVATIVE OpSpec's backward raises the not-implemented error (its text is
    torch's), whatever it is given: an exception that went stale fails here."""
    specs = _opspecs()
    for name in NO_DERIVATIVE:
        module, attr = specs[name].rsplit(".", 1)
        spec = getattr(importlib.import_module(module), attr)
        with pytest.raises(NotImplementedError, match="is not implemented"):
            spec.backward(None, torch.ones(1))
