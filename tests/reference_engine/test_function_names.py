"""Two custom Functions of one name each keep their own backward (torch's FunctionMeta makes
one backward class per Function): a graph built with the first runs the first's backward
after the second is defined. The engine once shared one class per name, so a later `MyOp`
(another test's, or a case's redefinition) took over every earlier MyOp node."""

from __future__ import annotations

from typing import Any

import reference_engine as torch


def _function(factor: float) -> Any:
    class MyOp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # type: ignore[no-untyped-def,override]
            return x * 1

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def,override]
            return g * factor

    return MyOp


def test_a_later_function_of_the_same_name_leaves_an_earlier_ones_backward() -> None:
    first = _function(2.0)
    x = torch.ones(1, requires_grad=True)
    y = first.apply(x)
    second = _function(3.0)
    assert type(y.grad_fn).__name__ == "MyOpBackward"
    assert type(y.grad_fn) is not second._backward_cls
    y.backward()
    assert x.grad is not None and x.grad.item() == 2.0
    second.apply(x).backward()
    assert x.grad.item() == 5.0
