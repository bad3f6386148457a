"""Deep graphs (test_autograd.py's test_free_deep_graph family): building and
backpropagating through a chain must not recurse once per node. Rather than build torch's
100000-node chains (about 30 s in this engine), each test lowers the recursion limit to a
little above the current stack and builds a chain 10 times deeper than that headroom: any
per-node recursion of the engine's Python raises RecursionError. Freeing is CPython's
deallocation, which its trashcan keeps iterative (a 150000-node chain, built once by hand,
is freed in about a second)."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

import reference_engine as torch

HEADROOM = 100  # frames the engine may use above the test's own
DEPTH = 10 * HEADROOM


@contextmanager
def shallow_stack() -> Iterator[None]:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + HEADROOM)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


class MyOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor1, tensor2):  # type: ignore[no-untyped-def,override]
        return tensor1 + tensor2

    @staticmethod
    def backward(ctx, grad_output):  # type: ignore[no-untyped-def,override]
        return grad_output, grad_output


def _chain(y: torch.Tensor) -> torch.Tensor:
    for _ in range(DEPTH):
        y = y + y * 0.000001
    return y


def _inplace_chain(y: torch.Tensor) -> torch.Tensor:
    for _ in range(DEPTH):
        y += y * 0.000001
    return y


def _function_chain(y: torch.Tensor) -> torch.Tensor:
    for _ in range(DEPTH):
        y = MyOp.apply(y, y * 0.5)
    return y


@pytest.mark.parametrize("build", [_chain, _inplace_chain, _function_chain])
def test_a_deep_chain_is_backpropagated_and_freed_without_recursion(
        build: Callable[[torch.Tensor], torch.Tensor]) -> None:
    x = torch.ones(1, requires_grad=True)
    with shallow_stack():
        y = build(x.clone())
        y.backward()
        assert x.grad is not None and x.grad.item() > 0
        y = build(x.clone())
        del y   # freeing the whole chain at once, as the test's scope() exit does


def test_the_guard_catches_recursion() -> None:
    def recurse(n: int) -> int:
        return 0 if n == 0 else 1 + recurse(n - 1)

    with shallow_stack(), pytest.raises(RecursionError):
        recurse(DEPTH)
