"""Products beside mm and friends (ops/linalg.py): addmv, addbmm, baddbmm, addr, vdot, outer,
kron and cross. Each op with a node of its own follows its derivatives.yaml entry
(the scalars through FunctionsManual's maybe_multiply); outer and kron are
CompositeImplicit in ATen and are composed here from the ops ATen calls, so their graphs
name the same nodes as torch's."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from ..warn import warn_once
from . import linalg
from .basic import elementwise as ops
from .basic import reductions, views
from .common import broadcast_shape, common_device, compute_on, new, result_dtype, wrap_dim
from .linalg import bmm, maybe_multiply, mv


def _scaled(beta: Any, alpha: Any, dt: np.dtype) -> Any:
    """beta * self + alpha * product, as the BLAS call computes it: a beta of 0 ignores self
    (a nan there does not propagate), scalars of 1 multiply nothing."""
    def compute(b: np.ndarray, product: np.ndarray) -> np.ndarray:
        p = product if alpha == 1 else product * dt.type(alpha)
        if beta == 0:
            return np.broadcast_to(p, np.broadcast_shapes(b.shape, p.shape)).copy()
        return (b if beta == 1 else b * dt.type(beta)) + p
    return compute


def _add_scaled(spec: OpSpec, input: Tensor, a: Tensor, b: Tensor, product: Any,
                beta: Any, alpha: Any, **attrs: Any) -> Tensor:
    dt = result_dtype([input, a, b])
    out = compute_on(lambda x, y, z: _scaled(beta, alpha, dt.np)(x, product(y, z)),
                     input._data.astype(dt.np), a._data.astype(dt.np), b._data.astype(dt.np))
    return record(spec, new(out, dt, common_device([input, a, b])), [input, a, b],
                  alpha=alpha, beta=beta, **attrs)


def _self_grad(c: Any, g: Tensor) -> Tensor:
    return maybe_multiply(g, c.beta)


# ---- addmv, addr --------------------------------------------------------------------------

ADDMV = OpSpec(
    "AddmvBackward0", ("self", "mat", "vec"), {"mat": ("vec",), "vec": ("mat",)},
    lambda c, g: c.grads(lambda: _self_grad(c, g),
                         lambda: maybe_multiply(outer(g, c.vec), c.alpha),   # grad.ger(vec)
                         lambda: maybe_multiply(mv(views.t(c.mat), g), c.alpha)),
    jvp=lambda c: ops.add(maybe_multiply(c.self_t, c.beta), maybe_multiply(
        linalg.product_jvp(mv, c.mat_t, c.vec, c.mat, c.vec_t), c.alpha)))


def addmv(self: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    if mat.ndim != 2 or vec.ndim != 1 or self.ndim > 1:
        raise RuntimeError(messages.mv_ranks(mat.ndim, vec.ndim))
    # addmv_out's check: self has mat's rows, or one element (it is expanded to them); the
    # message names self.size(0), which a 0-d self does not have
    if mat.shape[1] != vec.shape[0] or self.numel() not in (1, mat.shape[0]):
        if self.ndim == 0:
            raise IndexError(messages.dim_of_0_dim(0))
        raise RuntimeError(messages.mv_sizes(self.shape[0], linalg.shape_text(mat), vec.shape[0]))
    if not self.dtype is mat.dtype is vec.dtype:   # no promotion, as mv
        raise RuntimeError(messages.addmv_dtypes(*(t.dtype.scalar_name for t in (self, mat, vec))))
    return _add_scaled(ADDMV, self, mat, vec, linalg.blas_product, beta, alpha)


ADDR = OpSpec(
    "AddrBackward0", ("self", "vec1", "vec2"), {"vec1": ("vec2",), "vec2": ("vec1",)},
    lambda c, g: c.grads(lambda: _self_grad(c, g),
                         lambda: maybe_multiply(mv(g, c.vec2), c.alpha),
                         lambda: maybe_multiply(mv(views.t(g), c.vec1), c.alpha)),
    jvp=lambda c: ops.add(maybe_multiply(c.self_t, c.beta), maybe_multiply(
        linalg.product_jvp(outer, c.vec1_t, c.vec2, c.vec1, c.vec2_t), c.alpha)))


def addr(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(messages.addr_not_vector(name, v.ndim))
    _expand_self(self, (vec1.shape[0], vec2.shape[0]))   # ATen's addr: expand_size first
    return _add_scaled(ADDR, self, vec1, vec2, np.multiply.outer, beta, alpha)


# ---- baddbmm, addbmm ----------------------------------------------------------------------

def _expand_self(self: Tensor, target: tuple[int, ...]) -> None:
    """ATen expands self to the result's shape first (expand_size): its error where they do
    not broadcast, not NumPy's ValueError."""
    if self.ndim > len(target) or any(s not in (1, n) for s, n in zip(
            self.shape[::-1], target[::-1], strict=False)):
        reductions.expand(self.detach(), target)


def _batch_check(batch1: Tensor, batch2: Tensor) -> None:
    if batch1.ndim != 3 or batch2.ndim != 3 or batch1.shape[0] != batch2.shape[0] \
            or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(messages.mm_shapes(linalg.shape_text(batch1), linalg.shape_text(batch2)))


BADDBMM = OpSpec(
    "BaddbmmBackward0", ("self", "batch1", "batch2"),
    {"batch1": ("batch2",), "batch2": ("batch1",)},
    lambda c, g: c.grads(
        lambda: _self_grad(c, g),
        lambda: maybe_multiply(bmm(g, views.transpose(c.batch2, 1, 2)), c.alpha),
        lambda: maybe_multiply(bmm(views.transpose(c.batch1, 1, 2), g), c.alpha)),
    jvp=lambda c: ops.add(maybe_multiply(c.self_t, c.beta), maybe_multiply(
        linalg.product_jvp(bmm, c.batch1_t, c.batch2, c.batch1, c.batch2_t), c.alpha)))


def baddbmm(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:
    _batch_check(batch1, batch2)
    _expand_self(self, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    return _add_scaled(BADDBMM, self, batch1, batch2, linalg.blas_product, beta, alpha)


def _addbmm_grads(c: Any, g: Tensor) -> list[Tensor | None]:
    def spread() -> Tensor:   # grad.unsqueeze(0).expand({batch, rows, cols})
        sizes = (c.batch1_sym_argsize_0, c.batch1_sym_argsize_1, c.batch2_sym_argsize_2)
        return reductions.expand(views.unsqueeze(g, 0), sizes)
    return c.grads(
        lambda: _self_grad(c, g),
        lambda: maybe_multiply(bmm(spread(), views.transpose(c.batch2, 1, 2)), c.alpha),
        lambda: maybe_multiply(bmm(views.transpose(c.batch1, 1, 2), spread()), c.alpha))


def _addbmm_jvp(c: Any) -> Tensor:
    products = linalg.product_jvp(lambda a, b: reductions.sum(bmm(a, b), 0),
                                  c.batch1_t, c.batch2, c.batch1, c.batch2_t)
    return ops.add(maybe_multiply(c.self_t, c.beta), maybe_multiply(products, c.alpha))


ADDBMM = OpSpec("AddbmmBackward0", ("self", "batch1", "batch2"),
                {"batch1": ("batch2",), "batch2": ("batch1",)}, _addbmm_grads,
                jvp=_addbmm_jvp)


def addbmm(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
           alpha: Any = 1) -> Tensor:
    _batch_check(batch1, batch2)
    b1, b2 = batch1.shape, batch2.shape
    _expand_self(self, (b1[1], b2[2]))
    dt = result_dtype([self, batch1, batch2])

    def accumulate(c: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        # one gemm over the batch folded into the inner dimension: a float32 sum of the
        # batch's products rounded differently from torch's
        folded = linalg.blas_product(np.concatenate(list(x), axis=1) if len(x) else
                                     np.zeros((x.shape[1], 0), x.dtype),
                                     y.reshape(-1, y.shape[2]))
        return _scaled(beta, alpha, dt.np)(c, folded)
    out = compute_on(accumulate, *(t._data.astype(dt.np) for t in (self, batch1, batch2)))
    return record(ADDBMM, new(out, dt, common_device([self, batch1, batch2])),
                  [self, batch1, batch2], alpha=alpha, beta=beta,
                  batch1_sym_argsize_0=b1[0], batch1_sym_argsize_1=b1[1],
                  batch2_sym_argsize_2=b2[2])


# ---- vdot, outer, kron --------------------------------------------------------------

VDOT = OpSpec("VdotBackward0", ("self", "other"), {"self": ("other",), "other": ("self",)},
              lambda c, g: c.grads(lambda: ops.mul(g, c.other), lambda: ops.mul(g, c.self)),
              jvp=lambda c: linalg.product_jvp(vdot, c.self_t, c.other, c.self, c.other_t))


def vdot(self: Tensor, other: Tensor) -> Tensor:
    # real tensors only: vdot is dot (conj(self) is self), with dot's checks in dot's order
    if self.dtype is not other.dtype:
        raise RuntimeError(messages.dot_dtypes(self.dtype.scalar_name, other.dtype.scalar_name))
    if self.ndim != 1 or other.ndim != 1:
        raise RuntimeError(messages.dot_not_vectors(self.ndim, other.ndim))
    if self.numel() != other.numel():
        raise RuntimeError(messages.dot_sizes(self.numel(), other.numel()))
    return linalg.matmul_like(VDOT, self, other)


def outer(self: Tensor, vec2: Tensor) -> Tensor:
    """ATen: self.reshape({self.size(0), 1}) * vec2."""
    for name, v in (("self", self), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(messages.outer_not_vector(name, v.ndim))
    return ops.mul(views.reshape(self, (self.shape[0], 1)), vec2)


def kron(self: Tensor, other: Tensor) -> Tensor:
    """ATen's KronImpl: both operands viewed with their dims interleaved (a's dims at even
    positions, b's at odd, padded with 1s to the same rank), multiplied, and the product
    viewed back: _unsafe_view(_unsafe_view(a) * _unsafe_view(b))."""
    nd = builtins.max(self.ndim, other.ndim)
    a_shape = (1,) * (nd - self.ndim) + tuple(self.shape)
    b_shape = (1,) * (nd - other.ndim) + tuple(other.shape)
    a_view = [s for d in a_shape for s in (d, 1)]
    b_view = [s for d in b_shape for s in (1, d)]
    out_shape = tuple(x * y for x, y in zip(a_shape, b_shape, strict=True))
    product = ops.mul(linalg.unsafe_view_of(self, tuple(a_view)),
                      linalg.unsafe_view_of(other, tuple(b_view)))
    return linalg.unsafe_view_of(product, out_shape)


# ---- cross ---------------------------------------------------------------------------------

def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once (float64), as an FMA instruction: the product's rounding
    error found exactly by Veltkamp's split (Dekker's two-product), the sum's by two-sum."""
    with np.errstate(all="ignore"):
        p = a * b
        t = 134217729.0 * a   # 2 ** 27 + 1
        ah = t - (t - a)
        t = 134217729.0 * b
        bh = t - (t - b)
        al, bl = a - ah, b - bh
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s = p + c
        v = s - p
        err = (p - (s - v)) + (c - v)
        fused = s + (err + e)
    return np.where(np.isfinite(fused), fused, p + c)


def _cross(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    """linalg_cross's kernel: r_i = x_j * y_k - x_k * y_j, which the compiler of torch's CPU
    build contracts to fma(x_j, y_k, -(x_k * y_j)): the second product rounded, the first
    not (measured on torch 2.13: 6000 of 6000 float32 components as so, 0 as the unfused
    difference would be; cross(x, x) is then the rounding error of x_k * x_j, not 0)."""
    xs = [np.take(x, i, axis=axis) for i in range(3)]
    ys = [np.take(y, i, axis=axis) for i in range(3)]
    parts = []
    for j, k in ((1, 2), (2, 0), (0, 1)):
        if x.dtype.kind != "f":
            parts.append(xs[j] * ys[k] - xs[k] * ys[j])
            continue
        wide = [v.astype(np.float64) for v in (xs[j], ys[k], xs[k], ys[j])]
        second = (wide[2] * wide[3]).astype(x.dtype).astype(np.float64)
        parts.append(_fma(wide[0], wide[1], -second).astype(x.dtype))
    return np.stack(parts, axis=axis)


LINALG_CROSS = OpSpec(
    "LinalgCrossBackward0", ("self", "other"), {"self": ("other",), "other": ("self",)},
    lambda c, g: c.grads(lambda: linalg_cross(c.other, g, dim=c.dim),
                         lambda: linalg_cross(g, c.self, dim=c.dim)),
    jvp=lambda c: ops.add(linalg_cross(c.self_t, c.other, dim=c.dim),
                          linalg_cross(c.self, c.other_t, dim=c.dim)))


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    if input.ndim != other.ndim:
        raise RuntimeError(messages.CROSS_RANKS)
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(messages.cross_sizes(dim, input.shape[d], other.shape[d]))
    broadcast_shape(tuple(input.shape), tuple(other.shape))   # infer_size's error, not NumPy's
    # no promotion: the kernel reads other as input's dtype (linalg_cross_out's TensorIterator
    # declares no common dtype), and it is not compiled for bool
    if input.dtype is not other.dtype:
        raise RuntimeError(messages.bmm_dtypes(input.dtype.scalar_name, other.dtype.scalar_name))
    if input.dtype is dtypes.bool_:
        raise NotImplementedError(messages.kernel_not_implemented("cross", "Bool"))
    dt = result_dtype([input, other])
    out = compute_on(lambda x, y: _cross(x, y, d), input._data.astype(dt.np),
                     other._data.astype(dt.np))
    return record(LINALG_CROSS, new(out, dt, common_device([input, other])), [input, other],
                  dim=dim)


def cross(self: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """torch.cross: linalg.cross, whose dim defaults (deprecated, with a warning) to the
    first dim of size 3 of the broadcast shape."""
    if dim is None:
        warn_once(messages.CROSS_NO_DIM)
        shape = broadcast_shape(tuple(self.shape), tuple(other.shape))
        found = [i for i, s in enumerate(shape) if s == 3]
        if not found:
            raise RuntimeError(messages.CROSS_NO_SIZE_3)
        dim = found[0]
    return linalg_cross(self, other, dim=dim)


def __rmatmul__(self: Tensor, other: Tensor) -> Any:
    """Tensor.__rmatmul__: other @ self; NotImplemented for another operand than a tensor
    (torch's slot turns matmul's TypeError into it), so Python raises "unsupported operand
    type(s) for @" (a tuple such as torch.return_types.frexp, a number)."""
    if not isinstance(other, Tensor):
        return NotImplemented
    return linalg.matmul(other, self)
