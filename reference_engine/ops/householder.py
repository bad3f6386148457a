"""Products of Householder reflectors: torch.linalg.householder_product (LAPACK's orgqr: the
first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, v_i column i of the input below a
unit diagonal) and torch.ormqr (that product applied to a matrix, from either side, or its
adjoint). The forwards apply the reflectors one at a time in the input's dtype, as LAPACK
does, and give LAPACK's column-major results. The derivatives are FunctionsManual.cpp's
householder_product_backward (its out-of-place path, which create_graph runs; the in-place
one computes the same values), householder_product_jvp and ormqr_backward, in engine ops so
create_graph differentiates them again; ormqr has no forward formula. Real inputs (mH is the
transpose)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common, inplace_ops, triangular
from .basic import elementwise as ops
from .basic import inplace, reductions, views
from .decompositions import column_major, mH_of
from .linalg import matmul

# ---- the forwards, in NumPy ----------------------------------------------------------------


def _reflectors(a: np.ndarray, k: int) -> np.ndarray:
    """The k Householder vectors as columns: a's first k columns below a unit diagonal."""
    v = np.tril(a[..., :, :k], -1)
    idx = np.arange(k)
    v[..., idx, idx] = 1
    return v


def _apply(v: np.ndarray, tau: np.ndarray, x: np.ndarray, left: bool, adjoint: bool
           ) -> np.ndarray:
    """op(Q) x (left) or x op(Q), Q = H_1 ... H_k, op the adjoint or not: one reflector at a
    time, innermost first."""
    k = tau.shape[-1]
    # Q x applies H_k first; Q^H x, H_1 first; x Q, H_1 first; x Q^H, H_k first
    order = range(k) if left == adjoint else range(k - 1, -1, -1)
    for i in order:
        vi = v[..., :, i:i + 1]
        t = tau[..., i, None, None]
        t = np.conj(t) if adjoint else t
        if left:
            x = x - (t * vi) * (np.conj(np.swapaxes(vi, -1, -2)) @ x)
        else:
            x = x - ((x @ vi) * t) * np.conj(np.swapaxes(vi, -1, -2))
    return x.astype(v.dtype, copy=False)


# ---- householder_product_backward (FunctionsManual.cpp), in engine ops --------------------

def _reflector(v: Tensor, t: Tensor, K: Tensor, left: bool) -> Tensor:
    """apply_simple_transformation out of place, with I: (I - t v v^H) K or K (I - t v v^H)."""
    t_ = views.unsqueeze(t, -1)
    if left:
        return ops.sub(K, ops.mul(ops.mul(t_, v), matmul(mH_of(v), K)))
    return ops.sub(K, ops.mul(matmul(K, ops.mul(t_, v)), mH_of(v)))


def _unit_lower(input_: Tensor) -> Tensor:
    """input_.tril(-1) with its diagonal filled with ones (in place, as torch's)."""
    v = triangular.tril(input_, -1)
    inplace_ops.fill_(views.diagonal(v, 0, -2, -1), 1.0)
    return v


def _sigma(v: Tensor, tau: Tensor) -> Tensor:
    """sigma_i with H(sigma_i) = H(tau_i)^{-1}: tau / (tau ||v_i||^2 - 1)."""
    cols = views.narrow(v, -1, 0, tau.shape[-1])
    norm2 = reductions.sum(ops.mul(cols, cols), -2)
    return ops.div(tau, ops.sub_scalar(ops.mul(tau, norm2), 1.0))


def householder_product_backward(grad: Tensor, result: Tensor, input_: Tensor, tau: Tensor,
                                 flip_order: bool = False) -> tuple[Tensor | None, Tensor | None]:
    """K_i = H_i_plus Q_grad^H H_i_minus, updated reflector by reflector; v_i's grad
    -tau_i (v_i^H K_i)^H - tau_i K_i v_i, tau_i's -v_i^H K_i v_i. flip_order: i from k - 1
    down, the left and right updates swapped (ormqr's other sides)."""
    if input_.numel() == 0 or tau.numel() == 0:
        return None, None
    m, k = input_.shape[-2], tau.shape[-1]
    v = _unit_lower(input_)
    sigma = _sigma(v, tau)
    K = matmul(result, mH_of(grad))

    def flip(i: int) -> int:
        return i if not flip_order else k - i - 1

    apply_left = not flip_order
    z = flip(0)
    K = _reflector(views.narrow(v, -1, z, 1), views.narrow(sigma, -1, z, 1), K, apply_left)
    input_grad, tau_grad = common.zeros_like(input_), common.zeros_like(tau)
    for idx in range(k):
        i = flip(idx)
        v_i, t_i = views.narrow(v, -1, i, 1), views.narrow(tau, -1, i, 1)
        # update_grad: the rows and columns from i on (v_i is zero above i)
        tail = views.narrow(v_i, -2, i, m - i)
        vHK = matmul(mH_of(tail), views.narrow(K, -2, i, m - i))
        Kv = matmul(views.narrow(K, -1, i, m - i), tail)
        t_ = views.unsqueeze(t_i, -1)
        v_grad = ops.sub(views.squeeze(ops.mul(ops.neg(t_), vHK), -2),
                         views.squeeze(ops.mul(t_, Kv), -1))
        t_grad = ops.neg(matmul(views.narrow(vHK, -1, i, m - i), tail))
        # (update_grad returns (v_grad.unsqueeze(-1), tau_grad.squeeze(-1)), which the loop
        # squeezes: their nodes are in a create_graph grad's graph)
        inplace.copy_(views.select(input_grad, -1, i),
                          views.squeeze(views.unsqueeze(v_grad, -1), -1))
        inplace.copy_(views.select(tau_grad, -1, i),
                          views.squeeze(views.squeeze(t_grad, -1), -1))
        if i != flip(k - 1):   # K <- H_{i+1}^{-1} K H_i
            j = i + 1 if not flip_order else i - 1
            K = _reflector(views.narrow(v, -1, j, 1), views.narrow(sigma, -1, j, 1), K,
                           apply_left)
            K = _reflector(v_i, t_i, K, not apply_left)
    # the forward reads the strictly lower triangle only
    triangular.tril_(input_grad, -1)
    return input_grad, tau_grad


def _joint(c: Any, pair: Any, n: int) -> list[Tensor | None]:
    """One formula for several inputs, evaluated once (torch's generated code calls it once
    and keeps the grads the backward wants)."""
    cache: list[Any] = []

    def part(i: int) -> Any:
        if not cache:
            cache.append(pair())
        return cache[0][i]
    return c.grads(*[lambda i=i: part(i) for i in range(n)])


def _householder_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    return _joint(c, lambda: householder_product_backward(g, c.result, c.input, c.tau), 2)


def _householder_jvp(c: Any) -> Tensor:
    """householder_product_jvp: dQ = sum_i H_i_minus (-dtau_i v_i v_i^H - tau_i dv_i v_i^H
    - tau_i v_i dv_i^H) H_i_plus, H_i_plus from Q by the inverse reflectors."""
    v, tau, prod = _unit_lower(c.input), c.tau, c.result
    dv, dtau = triangular.tril(c.input_t, -1), c.tau_t
    m, k = v.shape[-2], tau.shape[-1]
    sigma = _sigma(v, tau)

    def simple(u: Tensor, w: Tensor, t: Tensor, K: Tensor) -> Tensor:   # -t u w^H K
        return ops.neg(ops.mul(ops.mul(views.unsqueeze(t, -1), u), matmul(mH_of(w), K)))

    h_plus = prod
    eye = np.broadcast_to(np.eye(m, dtype=v.dtype.np), (*v.shape[:-2], m, m)).copy()
    h_minus = common.new(eye, v.dtype, v.device)
    dprod = common.zeros_like(prod)
    for i in range(k):
        v_i, dv_i = views.narrow(v, -1, i, 1), views.narrow(dv, -1, i, 1)
        t_i, dt_i = views.narrow(tau, -1, i, 1), views.narrow(dtau, -1, i, 1)
        h_plus = _reflector(v_i, views.narrow(sigma, -1, i, 1), h_plus, True)
        inner = ops.add(ops.add(simple(v_i, v_i, dt_i, h_plus), simple(dv_i, v_i, t_i, h_plus)),
                        simple(v_i, dv_i, t_i, h_plus))
        dprod = ops.add(dprod, matmul(h_minus, inner))
        h_minus = _reflector(v_i, t_i, h_minus, False)
    return dprod


HOUSEHOLDER_PRODUCT = OpSpec(
    "LinalgHouseholderProductBackward0", ("input", "tau"),
    dict.fromkeys(("input", "tau"), ("input", "result", "tau")), _householder_backward,
    jvp=_householder_jvp)


def _check_real_floating(t: Tensor, kernel: str) -> None:
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise NotImplementedError(messages.kernel_not_implemented(kernel, t.dtype.scalar_name))


def householder_product(input: Tensor, tau: Tensor) -> Tensor:
    """torch.linalg.householder_product (torch.orgqr)."""
    name = "torch.linalg.householder_product"
    if input.ndim < 2:
        raise RuntimeError(messages.householder_at_least_2d(name, "input"))
    m, n = input.shape[-2], input.shape[-1]
    if m < n:
        raise RuntimeError(messages.HOUSEHOLDER_TALL)
    if tau.ndim and n < tau.shape[-1]:
        raise RuntimeError(messages.HOUSEHOLDER_TAU_COLUMNS)
    _check_tau_batch(name, input, tau)
    if tau.dtype != input.dtype:
        raise RuntimeError(messages.householder_tau_dtype(
            tau.dtype.scalar_name, input.dtype.scalar_name))
    _check_real_floating(input, "orgqr_cpu")
    a, t = np.asarray(input._data), np.asarray(tau._data)
    k = t.shape[-1]
    eye = np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape).copy()
    q = _apply(_reflectors(a, k), t, eye, left=True, adjoint=False)
    result = common.new(column_major(q), input.dtype, input.device, order="K")
    return record(HOUSEHOLDER_PRODUCT, result, [input, tau])


def _check_tau_batch(name: str, input: Tensor, tau: Tensor) -> None:
    if input.ndim - tau.ndim != 1:
        raise RuntimeError(messages.householder_tau_ndim(name, tau.ndim, input.ndim))
    if tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise RuntimeError(messages.householder_batch(name, "tau", list(tau.shape[:-1])))


# ---- ormqr ---------------------------------------------------------------------------------

def _ormqr_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """ormqr_backward: other's grad is ormqr with the adjoint flipped; self's and tau's are
    householder_product_backward's, with grad and result (left ^ transpose), or the result's
    and grad's adjoints in the reversed order of reflectors."""
    left, transpose = c.left, c.transpose
    mask = tuple(c._node.should_compute(i) for i in range(3))

    def triple() -> tuple[Tensor | None, Tensor | None, Tensor | None]:
        other = ormqr(c.self, c.input2, g, left, not transpose) if mask[2] else None
        self_grad = tau_grad = None
        if mask[0] or mask[1]:
            if left ^ transpose:
                hg, hr = (g, c.result) if not transpose else (mH_of(g), mH_of(c.result))
                self_grad, tau_grad = householder_product_backward(hg, hr, c.self, c.input2)
            else:
                hg, hr = (mH_of(c.result), mH_of(g)) if not transpose else (c.result, g)
                self_grad, tau_grad = householder_product_backward(
                    hg, hr, c.self, c.input2, flip_order=True)
        return self_grad, tau_grad, other
    return _joint(c, triple, 3)


ORMQR = OpSpec("OrmqrBackward0", ("self", "input2", "input3"),
               dict.fromkeys(("self", "input2", "input3"),
                             ("input2", "input3", "result", "self")),
               _ormqr_backward, jvp=common.no_jvp("ormqr"))


def ormqr(self: Tensor, input2: Tensor, input3: Tensor, left: bool = True,
          transpose: bool = False) -> Tensor:
    """torch.ormqr (Tensor.ormqr): op(Q) other or other op(Q), Q the product of the
    reflectors of input (self) and tau (input2), other input3; torch's texts name them
    input, tau and other."""
    name, tau, other = "torch.ormqr", input2, input3
    if self.ndim < 2:
        raise RuntimeError(messages.householder_at_least_2d(name, "input"))
    if other.ndim < 2:
        raise RuntimeError(messages.householder_at_least_2d(name, "other"))
    side = -2 if left else -1
    if other.shape[side] != self.shape[-2]:
        raise RuntimeError(messages.ormqr_other_size(side))
    if (tau.shape[-1] if tau.ndim else 1) != min(other.shape[side], self.shape[-1]):
        raise RuntimeError(messages.ormqr_tau_size(side))
    if self.ndim != other.ndim:
        raise RuntimeError(messages.ormqr_other_ndim(other.ndim, self.ndim))
    _check_tau_batch(name, self, tau)
    if tuple(other.shape[:-2]) != tuple(self.shape[:-2]):
        raise RuntimeError(messages.householder_batch(name, "other", list(other.shape[:-2])))
    for arg, t in (("tau", tau), ("other", other)):
        if t.dtype != self.dtype:
            raise RuntimeError(messages.ormqr_dtype(arg, self.dtype.scalar_name,
                                                    t.dtype.scalar_name))
    _check_real_floating(self, "ormqr_cpu")
    a, t_np = np.asarray(self._data), np.asarray(tau._data)
    out = _apply(_reflectors(a, t_np.shape[-1]), t_np, np.asarray(other._data), left, transpose)
    result = common.new(column_major(out), other.dtype, other.device, order="K")
    return record(ORMQR, result, [self, tau, other], left=left, transpose=transpose)
