"""bmm and matmul. matmul is composed exactly as ATen's _matmul_impl composes it (dot, mv,
mm, folding a batched operand into mm/mv, or expand + reshape + bmm + _unsafe_view), so
its graph and every grad's graph name the same nodes as torch's."""

from __future__ import annotations

import numpy as np

from .. import messages, views
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import elementwise as ops

BMM = OpSpec("BmmBackward0", ("self", "mat2"), {"self": ("mat2",), "mat2": ("self",)},
             lambda c, g: c.grads(lambda: bmm(g, views.transpose(c.mat2, 1, 2)),
                                  lambda: bmm(views.transpose(c.self, 1, 2), g)))


def bmm(self: Tensor, mat2: Tensor) -> Tensor:
    if self.ndim != 3 or mat2.ndim != 3 or self.shape[0] != mat2.shape[0] \
            or self.shape[2] != mat2.shape[1]:
        raise RuntimeError(messages.mm_shapes(ops._dims(self), ops._dims(mat2)))
    if self.dtype is not mat2.dtype:
        raise RuntimeError(messages.bmm_dtypes(self.dtype.scalar_name, mat2.dtype.scalar_name))
    return ops._matmul_like(BMM, self, mat2)


def _unsafe_view(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    out = Tensor(t._data.reshape(shape), t.dtype, t.device)
    return record(views.UNSAFE_VIEW, out, [t], self_sym_sizes=tuple(t.shape))


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """ATen's should_fold(tensor1, tensor2): the larger operand (b transposed, when b is the
    larger) can be viewed as a matrix without a copy, or the smaller one needs a grad."""
    a_larger = a.ndim >= b.ndim
    big, small = (a, b) if a_larger else (b, a)
    if not (big.ndim >= 3 and small.ndim <= 2):
        return False
    if small.requires_grad:
        return True
    if a.ndim == 2:
        return False
    if big.numel() == 0:
        return True
    shape, st = list(big.shape), list(ops.strides(big))
    if not a_larger:  # the layout of b.mT(), without making the view
        shape[-2:], st[-2:] = shape[:-3:-1], st[:-3:-1]
    return all(st[i] == st[i + 1] * shape[i + 1] for i in range(big.ndim - 2))


def matmul(a: Tensor, b: Tensor) -> Tensor:
    da, db = a.ndim, b.ndim
    if da == 0 or db == 0:
        raise RuntimeError(messages.matmul_0d(da, db))
    if da == 1 and db == 1:
        return ops.dot(a, b)
    if da == 2 and db == 1:
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(messages.mm_shapes(ops._dims(a), f"{b.shape[0]}x1"))
        return ops.mv(a, b)
    if da == 1 and db == 2:
        # ATen: mm(self.unsqueeze(0), other).squeeze_(0) - an in-place squeeze, hence version 1
        from .. import inplace
        return inplace.squeeze_(ops.mm(views.unsqueeze(a, 0), b), 0)
    if da == 2 and db == 2:
        return ops.mm(a, b)
    if _should_fold(a, b):
        return _folded(a, b)
    return _batched(a, b)


def _folded(a: Tensor, b: Tensor) -> Tensor:
    transpose = b.ndim > a.ndim
    t1 = views.transpose(b, -2, -1) if transpose else a
    t2 = b if not transpose else views.t(a) if a.ndim == 2 else a
    out_shape = list(t1.shape[:-1])
    folded = int(np.prod(out_shape, dtype=np.int64))
    if t2.ndim == 2:
        out_shape.append(t2.shape[1])
    t1_folded = views.reshape(t1, (folded, t1.shape[-1]))
    if t2.ndim == 2:
        out = _unsafe_view(ops.mm(t1_folded, t2), tuple(out_shape))
        return ops.clone(views.transpose(out, -2, -1)) if transpose else out
    if t1_folded.shape[1] != t2.shape[0]:
        raise RuntimeError(messages.mm_shapes(ops._dims(t1_folded), f"{t2.shape[0]}x1"))
    return _unsafe_view(ops.mv(t1_folded, t2), tuple(out_shape))


def _batched(a: Tensor, b: Tensor) -> Tensor:
    da, db = a.ndim, b.ndim
    n = a.shape[-2] if da > 1 else 1
    m1 = a.shape[-1]
    m2 = b.shape[-2] if db > 1 else b.shape[0]
    p = b.shape[-1] if db > 1 else 1
    batch = ops.broadcast_shape(tuple(a.shape[:max(da - 2, 0)]),
                                tuple(b.shape[:max(db - 2, 0)]))
    product = int(np.prod(batch, dtype=np.int64))
    a_exp = views.reshape(views.expand(a, (*batch, n, m1)), (product, n, m1))
    vector_rhs = db == 1
    b_exp = views.expand(b, (*batch, m2) if vector_rhs else (*batch, m2, p))
    b_exp = views.unsqueeze(views.reshape(b_exp, (product, m2)), 2) if vector_rhs \
        else views.reshape(b_exp, (product, m2, p))
    out_shape = list(batch) + ([n] if da > 1 else []) + ([p] if db > 1 else [])
    out = bmm(a_exp, b_exp)
    if vector_rhs:
        out = views.squeeze(out, -1)
    return _unsafe_view(out, tuple(out_shape))
