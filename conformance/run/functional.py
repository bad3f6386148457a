"""torch.autograd.functional's jacobian and hessian, bounded by the element limit.

They build a whole Jacobian inside torch, where no statement of the program is checked: a
loop of one `autograd.grad` per output element, then a stack (vectorize=False), or a vmap
over a standard basis of total-outputs x total-outputs elements (vectorize=True; forward
mode: of the inputs). `jacobian(lambda t: t * 2, torch.ones(8192))` made 2^26 elements
(512 MB) before anything refused it. The Jacobian's elements are counted before torch's loop
runs: the function the program gives is called first by torch, once (the forward), and the
wrapper counts its output against the inputs there; a Hessian's size (inputs x inputs), and
forward mode's basis (inputs x inputs, made before the function is called), are known from
the inputs alone and are counted before the call.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from conformance.run import limits

JACOBIAN = "torch.autograd.functional.jacobian"
HESSIAN = "torch.autograd.functional.hessian"


def _elements(value: Any, is_tensor: Callable[[Any], bool]) -> int:
    """The elements of a tensor, or of the tensors of a tuple or list of them."""
    if is_tensor(value):
        return math.prod(int(n) for n in value.shape)
    if isinstance(value, (tuple, list)):
        return sum(_elements(v, is_tensor) for v in value)
    return 0


def _arguments(args: list[Any], kwargs: dict[str, Any]) -> tuple[Any, Any, bool, bool]:
    """func, inputs, vectorize and forward mode of a jacobian or hessian call (both take
    (func, inputs, create_graph, strict, vectorize, ...))."""
    func = args[0] if args else kwargs.get("func")
    inputs = args[1] if len(args) > 1 else kwargs.get("inputs")
    vectorize = bool(args[4] if len(args) > 4 else kwargs.get("vectorize", False))
    strategy = args[5] if len(args) > 5 else kwargs.get("strategy", "reverse-mode")
    return func, inputs, vectorize, strategy == "forward-mode"


def jacobian_elements(outputs: int, inputs: int, vectorize: bool, forward: bool) -> int:
    """The largest allocation of a Jacobian of `outputs` x `inputs` elements: the Jacobian
    itself, and with vectorize the basis vmap runs over (total x total of the side it
    differentiates from)."""
    side = inputs if forward else outputs
    return max(outputs * inputs, side * side if vectorize else 0)


def bounded(path: str | None, args: list[Any], kwargs: dict[str, Any],
            is_tensor: Callable[[Any], bool]) -> list[Any]:
    """`args` to call `path` with: for jacobian, the function given wrapped so that its
    output is counted before torch builds the Jacobian; a hessian refused before it runs
    when its inputs make one beyond the limit. Other calls' `args`, unchanged."""
    if path not in (JACOBIAN, HESSIAN):
        return args
    func, inputs, vectorize, forward = _arguments(args, kwargs)
    count = _elements(inputs, is_tensor)
    if path == HESSIAN:
        # a scalar's Hessian: the gradient (inputs) differentiated by the inputs
        limits.check_elements(jacobian_elements(count, count, vectorize, forward),
                              f"the Hessian `hessian(...)` of {count} inputs")
        return args
    if vectorize and forward:
        # the basis of the inputs' tangents is made before the function is called
        limits.check_elements(count * count, f"the basis `jacobian(...)` pushes forward for "
                              f"{count} inputs")
    if not callable(func):
        return args  # torch reports a malformed call itself

    @functools.wraps(func)
    def counted(*a: Any, **k: Any) -> Any:
        out = func(*a, **k)
        made = _elements(out, is_tensor)
        limits.check_elements(jacobian_elements(made, count, vectorize, forward),
                              f"the Jacobian `jacobian(...)` of {made} outputs by {count} "
                              "inputs")
        return out

    if not args:
        kwargs["func"] = counted  # the caller's own dict of this call's keywords
        return args
    return [counted, *args[1:]]
