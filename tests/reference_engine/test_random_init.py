"""What case programs cannot reach: the harness draws the values of torch.rand/randn and of
nn.Linear's initial parameters itself (the same values for every engine), so the engine's
own random factories and Linear init are pinned here (mutation survivors)."""

import pytest

import reference_engine as torch


@pytest.mark.parametrize("factory", [torch.rand, torch.randn])
def test_random_factories_take_the_dtype_asked_else_the_default(factory) -> None:
    assert factory(3).dtype is torch.get_default_dtype()
    assert factory(3, dtype=torch.float64).dtype is torch.float64
    assert factory(2, 3, requires_grad=True).requires_grad


def test_linear_init_is_uniform_within_one_over_sqrt_fan_in() -> None:
    # kaiming_uniform_(a=sqrt(5)) and the bias rule: U(-1/sqrt(in), 1/sqrt(in)); with 1000
    # weights and 250 biases, each reaches beyond half the bound (all below it: 2^-250)
    fc = torch.nn.Linear(4, 250)
    for p in (fc.weight, fc.bias):
        largest = p.detach().abs().max().item()
        assert 0.25 < largest <= 0.5
    assert fc.weight._version == 1 and fc.bias._version == 1


def test_linear_without_inputs_has_a_zero_bias() -> None:
    # fan_in 0: torch's bound is 0 (init._calculate_fan_in_and_fan_out; kaiming_uniform_ of
    # the empty weight is a no-op), so the bias is U(0, 0): zeros
    fc = torch.nn.Linear(0, 3)
    assert fc.weight.shape == (3, 0)
    assert fc.bias.detach().abs().max().item() == 0.0
