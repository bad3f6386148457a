"""reference_engine's CPU autocast (autocast_mode.py): the lower_precision_fp policy with
its cast cache, the context manager's state, and what it refuses. Each behaviour was read
on torch 2.13 (cases/test_autograd/checkpoint/ holds the test_autograd translation)."""

from __future__ import annotations

import warnings

import pytest

import reference_engine as torch


def _leaf() -> torch.Tensor:
    return torch.ones(2, 2, requires_grad=True)


def _casts(t: torch.Tensor) -> list[object]:
    return [f for f, _ in t.grad_fn.next_functions]


def test_mm_casts_a_float32_leaf_once_per_region() -> None:
    x = _leaf()
    with torch.autocast("cpu"):
        a = torch.mm(x, x)
        b = x.mm(x)
    assert a.dtype is torch.bfloat16 and type(a.grad_fn).__name__ == "MmBackward0"
    casts = _casts(a)
    assert [type(c).__name__ for c in casts] == ["ToCopyBackward0"] * 2
    assert casts[0] is casts[1] is _casts(b)[0]
    with torch.autocast("cpu"):   # the cache was dropped when the region exited
        assert _casts(torch.mm(x, x))[0] is not casts[0]


def test_a_non_leaf_is_cast_at_each_use() -> None:
    w = _leaf() * 2
    with torch.autocast("cpu"):
        first, second = _casts(torch.mm(w, w))
    assert first is not second


def test_a_nested_region_gets_the_cached_cast_whatever_its_dtype() -> None:
    x = _leaf()
    with torch.autocast("cpu"):
        torch.mm(x, x)
        with torch.autocast("cpu", dtype=torch.float16):
            assert torch.mm(x, x).dtype is torch.bfloat16
            w = x * 1
            assert torch.mm(w, w).dtype is torch.float16


def test_unlisted_ops_and_float64_run_as_they_are() -> None:
    x = _leaf()
    d = torch.ones(2, 2, dtype=torch.float64)
    with torch.autocast("cpu"):
        assert (x + x).dtype is torch.float32
        assert torch.mm(d, d).dtype is torch.float64
        with torch.autocast("cpu", enabled=False):
            assert torch.mm(x, x).dtype is torch.float32
    assert not torch.is_autocast_enabled("cpu")


def test_an_unsupported_dtype_or_cuda_warns_and_disables() -> None:
    x = _leaf()
    for device, dtype in (("cpu", torch.float32), ("cuda", None)):
        with pytest.warns(UserWarning, match="Disabling autocast"), \
                torch.autocast(device, dtype=dtype):
            assert torch.mm(x, x).dtype is torch.float32


def test_the_fp32_and_promote_lists_are_refused_not_ignored() -> None:
    x = _leaf()
    with torch.autocast("cpu"), pytest.raises(NotImplementedError, match="promote"):
        torch.stack([x, x])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch.stack([x, x]).dtype is torch.float32   # off outside a region
