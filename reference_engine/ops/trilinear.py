"""F.bilinear: ATen's bilinear composite (Linear.cpp: its checks, the inputs flattened to
(-1, features), _trilinear, the result reshaped, plus the bias) over _trilinear, whose node
TrilinearBackward0 saves each input that another input's grad reads and whose backward
(_trilinear_backward) is _trilinear again, so its double-backward graph is torch's.

_trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim): each input with size-1 dims
inserted at its expand dims (all three then of one rank), multiplied, summed over sumdim
(those dims dropped)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common
from .basic import elementwise as ops
from .basic import views

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _subscripts(t: Tensor, expand: Sequence[int], rank: int) -> str:
    """The einsum letters of t's dims: the full rank's dims but the expand dims."""
    return "".join(_LETTERS[d] for d in range(rank) if d not in expand)


def _backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """_trilinear_backward: each input's grad a _trilinear of the grad and the other two."""
    e1, e2, e3, s = c.expand1, c.expand2, c.expand3, c.sumdim
    return c.grads(lambda: trilinear(g, c.i2, c.i3, s, e2, e3, e1),
                   lambda: trilinear(c.i1, g, c.i3, e1, s, e3, e2),
                   lambda: trilinear(c.i1, c.i2, g, e1, e2, s, e3))


def _jvp(c: Any) -> Tensor:
    args = (c.expand1, c.expand2, c.expand3, c.sumdim)
    return ops.add(ops.add(trilinear(c.i1_t, c.i2, c.i3, *args),
                           trilinear(c.i1, c.i2_t, c.i3, *args)),
                   trilinear(c.i1, c.i2, c.i3_t, *args))


TRILINEAR = OpSpec("TrilinearBackward0", ("i1", "i2", "i3"),
                   {"i1": ("i2", "i3"), "i2": ("i1", "i3"), "i3": ("i1", "i2")},
                   _backward, jvp=_jvp)


def trilinear(i1: Tensor, i2: Tensor, i3: Tensor, expand1: Sequence[int],
              expand2: Sequence[int], expand3: Sequence[int], sumdim: Sequence[int]
              ) -> Tensor:
    rank = i1.ndim + len(expand1)
    keep = "".join(_LETTERS[d] for d in range(rank) if d not in sumdim)
    spec = ",".join(_subscripts(t, e, rank) for t, e in ((i1, expand1), (i2, expand2),
                                                         (i3, expand3)))
    out = np.einsum(f"{spec}->{keep}", i1._data, i2._data, i3._data)
    return record(TRILINEAR, common.new(out, i1.dtype, i1.device), [i1, i2, i3],
                  expand1=tuple(expand1), expand2=tuple(expand2), expand3=tuple(expand3),
                  sumdim=tuple(sumdim))


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """input1 W input2 + bias over the last dims: Linear.cpp's bilinear."""
    if input1.ndim != input2.ndim:
        raise RuntimeError(messages.bilinear_dims(input1.ndim, input2.ndim))
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(messages.bilinear_batch(input1.shape[i], input2.shape[i]))
    for k, t in ((1, input1), (2, input2)):
        if t.shape[-1] != weight.shape[k]:
            raise RuntimeError(messages.bilinear_weight(k, t.shape[-1], weight.shape[k]))
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(messages.bilinear_bias(bias.shape[0], weight.shape[0]))
    size = (*input1.shape[:-1], weight.shape[0])
    flat1 = views.reshape(input1, (-1, input1.shape[-1]))
    flat2 = views.reshape(input2, (-1, input2.shape[-1]))
    out = views.reshape(trilinear(flat1, weight, flat2, (1, 3), (0,), (1, 2), (2, 3)), size)
    return out if bias is None else ops.add(out, bias)
