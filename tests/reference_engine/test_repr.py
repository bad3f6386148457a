"""Tensor and Parameter reprs against torch's format: a Parameter's and a CUDA tensor's,
which case programs cannot reach, and many seeded tensors beyond what a case lists (case
programs reach a repr through the `repr` and `str` builtins; cases/printing holds the
formatting rules one by one)."""

from __future__ import annotations

import numpy as np
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


def _samples(seed: int) -> list[np.ndarray]:
    """Seeded arrays across the formatter's modes: shapes up to summarised ones, magnitudes
    from 1e-6 to 1e9, integer-valued floats, signed zeros, nan and inf, and the dtypes."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(12):
        shape = tuple(int(n) for n in rng.integers(0, 6, size=int(rng.integers(0, 4))))
        if rng.random() < 0.15:
            n = int(rng.integers(1001, 1500))   # summarised
            shape = [(n,), (2, n // 2 + 1), (11, 12, 13)][int(rng.integers(0, 3))]
        values = np.asarray(rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 10))
        kind = rng.integers(0, 6)
        if kind == 1:
            values = np.round(values)
        elif kind == 2 and values.size:
            values.flat[rng.integers(0, values.size)] = rng.choice([np.nan, np.inf, -0.0])
        dtype = rng.choice(["float32", "float64", "float16", "int64", "bool", "complex64"])
        if dtype == "complex64":
            values = values + 1j * np.round(rng.standard_normal(shape), 2)
        elif dtype == "float16":
            values = np.clip(values, -6e4, 6e4)
        with np.errstate(invalid="ignore"):   # nan and inf cast to an integer dtype
            out.append(np.asarray(values).astype(dtype))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_tensor_reprs_are_torchs(seed: int) -> None:
    for values in _samples(seed):
        theirs = torch.from_numpy(values.copy())
        dtype = getattr(engine, str(values.dtype))
        mine = (engine.tensor(values.tolist(), dtype=dtype) if values.size
                else engine.zeros(values.shape, dtype=dtype))
        if values.dtype.kind == "f" and values.size:
            theirs.requires_grad_(seed % 2 == 0)
            mine.requires_grad_(seed % 2 == 0)
        assert repr(mine) == repr(theirs), values


def test_a_view_whose_grad_fn_cannot_be_read_prints_invalid() -> None:
    """torch/_tensor_str.py: reading the grad_fn of a view made under no_grad whose base was
    then modified in place raises; repr shows grad_fn=<Invalid> instead of raising."""
    a = engine.ones(1, requires_grad=True)
    with engine.no_grad():
        b = a[:]
        b *= 2
    assert repr(b) == "tensor([2.], grad_fn=<Invalid>)"
