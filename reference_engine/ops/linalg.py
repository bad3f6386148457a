"""Products: mm, mv, dot, addmm and bmm, with the signs of zero BLAS gives, and matmul,
composed exactly as ATen's _matmul_impl composes it (dot, mv, mm, folding a batched
operand into mm/mv, or expand + reshape + bmm + unsafe_view_of), so its graph and every
grad's graph name the same nodes as torch's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import messages, views_inplace
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common
from .basic import elementwise as ops
from .basic import reductions, views

# derivatives.yaml's .conj() in the products' formulas: the identity on real tensors
from .basic.complex_numbers import conj as _conj
from .common import common_device, compute_on, new, result_dtype
from .shape_views import contiguous as _contiguous

BMM = OpSpec("BmmBackward0", ("self", "mat2"), {"self": ("mat2",), "mat2": ("self",)},
             lambda c, g: c.grads(lambda: bmm(g, _conj(views.transpose(c.mat2, 1, 2))),
                                  lambda: bmm(_conj(views.transpose(c.self, 1, 2)), g)),
             jvp=lambda c: product_jvp(bmm, c.self_t, c.mat2, c.self, c.mat2_t))


def product_jvp(product: Any, a_t: Tensor, b: Tensor, a: Tensor, b_t: Tensor) -> Tensor:
    """A bilinear product's tangent: product(a_t, b) + product(a, b_t)."""
    return ops.add(product(a_t, b), product(a, b_t))


def bmm(self: Tensor, mat2: Tensor) -> Tensor:
    if self.ndim != 3 or mat2.ndim != 3 or self.shape[0] != mat2.shape[0] \
            or self.shape[2] != mat2.shape[1]:
        raise RuntimeError(messages.mm_shapes(shape_text(self), shape_text(mat2)))
    if self.dtype is not mat2.dtype:
        raise RuntimeError(messages.bmm_dtypes(self.dtype.scalar_name, mat2.dtype.scalar_name))
    return matmul_like(BMM, self, mat2)


def unsafe_view_of(t: Tensor, shape: tuple[int, ...]) -> Tensor:
    """ATen's _unsafe_view: view_impl's strides, refused where the layout has none (kron's
    product of a transposed operand, whose TensorIterator layout interleaves the dims)."""
    if not views.viewable(t, shape):
        raise RuntimeError(messages.VIEW_NOT_COMPATIBLE)
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
    shape, st = list(big.shape), list(big.stride())
    if not a_larger:  # the layout of b.mT(), without making the view
        shape[-2:], st[-2:] = shape[:-3:-1], st[:-3:-1]
    return all(st[i] == st[i + 1] * shape[i + 1] for i in range(big.ndim - 2))


def matmul(self: Tensor, other: Tensor) -> Tensor:
    return _matmul_impl(self, other)


def _matmul_impl(a: Tensor, b: Tensor) -> Tensor:
    da, db = a.ndim, b.ndim
    if da == 0 or db == 0:
        raise RuntimeError(messages.matmul_0d(da, db))
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:   # ATen: tensor1.mv(tensor2), whose check names input, mat, vec
        return mv(a, b)
    if da == 1 and db == 2:
        # ATen: mm(self.unsqueeze(0), other).squeeze_(0) - an in-place squeeze, hence version 1
        return views_inplace.squeeze_dim_(mm(views.unsqueeze(a, 0), b), 0)
    if da == 2 and db == 2:
        return mm(a, b)
    if da == 3 and db == 3 and (a.shape[0] == 1) != (b.shape[0] == 1):
        # torch 2.13 (found against it): a 3-D operand with a batch of one that requires
        # grad is squeezed to a matrix, so the product folds into mm (SqueezeBackward1)
        # where it would expand into bmm
        unit = a if a.shape[0] == 1 else b
        if unit.requires_grad:
            squeezed = views.squeeze(unit, 0)
            return _matmul_impl(squeezed, b) if unit is a else _matmul_impl(a, squeezed)
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
        out = unsafe_view_of(mm(t1_folded, t2), tuple(out_shape))
        # ATen: output.mT().contiguous(), which copies unless the transpose is contiguous
        # already (numpy's flag holds for an empty tensor, as torch's does)
        return _contiguous(views.transpose(out, -2, -1)) if transpose else out
    # mv's own check: "size mismatch, got input (6), mat (6x4), vec (3)", as torch 2.13
    return unsafe_view_of(mv(t1_folded, t2), tuple(out_shape))


def _batched(a: Tensor, b: Tensor) -> Tensor:
    da, db = a.ndim, b.ndim
    n = a.shape[-2] if da > 1 else 1
    m1 = a.shape[-1]
    m2 = b.shape[-2] if db > 1 else b.shape[0]
    p = b.shape[-1] if db > 1 else 1
    batch = common.broadcast_shape(tuple(a.shape[:max(da - 2, 0)]),
                                tuple(b.shape[:max(db - 2, 0)]))
    product = int(np.prod(batch, dtype=np.int64))
    a_exp = views.reshape(reductions.expand(a, (*batch, n, m1)), (product, n, m1))
    vector_rhs = db == 1
    b_exp = reductions.expand(b, (*batch, m2) if vector_rhs else (*batch, m2, p))
    b_exp = views.unsqueeze(views.reshape(b_exp, (product, m2)), 2) if vector_rhs \
        else views.reshape(b_exp, (product, m2, p))
    out_shape = list(batch) + ([n] if da > 1 else []) + ([p] if db > 1 else [])
    out = bmm(a_exp, b_exp)
    if vector_rhs:
        out = views.squeeze(out, -1)
    return unsafe_view_of(out, tuple(out_shape))


# ---- mm, mv, dot, addmm ---------------------------------------------------------------

def _column_major(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    return strides[0] == 1 and strides[1] == sizes[0]


def mm_mat1_backward(g: Tensor, mat2: Tensor, sizes: tuple[int, ...],
                     strides: tuple[int, ...]) -> Tensor:
    if _column_major(sizes, strides):   # keep a column-major input's grad column-major
        return views.t(mm(_conj(mat2), views.t(g)))
    return mm(g, _conj(views.t(mat2)))


def mm_mat2_backward(g: Tensor, mat1: Tensor, sizes: tuple[int, ...],
                     strides: tuple[int, ...]) -> Tensor:
    if _column_major(sizes, strides):
        return views.t(mm(views.t(g), _conj(mat1)))
    return mm(_conj(views.t(mat1)), g)
MM = OpSpec("MmBackward0", ("self", "mat2"), {"self": ("mat2",), "mat2": ("self",)},
            lambda c, g: c.grads(
                lambda: mm_mat1_backward(g, c.mat2, c.self_sym_sizes, c.self_sym_strides),
                lambda: mm_mat2_backward(g, c.self, c.mat2_sym_sizes, c.mat2_sym_strides)),
            jvp=lambda c: product_jvp(mm, c.self_t, c.mat2, c.self, c.mat2_t))
MV = OpSpec("MvBackward0", ("self", "vec"), {"self": ("vec",), "vec": ("self",)},
            lambda c, g: c.grads(
                # ger(): an exact outer product
                lambda: ops.mul(views.reshape(g, (-1, 1)), _conj(c.vec)),
                lambda: mv(views.t(_conj(c.self)), g)),
            jvp=lambda c: product_jvp(mv, c.self_t, c.vec, c.self, c.vec_t))
DOT = OpSpec("DotBackward0", ("self", "tensor"), {"self": ("tensor",), "tensor": ("self",)},
             lambda c, g: c.grads(lambda: ops.mul(g, _conj(c.tensor)),
                                  lambda: ops.mul(g, _conj(c.self))),
             jvp=lambda c: product_jvp(dot, c.self_t, c.tensor, c.self, c.tensor_t))
ADDMM = OpSpec("AddmmBackward0", ("self", "mat1", "mat2"), {"mat1": ("mat2",), "mat2": ("mat1",)},
               lambda c, g: c.grads(
                   lambda: maybe_multiply(g, c.beta),
                   lambda: maybe_multiply(mm_mat1_backward(g, c.mat2, c.mat1_sym_sizes,
                                                           c.mat1_sym_strides), c.alpha),
                   lambda: maybe_multiply(mm_mat2_backward(g, c.mat1, c.mat2_sym_sizes,
                                                           c.mat2_sym_strides), c.alpha)),
               jvp=lambda c: ops.add(maybe_multiply(c.self_t, c.beta), maybe_multiply(
                   product_jvp(mm, c.mat1_t, c.mat2, c.mat1, c.mat2_t), c.alpha)))


def maybe_multiply(t: Tensor, s: Any) -> Tensor:
    """FunctionsManual's maybe_multiply: t itself for a scalar of 1, else t * s."""
    return t if s == 1 else ops.mul_scalar(t, s)


def shape_text(t: Tensor) -> str:
    return "x".join(str(s) for s in t.shape)


def mm(self: Tensor, mat2: Tensor) -> Tensor:
    # ranks, then shapes, then dtypes: the order of ATen's checks (found by the generator:
    # mm on a 3-D tensor whose squeeze_ had failed)
    for operand, t in (("self", self), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(messages.mm_not_matrix(operand))
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(messages.mm_shapes(shape_text(self), shape_text(mat2)))
    if self.dtype is not mat2.dtype:
        raise RuntimeError(messages.mm_dtypes(self.dtype.cpp_name, mat2.dtype.cpp_name))
    return matmul_like(MM, self, mat2, mm_product, self_sym_sizes=self._data.shape,
                       self_sym_strides=self.stride(), mat2_sym_sizes=tuple(mat2.shape),
                       mat2_sym_strides=mat2.stride())


def mv(self: Tensor, vec: Tensor) -> Tensor:
    # ranks, sizes, then dtypes, as addmv checks them
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(messages.mv_ranks(self.ndim, vec.ndim))
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(messages.mv_sizes(self.shape[0], shape_text(self), vec.shape[0]))
    if self.dtype is not vec.dtype:
        raise RuntimeError(messages.mv_dtypes(self.dtype.scalar_name, vec.dtype.scalar_name))
    return matmul_like(MV, self, vec)


def dot(self: Tensor, tensor: Tensor) -> Tensor:
    if self.dtype is not tensor.dtype:
        raise RuntimeError(messages.dot_dtypes(self.dtype.scalar_name, tensor.dtype.scalar_name))
    if self.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(messages.dot_not_vectors(self.ndim, tensor.ndim))
    if self.numel() != tensor.numel():
        raise RuntimeError(messages.dot_sizes(self.numel(), tensor.numel()))
    return matmul_like(DOT, self, tensor)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1,
          alpha: Any = 1) -> Tensor:
    # no promotion: the input, then mat1, against mat2 (found by the generator: a float32
    # input with float64 matrices ran); dtypes are checked before ranks and shapes, as ATen
    for first, t in (("self", input), ("mat1", mat1)):
        if t.dtype is not mat2.dtype:
            raise RuntimeError(messages.addmm_dtypes(first, t.dtype.scalar_name,
                                                     mat2.dtype.scalar_name))
    for operand, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(messages.addmm_not_matrix(operand, t.ndim))
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(messages.mm_shapes(shape_text(mat1), shape_text(mat2)))
    target = (mat1.shape[0], mat2.shape[1])
    if input.ndim > 2 or any(s not in (1, n) for s, n in zip(input.shape[::-1], target[::-1],
                                                            strict=False)):
        # ATen expands the input to the result's shape first (expand_size): its error, not
        # NumPy's broadcast ValueError (found by the generator)
        reductions.expand(input.detach(), target)
    dev = common_device([input, mat1, mat2])
    dt = result_dtype([mat1, mat2])
    out = new(compute_on(lambda b, x, w: scaled_sum(b, x, w, beta, alpha), input._data,
                         mat1._data, mat2._data), dt, dev)
    return record(ADDMM, out, [input, mat1, mat2], mat1_sym_sizes=tuple(mat1.shape),
                  mat1_sym_strides=mat1.stride(), mat2_sym_sizes=tuple(mat2.shape),
                  mat2_sym_strides=mat2.stride(), alpha=alpha, beta=beta)


def scaled_sum(b: np.ndarray, x: np.ndarray, w: np.ndarray, beta: Any, alpha: Any
               ) -> np.ndarray:
    """beta * b + alpha * (x @ w), as gemm computes it: BLAS accumulates into the output,
    which starts as the input: -0.0 + (-0.0 products) stays -0.0; a beta of 0 ignores the
    input (a nan in it does not propagate)."""
    if beta == 1 and alpha == 1:
        return b + _from_negative_zero(x, w)
    product = blas_product(x, w) * x.dtype.type(alpha)
    if beta == 0:
        return np.broadcast_to(product, np.broadcast_shapes(b.shape, product.shape)).copy()
    return b * x.dtype.type(beta) + product


def blas_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b as BLAS computes it: each sum of products accumulates from +0.0, so a sum of
    zeros is +0.0 even where every product is -0.0 (numpy's sign there is unreliable)."""
    return np.matmul(a, b) + a.dtype.type(0)


def _from_negative_zero(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The 2-D a @ b summed from -0.0: -0.0 exactly where every product is -0.0."""
    products = a[:, :, None] * b[None, :, :]
    all_negative_zero = np.all((products == 0) & np.signbit(products), axis=1)
    return np.where(all_negative_zero, a.dtype.type(-0.0), blas_product(a, b))


def mm_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """mm's kernel: with an inner size of 1 and both outer sizes above 1, each element is
    the one product a[i, 0] * b[0, j] with its sign (an outer product, not a BLAS sum);
    otherwise sums accumulate from +0.0 (blas_product). Found empirically on torch 2.13 CPU."""
    if a.shape[1] == 1 and a.shape[0] > 1 and b.shape[1] > 1:
        return _from_negative_zero(a, b)
    return blas_product(a, b)


def matmul_like(spec: OpSpec, a: Tensor, b: Tensor,
                product: Callable[[np.ndarray, np.ndarray], np.ndarray] = blas_product,
                **attrs: Any) -> Tensor:
    dev = common_device([a, b])
    dt = result_dtype([a, b])
    return record(spec, new(compute_on(product, a._data, b._data), dt, dev), [a, b], **attrs)
