"""The jvps of the backward ops (reference_engine/ops/backward.py), which forward-over-reverse
runs on dual tensors: each tangent equals the central difference of the op along the
tangents, in float64."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import reference_engine as torch
from reference_engine.ops import backward as bw
from reference_engine.ops import nll

fwAD = torch.autograd.forward_ad
_RNG = np.random.default_rng(22)


def _t(*shape: int) -> Any:
    return torch.tensor(_RNG.standard_normal(shape), dtype=torch.float64)


_TARGET = torch.tensor([1, 0, 2])
_TOTAL_WEIGHT = torch.tensor(3.0, dtype=torch.float64)
OPS: dict[str, tuple[Callable[..., Any], int]] = {
    "threshold_backward": (lambda go, x: bw.threshold_backward(go, x, 0.1), 2),
    "sigmoid_backward": (bw.sigmoid_backward, 2),
    "tanh_backward": (bw.tanh_backward, 2),
    "softmax_backward_data": (lambda go, y: bw.softmax_backward_data(go, y, 1), 2),
    "log_softmax_backward_data": (lambda go, y: bw.log_softmax_backward_data(go, y, 1), 2),
    "nll_loss_backward": (lambda go, x: nll.nll_loss_backward(go.sum(), x, _TARGET, None, "mean",
                                                             -100, _TOTAL_WEIGHT), 2),
}


@pytest.mark.parametrize("name", OPS)
def test_the_tangent_is_the_central_difference(name: str) -> None:
    fn, n = OPS[name]
    primals = [_t(3, 4) for _ in range(n)]
    tangents = [_t(3, 4) for _ in range(n)]
    with fwAD.dual_level():
        out = fn(*(fwAD.make_dual(p, t) for p, t in zip(primals, tangents, strict=True)))
        tangent = fwAD.unpack_dual(out).tangent
    eps = 1e-6
    plus = fn(*(p + eps * t for p, t in zip(primals, tangents, strict=True)))
    minus = fn(*(p - eps * t for p, t in zip(primals, tangents, strict=True)))
    numeric = (plus - minus) / (2 * eps)
    assert tangent is not None
    np.testing.assert_allclose(tangent.numpy(), numeric.numpy(), rtol=1e-5, atol=1e-6)


def test_nll_loss_backwards_tangent_reads_grad_output_alone() -> None:
    # torch's codegen: the formula reads grad_output_t only, so a tangent of self alone
    # gives the result none (unpack_dual(...).tangent is None), where zeros would be wrong
    with fwAD.dual_level():
        x = fwAD.make_dual(_t(3, 4), _t(3, 4))
        out = nll.nll_loss_backward(torch.tensor(1.0, dtype=torch.float64), x, _TARGET, None,
                                    "mean", -100, _TOTAL_WEIGHT)
        assert fwAD.unpack_dual(out).tangent is None
