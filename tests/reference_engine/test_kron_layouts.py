"""kron is ATen's KronImpl: _unsafe_view(_unsafe_view(a) * _unsafe_view(b)), and _unsafe_view
is view_impl, which refuses a layout without strides for the new shape. The product's layout
is TensorIterator's, which follows a transposed operand: torch 2.13 then refuses kron ("view
size is not compatible ..."), a text whose error has no kind a case could name. Found by the
generator probe (seed 2, program 60: `v38.kron(y10)` of a transposed v38)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import reference_engine as engine

LAYOUTS: dict[str, Callable[[Any, tuple[int, ...]], Any]] = {
    "contiguous": lambda lib, s: lib.tensor(np.arange(np.prod(s), dtype=float).reshape(s)),
    "transposed": lambda lib, s: lib.tensor(
        np.arange(np.prod(s), dtype=float).reshape(s[::-1])).permute(*range(len(s) - 1, -1, -1)),
    "expanded": lambda lib, s: lib.tensor(
        np.arange(s[-1], dtype=float)).expand(*s),
}


def _outcome(lib: Any, a: str, b: str, sa: tuple[int, ...], sb: tuple[int, ...]) -> Any:
    try:
        return np.array(lib.kron(LAYOUTS[a](lib, sa), LAYOUTS[b](lib, sb)).tolist())
    except RuntimeError as e:
        return str(e)


@pytest.mark.parametrize("a", sorted(LAYOUTS))
@pytest.mark.parametrize("b", sorted(LAYOUTS))
@pytest.mark.parametrize("sa, sb", [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1, 3), (2, 2))])
def test_kron_refuses_the_layouts_torch_refuses(a: str, b: str, sa: tuple[int, ...],
                                                sb: tuple[int, ...]) -> None:
    theirs, ours = _outcome(torch, a, b, sa, sb), _outcome(engine, a, b, sa, sb)
    if isinstance(theirs, str):
        assert ours == theirs
    else:
        assert not isinstance(ours, str), ours
        np.testing.assert_array_equal(ours, theirs)
