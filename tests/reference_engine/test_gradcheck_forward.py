"""torch.autograd.gradcheck's forward-mode check (check_forward_ad=True) in the reference
engine: it passes a right jvp, names the output and input of a wrong one, calls the function
as often as torch does, and refuses what it does not model."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import reference_engine as torch
from reference_engine.gradcheck import GradcheckError


def _scaled(jvp_factor: float, counter: list[int]) -> Any:
    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any) -> Any:
            return x * 2, y.clone()

        @staticmethod
        def backward(ctx: Any, gx: Any, gy: Any) -> Any:
            return gx * 2, gy

        @staticmethod
        def jvp(ctx: Any, x_t: Any, y_t: Any) -> Any:
            counter[0] += 1
            return x_t * 2, y_t * jvp_factor

    return Fn


def _inputs(n: int = 1) -> tuple[Any, Any]:
    return (torch.rand(n, dtype=torch.float64, requires_grad=True),
            torch.rand(n, dtype=torch.float64, requires_grad=True))


def test_right_jvp_passes() -> None:
    calls = [0]
    assert torch.autograd.gradcheck(_scaled(1.0, calls).apply, _inputs(3), check_forward_ad=True)


def test_wrong_jvp_names_output_and_input() -> None:
    with pytest.raises(GradcheckError, match="Jacobian computed with forward mode mismatch for "
                       "output 1 with respect to input 1"):
        torch.autograd.gradcheck(_scaled(1.1, [0]).apply, _inputs(2), check_forward_ad=True)
    assert not torch.autograd.gradcheck(_scaled(1.1, [0]).apply, _inputs(2),
                                        check_forward_ad=True, raise_exception=False)


def test_forward_only_skips_backward() -> None:
    class NoBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 3

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            return t * 3

    x = torch.rand(2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(NoBackward.apply, (x,), check_forward_ad=True,
                                    check_backward_ad=False)
    with pytest.raises(RuntimeError, match="must implement either the backward"):
        torch.autograd.gradcheck(NoBackward.apply, (x,), check_forward_ad=True)


@pytest.mark.parametrize(("undefined", "calls"), [(False, 2), (True, 6)])
def test_jvp_calls_as_torch(undefined: bool, calls: int) -> None:
    # test_autograd.py test_gradcheck_forward_ad_respects_requires_grad's counts: once per
    # input for the Jacobian, then twice per input for the undefined-tangent check
    counter = [0]
    torch.autograd.gradcheck(_scaled(1.0, counter).apply, _inputs(), check_forward_ad=True,
                             check_backward_ad=False, check_undefined_grad=undefined)
    assert counter[0] == calls


def test_refusals() -> None:
    x = torch.rand(2, dtype=torch.float64, requires_grad=True)
    with pytest.raises(AssertionError, match="requires check_forward_ad to be True"):
        torch.autograd.gradcheck(torch.sin, (x,), check_batched_forward_grad=True)
    with pytest.raises(NotImplementedError):
        torch.autograd.gradcheck(torch.sin, (x,), check_forward_ad=True,
                                 check_batched_forward_grad=True)


def test_complex_inputs_and_outputs() -> None:
    z = torch.rand(2, dtype=torch.complex128, requires_grad=True)
    x = torch.rand(2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: (t * t.conj()).real, (z,), check_forward_ad=True)
    assert torch.autograd.gradcheck(lambda t: torch.exp(t) * 1j, (z,), check_forward_ad=True)
    assert torch.autograd.gradcheck(lambda t, r: t.abs() * r, (z, x), check_forward_ad=True)

    def wrong_backward(t: Any) -> Any:
        y = t.clone()
        y.register_hook(lambda g: g + 1e-2)
        return y

    with pytest.raises(GradcheckError, match=r"^While considering the imaginary part of complex "
                       r"outputs only, Jacobian mismatch for output 0 with respect to input 0"):
        torch.autograd.gradcheck(wrong_backward, (z,))

    class WrongJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: Any) -> Any:
            return t * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            return t.conj() * 2   # right along the real part only

    with pytest.raises(GradcheckError, match=r"^While considering the imaginary part of complex "
                       r"inputs only, Jacobian computed with forward mode mismatch"):
        torch.autograd.gradcheck(WrongJvp.apply, (z,), check_forward_ad=True)


def test_undefined_check_draws_as_a_fresh_torch_generator() -> None:
    # torch.rand(4, generator=torch.Generator()) in float32 and in float64 (torch 2.13):
    # mt19937 seeded 67280421310721; 24 low bits of one output, or 53 of two
    from reference_engine.gradcheck import _TorchCpuGenerator
    np.testing.assert_allclose(_TorchCpuGenerator().rand(3, torch.float32),
                               [0.26729524, 0.8725283, 0.33528882], rtol=1e-7)
    np.testing.assert_allclose(_TorchCpuGenerator().rand(2, torch.float64),
                               [0.13836206, 0.68231095], rtol=1e-7)
