"""out= overloads: an op's result written into a given tensor (the write is in place, so
this sits apart from common.py, below which no op module reaches the in-place machinery)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes, forward_ad, messages
from ..grad_mode import is_grad_enabled, no_grad
from ..inplace_write import write
from ..tensor import Tensor


def into_out(name: str, out: Tensor, inputs: Sequence[Any], compute: Callable[[], Tensor],
             no_overlap: bool = False) -> Tensor:
    """An op's out= overload. Autograd refuses it (VariableType's
    throw_error_out_requires_grad) when grad mode is on and an input or `out` requires grad;
    otherwise the result is written into `out` in place, which counts as one write. An `out`
    of another shape is resized (resize_output: a warning unless it was empty; here only an
    `out` that is no view). `no_overlap`: the kernel's assert_no_overlap (gather, take, ...),
    checked after the resize, as ATen does: out may not share memory with an input."""
    if is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad
                                 for t in (*inputs, out)):
        raise RuntimeError(messages.out_requires_grad(name))
    dual = any(isinstance(t, Tensor) and forward_ad.fw_grad(t) is not None
               for t in (*inputs, out))
    with no_grad():
        result = compute()
    if tuple(result.shape) != tuple(out.shape):
        if out._base is not None:
            raise NotImplementedError(messages.OUT_RESIZE_NOT_MODELLED)
        if out.numel():
            warnings.warn(messages.out_resized(messages.sizes(out.shape),
                                               messages.sizes(result.shape)),
                          UserWarning, stacklevel=3)
        if no_overlap:
            assert_no_overlap(out, inputs)
        out._data = np.zeros(result.shape, dtype=out.dtype.np)
    if no_overlap:
        assert_no_overlap(out, inputs)
    write(out, dtypes.cast(result._data, out.dtype.np))
    out._version_counter.bump()
    if dual:
        # VariableType's out= kernels refuse forward mode only after the kernel ran: `out`
        # is written (and its version bumped) all the same
        raise NotImplementedError(messages.fwad_out_function(name))
    return out


def assert_no_overlap(out: Tensor, inputs: Sequence[Any]) -> None:
    """ATen's assert_no_overlap: an out= tensor sharing memory with an input is refused."""
    if any(isinstance(t, Tensor) and np.shares_memory(t._data, out._data) for t in inputs):
        raise RuntimeError(messages.PARTIAL_OVERLAP)
