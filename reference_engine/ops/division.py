"""Division with a rounding mode: div.Tensor_mode (DivBackward2), its rounding_mode None,
"trunc" or "floor", and the kernels that round (ATen's div_trunc / div_floor). div without
a rounding mode is elementwise.div, which hands a given one here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec
from ..tensor import Tensor
from .common import _elementwise, _promotes, wrap, zeros_like
from .elementwise import div, mul, neg, sub


def _div_mode_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """div_tensor_self_backward / div_tensor_other_backward: zeros with a rounding mode,
    else DivBackward0's formulas."""
    if c.rounding_mode is not None:
        return c.grads(lambda: zeros_like(g), lambda: zeros_like(g))
    return c.grads(lambda: div(g, c.other),
                   lambda: mul(neg(g), div(div(c.self, c.other), c.other)))


DIV_MODE = OpSpec(
    "DivBackward2", ("self", "other"), {"self": ("other",), "other": ("self", "other")},
    _div_mode_backward,
    jvp=lambda c: zeros_like(c.result) if c.rounding_mode is not None else
    sub(div(c.self_t, c.other), div(mul(c.other_t, div(c.self, c.other)), c.other)))


def _div_rounded(mode: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """BinaryOpsKernel div_trunc / div_floor. Floats: trunc(a / b); floor as numpy's
    floor_divide, which is ATen's div_floor_floating (fmod, then the sign correction).
    Integers: C's truncating division, or Python's floor division."""
    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if np.issubdtype(np.result_type(a, b), np.floating):
            return np.trunc(a / b) if mode == "trunc" else np.floor_divide(a, b)
        q = np.floor_divide(a, b)
        if mode == "floor":
            return q
        return q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0)))
    return fn


def div_mode(self: Any, other: Any, rounding_mode: str | None) -> Tensor:
    """div.Tensor_mode (DivBackward2, which a Python number other also takes, wrapped)."""
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(messages.div_rounding_mode(rounding_mode))
    ts = [wrap(self), wrap(other)]
    dt = _promotes(ts)
    if rounding_mode is None:
        return _elementwise(DIV_MODE, np.true_divide, ts, rounding_mode=None,
                            compute_dtype=dt if dt.is_differentiable
                            else dtypes.get_default_dtype())
    return _elementwise(DIV_MODE, _div_rounded(rounding_mode), ts, rounding_mode=rounding_mode)
