"""swapdims and swapaxes (torch's aliases of transpose, with their in-place forms) and
as_strided_, the in-place view ops of test_autograd_inplace_views_creation_meta.

as_strided_ restrides the tensor itself as views_inplace.py's ops do (version bump, history
rebased onto AsStridedBackward1, checked like any in-place op on a view); its positions are
as_strided's (ops/shape_views.py), so it is modelled where as_strided is (a tensor that is
its whole storage in order), and for a result without elements, which reads no position.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import messages, views_inplace
from ..autograd_meta import OpSpec
from ..tensor import Tensor
from .basic import views, views_strided
from .shape_views import strided_positions

AS_STRIDED1 = OpSpec("AsStridedBackward1", ("self",),
                     backward=lambda c, g: [views_strided.as_strided_backward(
                         g, c.index, c.base_shape)])


def swapdims(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return views.transpose(self, dim0, dim1)


def swapdims_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return views_inplace.transpose_(self, dim0, dim1)


swapaxes, swapaxes_ = swapdims, swapdims_


def as_strided_(self: Tensor, size: Sequence[int], stride: Sequence[int],
                storage_offset: int | None = None) -> Tensor:
    size = tuple(int(n) for n in size)
    if 0 in size:
        index = np.zeros(size, dtype=np.int64)
        if len(stride) != len(size):
            raise RuntimeError(messages.as_strided_dims(len(size), len(stride)))
    else:
        index = strided_positions(self, size, stride, storage_offset)
    return views_inplace.restride_(self, views_strided.strided_fn(index), AS_STRIDED1,
                                   index=index, base_shape=tuple(self.shape))
