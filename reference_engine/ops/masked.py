"""masked_select and masked_scatter: read or write self's elements where a mask (broadcast to
self) holds. (masked_fill: ops/basic/indexing.py; masked_scatter_: ops/scatter.py's in-place
forms.)"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, linear_forward, record
from ..tensor import Tensor
from . import common, joining, out_overloads
from .basic import indexing, reductions, views

# ---- masked_select / masked_scatter --------------------------------------------------------------

def _masked_select_backward(c: Any, g: Tensor) -> Tensor:
    """masked_select_backward: zeros of the broadcast shape, masked_scatter(mask, grad), summed
    back to self's shape."""
    shape = common.broadcast_shape(tuple(c.self.shape), tuple(c.mask.shape))
    zeros = common.new(np.zeros(shape), g.dtype, g.device)
    return reductions.sum_to(masked_scatter(zeros, c.mask, g), tuple(c.self.shape))


MASKED_SELECT = OpSpec("MaskedSelectBackward0", ("self",), {"self": ("mask", "self")},
                       backward=lambda c, g: [_masked_select_backward(c, g)],
                       jvp="auto_linear")


@linear_forward(MASKED_SELECT)
def masked_select(self: Tensor, mask: Tensor, *, out: Tensor | None = None) -> Tensor:
    if out is not None:   # masked_select_out checks overlap before it resizes
        out_overloads.assert_no_overlap(out, (self, mask))
        return out_overloads.into_out("masked_select", out, (self, mask),
                                      lambda: masked_select(self, mask), no_overlap=True)
    _check_mask("masked_select", mask)
    # expand_outplace(mask, self): the mask is tensor a in the mismatch error
    shape = common.broadcast_shape(tuple(mask.shape), tuple(self.shape))
    arr = np.broadcast_to(self._data, shape)[np.broadcast_to(mask._data, shape)]
    return record(MASKED_SELECT, common.new(arr, self.dtype, self.device), [self], mask=mask)


def _check_mask(name: str, mask: Tensor) -> None:
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(messages.masked_scatter_mask_dtype(mask.dtype.scalar_name)
                           if name == "masked_scatter" else
                           messages.masked_select_mask_dtype(mask.dtype.scalar_name))


def _masked_scatter_source_backward(c: Any, g: Tensor) -> Tensor:
    """masked_scatter_backward: grad.masked_select(mask), padded with zeros to source's
    numel, viewed as source's shape."""
    picked = masked_select(g, c.mask)
    n = int(np.prod(c.source_sym_sizes, dtype=np.int64))
    if picked.numel() < n:
        pad = common.new(np.zeros(n - picked.numel()), g.dtype, g.device)
        picked = joining.cat([picked, pad])
    return views.reshape(picked, c.source_sym_sizes)


MASKED_SCATTER = OpSpec(
    "MaskedScatterBackward0", ("self", "source"), {"self": ("mask",), "source": ("mask",)},
    backward=lambda c, g: c.grads(lambda: indexing.masked_fill(g, c.mask, 0),
                                  lambda: _masked_scatter_source_backward(c, g)),
    jvp=lambda c: masked_scatter(c.self_t, c.mask, c.source_t))


def masked_scatter(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """masked_scatter__cpu's order: the dtypes, the broadcast (expand_outplace(mask, self):
    the mask is tensor a in the mismatch error), a uint8 mask's deprecation warning, then
    the CPU kernel's refusal of any mask that is not bool."""
    if self.dtype is not source.dtype:
        raise RuntimeError(messages.masked_scatter_dtype(self.dtype.scalar_name,
                                                         source.dtype.scalar_name))
    shape = common.broadcast_shape(tuple(mask.shape), tuple(self.shape))
    if mask.dtype is dtypes.uint8:
        warnings.warn(messages.MASKED_SCATTER_UINT8, UserWarning, stacklevel=2)
    _check_mask("masked_scatter", mask)
    arr = np.array(np.broadcast_to(self._data, shape), copy=True)
    m = np.broadcast_to(mask._data, shape)
    k = int(m.sum())
    arr[m] = source._data.reshape(-1)[:k]
    out = common.new(arr, self.dtype, common.common_device([self, source]))
    return record(MASKED_SCATTER, out, [self, source], mask=mask,
                  source_sym_sizes=tuple(source.shape))
