"""Tensor and Parameter reprs pinned against torch's format (mutation survivors); case
programs reach a repr only through the `repr` and `str` builtins."""

from __future__ import annotations

import pytest
import torch

import reference_engine as engine


@pytest.mark.parametrize("requires_grad", [True, False])
def test_parameter_repr_and_str_are_torchs(requires_grad: bool) -> None:
    # torch's "Parameter containing:" line above the tensor's repr; values whose tensor
    # repr is the same on both (torch pads 0.5 to 0.5000)
    mine = engine.nn.Parameter(engine.tensor([1.0, 2.0]), requires_grad=requires_grad)
    theirs = torch.nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=requires_grad)
    assert repr(mine) == repr(theirs)
    assert str(mine) == str(theirs)


def test_a_tensor_off_the_default_cpu_device_names_it() -> None:
    # torch/_tensor_str.py adds device='...' for a device other than the default one; no
    # CUDA here to compare with, so torch's format is written out
    assert repr(engine.ones(2, device="cuda")) == "tensor([1., 1.], device='cuda:0')"
    assert repr(engine.ones(2)) == repr(torch.ones(2)) == "tensor([1., 1.])"


def test_a_view_whose_grad_fn_cannot_be_read_prints_invalid() -> None:
    """torch/_tensor_str.py: reading the grad_fn of a view made under no_grad whose base was
    then modified in place raises; repr shows grad_fn=<Invalid> instead of raising."""
    a = engine.ones(1, requires_grad=True)
    with engine.no_grad():
        b = a[:]
        b *= 2
    assert repr(b) == "tensor([2.], grad_fn=<Invalid>)"
