"""The rows test_gradcheck.py checks by central differences (and test_forward_ad.py,
test_gradcheck_coverage.py and test_registry.py read): OPS, name -> (function, input
shapes). One row for every op of reference_engine/registry.py with a sample, and its
in-place form, made from the sample; then the variants written here by hand (_BY_HAND).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

import reference_engine as torch
from reference_engine.registry import OPS as REGISTRY
from reference_engine.registry import Const, OpRow

F = torch.nn.functional
IDX = torch.tensor([[0, 2], [1, 1]])
COLS = torch.tensor([2, 0, 2])
TARGET = torch.tensor([0, 2])
WEIGHT = torch.tensor([0.5, 1.5, 2.0])
ZERO_AT_1 = torch.tensor([[1.0, 0.0, 1.0], [1.0, 1.0, 1.0]], dtype=torch.float64)


def _setitem(a: Any, b: Any) -> Any:
    c = a * 1
    c[1] = b
    return c ** 2


def _inplace_view(a: Any) -> Any:
    c = a * 1
    v = c[1]   # a view from before the write: its grad_fn is regenerated (AsStridedBackward0)
    # the operand must not alias c: torch saves it before the write bumps c's version, so
    # c[0].mul_(c[1]) cannot be differentiated (torch and the engine both refuse)
    c[0].mul_(a[1])
    return c ** 2 * v


def _make_dual(a: Any) -> Any:
    """make_dual's alias (ViewBackward0) is differentiable in backward mode."""
    with torch.autograd.forward_ad.dual_level():
        return torch.autograd.forward_ad.make_dual(a, torch.zeros_like(a)) ** 2


def _unpacked_primal(a: Any) -> Any:
    """unpack_dual's primal (an Identity node) is differentiable in backward mode."""
    with torch.autograd.forward_ad.dual_level():
        return torch.autograd.forward_ad.unpack_dual(a).primal ** 2


def _p(a: Any) -> Any:
    """A positive operand (log, sqrt, pow's base, prod) built from an unconstrained one."""
    return a * a + 0.5


def _C(a: Any) -> Any:
    """(..., 2) real pairs as complex numbers."""
    return torch.view_as_complex(a)


def _R(z: Any) -> Any:
    """complex numbers as (..., 2) real pairs (a contiguous copy first: z may be a conj view)."""
    return torch.view_as_real(z.resolve_conj() * 1)


Row = tuple[Callable[..., Any], list[tuple[int, ...]]]


def _argument(value: object) -> Any:
    if isinstance(value, Const):
        return torch.tensor(value.values, dtype=getattr(torch, value.dtype))
    return value


def _call(row: OpRow, inplace: bool) -> Callable[..., Any]:
    """The registry row's sample call: torch.<name>(*xs, *args), the method where the row has
    no function, an in-place form on a copy of the first input (a leaf cannot be written)."""
    sample = row.sample
    assert sample is not None

    def f(*xs: Any) -> Any:
        xs = tuple(_p(x) for x in xs) if sample.positive else xs
        args = tuple(_argument(a) for a in sample.args)
        if inplace or row.name.endswith("_"):
            name = row.inplace_name if inplace else row.name
            return getattr(xs[0] * 1, str(name))(*xs[1:], *args)
        if row.function:   # a dotted name: torch.nn.functional.relu, torch.special.entr
            return functools.reduce(getattr, row.name.split("."), torch)(*xs, *args)
        return getattr(xs[0], row.name)(*xs[1:], *args)
    return f


def _from_registry() -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for row in REGISTRY:
        if row.sample is not None:
            rows[row.name] = (_call(row, False), list(row.sample.shapes))
            if row.inplace_name is not None:
                rows[row.inplace_name] = (_call(row, True), list(row.sample.shapes))
    return rows


def _factor(a: Any) -> Any:
    """A lower-triangular matrix with a dominant diagonal made from a square `a`."""
    n = a.shape[-1]
    lower = torch.tensor(np.tril(np.ones((n, n))), dtype=a.dtype)
    return a * lower + torch.tensor(2 * np.eye(n), dtype=a.dtype)


def _spd(a: Any) -> Any:
    """A symmetric positive-definite matrix made from a square `a`."""
    return a.mm(a.t()) + torch.tensor(3 * np.eye(a.shape[-1]), dtype=a.dtype)


# Variants the registry's samples do not make: keywords, scalars, compositions that give a
# linear op a non-zero second derivative, ops a sample cannot call (lists, a condition first).
# name -> (function, input shapes). Outputs may be tuples (multi-output ops).
def _svd_k(usv: Any) -> Any:
    """U, S, Vh narrowed to the k = len(S) singular vectors."""
    u, s, vh = usv
    k = s.shape[-1]
    return u[..., :k], s, vh[..., :k, :]


def _batch_norm_eval(x: Any, w: Any, b: Any) -> Any:
    from reference_engine.nn.batchnorm import batch_norm_eval
    mean = torch.tensor([0.5, -0.25, 0.0], dtype=x.dtype)
    var = torch.tensor([1.5, 0.5, 2.0], dtype=x.dtype)
    return batch_norm_eval(x, mean, var, w, b, 1e-5)


_BY_HAND: dict[str, Row] = {
    # arithmetic
    "add_composed": (lambda a, b: a + b, [(2, 3), (3,)]),
    "add_alpha": (lambda a, b: torch.add(a, b, alpha=3), [(2, 3), (2, 3)]),
    "sub_composed": (lambda a, b: torch.sub(a, b, alpha=2), [(2, 3), (2, 3)]),
    "rsub_composed": (lambda a: 2 - a, [(3,)]),
    "mul_composed": (lambda a, b: a * b, [(2, 3), (1, 3)]),
    "mul_scalar": (lambda a: a * 3, [(3,)]),
    "div_scalar": (lambda a: a / 4, [(3,)]),
    "rdiv": (lambda a: 2 / _p(a), [(3,)]),
    # eq_ (EqBackward1 / EqBackward0): a zero gradient to self and to other
    "eq__tensor": (lambda a, b: (a * 1).eq_(b) * a, [(3,), (3,)]),
    "eq__scalar": (lambda a: (a * 1).eq_(0.5) * a, [(3,)]),
    # igamma's derivative for `input` is not_implemented in derivatives.yaml: `other` only
    "igamma_other": (lambda a: torch.igamma(torch.tensor([0.7, 1.5, 3.0], dtype=a.dtype), _p(a)),
                     [(3,)]),
    "pow_scalar": (lambda a: a ** 3, [(3,)]),
    "pow_tensor": (lambda a, b: _p(a) ** b, [(3,), (3,)]),
    "rpow": (lambda a: 2 ** a, [(3,)]),
    "neg_composed": (lambda a: -a, [(3,)]),
    # unary
    "abs_composed": (lambda a: a.abs() * a, [(4,)]),
    "relu_composed": (lambda a: a.relu() * a, [(4,)]),
    "clamp_composed": (lambda a: a.clamp(-0.5, 0.5) * a, [(4,)]),
    "clamp_min_keyword": (lambda a: torch.clamp(a, min=0.1) ** 2, [(4,)]),
    "maximum_composed": (lambda a, b: torch.maximum(a, b) ** 2, [(4,), (4,)]),
    "minimum_composed": (lambda a, b: torch.minimum(a, b) ** 2, [(4,), (4,)]),
    "where": (lambda a, b: torch.where(a > 0, a, b) ** 2, [(4,), (4,)]),
    # indexing and scatter (issue 24): the source differentiable too, which a registry sample
    # cannot make (it is not the second parameter); index_put takes a list of indices
    "index_put": (lambda a, b: torch.index_put(a, (torch.tensor([1, 0]),), b), [(2, 3), (2, 3)]),
    "index_put_accumulate": (lambda a, b: torch.index_put(a, (torch.tensor([1, 1]),), b, True),
                             [(2, 3), (2, 3)]),
    # distinct indices: with a repeated one, torch's formula (gather) differs from the
    # central difference (the last write wins), and the engine follows torch
    "scatter_src": (lambda a, b: torch.scatter(a, 1, torch.tensor([[0, 2], [1, 0]]), b),
                    [(2, 3), (2, 2)]),
    "scatter_reduce_amax": (lambda a, b: torch.scatter_reduce(a, 1, IDX, b, "amax"),
                            [(2, 3), (2, 2)]),
    "scatter_reduce_prod": (lambda a, b: torch.scatter_reduce(a, 1, IDX, b, "prod",
                                                              include_self=False),
                            [(2, 3), (2, 2)]),
    "index_reduce_mean": (lambda a, b: torch.index_reduce(a, 0, torch.tensor([1, 1]), b, "mean"),
                          [(2, 3), (2, 3)]),
    "index_add_alpha": (lambda a, b: torch.index_add(a, 0, torch.tensor([1, 1]), b, alpha=2),
                        [(2, 3), (2, 3)]),
    "masked_scatter_source": (lambda a, b: torch.masked_scatter(a, a > 0, b), [(2, 3), (6,)]),
    "put_source": (lambda a, b: torch.put(a, torch.tensor([4, 4]), b, True), [(2, 3), (2,)]),
    "fill_tensor": (lambda a, v: torch.fill(a, v.sum()) * a, [(2, 3), (1,)]),
    # matrix products
    "mm_transposed": (lambda a, b: a.t().mm(b.t()), [(3, 2), (4, 3)]),
    "matmul_1d_1d": (lambda a, b: a @ b, [(3,), (3,)]),
    "matmul_2d_1d": (lambda a, b: a @ b, [(2, 3), (3,)]),
    "matmul_1d_2d": (lambda a, b: a @ b, [(3,), (3, 2)]),
    "matmul_2d_2d": (lambda a, b: a @ b, [(2, 3), (3, 2)]),
    "matmul_batched": (lambda a, b: a @ b, [(2, 2, 3), (2, 3, 2)]),
    "matmul_broadcast": (lambda a, b: a @ b, [(2, 1, 2, 3), (3, 3, 2)]),
    "matmul_fold": (lambda a, b: a @ b, [(2, 2, 3), (3, 2)]),
    "matmul_fold_transposed": (lambda a, b: a @ b, [(2, 3), (2, 3, 2)]),
    "matmul_1d_3d": (lambda a, b: a @ b, [(3,), (2, 3, 2)]),
    "matmul_3d_1d": (lambda a, b: a @ b, [(2, 2, 3), (3,)]),
    # reductions
    "sum_composed": (lambda a: a.sum() ** 2, [(2, 3)]),
    "sum_dim": (lambda a: a.sum(1) ** 2, [(2, 3)]),
    "mean_composed": (lambda a: a.mean() ** 2, [(2, 3)]),
    "mean_dim": (lambda a: a.mean(0, keepdim=True) ** 2, [(2, 3)]),
    "prod_dim": (lambda a: _p(a).prod(1), [(2, 3)]),
    "prod_dim_keepdim": (lambda a: torch.prod(_p(a), 0, keepdim=True), [(2, 3)]),
    "amax_composed": (lambda a: a.amax() * a, [(2, 3)]),
    "amax_dim": (lambda a: a.amax(1) ** 2, [(2, 3)]),
    "amin_dims": (lambda a: torch.amin(a, (0, 1), keepdim=True) * a, [(2, 3)]),
    "max_composed": (lambda a: a.max() ** 2, [(2, 3)]),
    "min_composed": (lambda a: torch.min(a) * a, [(2, 3)]),
    "max_dim": (lambda a: a.max(1).values ** 2, [(2, 3)]),
    "min_dim_keepdim": (lambda a: torch.min(a, 0, keepdim=True)[0] * a, [(2, 3)]),
    "max_binary": (lambda a, b: torch.max(a, b) ** 2, [(3,), (3,)]),
    "F_softmax": (lambda a: F.softmax(a, dim=-1), [(3,)]),
    # nn.functional
    "mse_loss": (lambda a, b: F.mse_loss(a, b), [(2, 3), (2, 3)]),
    "mse_loss_sum": (lambda a, b: F.mse_loss(a, b, reduction="sum"), [(3,), (3,)]),
    "mse_loss_none": (lambda a, b: F.mse_loss(a, b, reduction="none"), [(3,), (3,)]),
    "cross_entropy": (lambda a: F.cross_entropy(a, TARGET), [(2, 3)]),
    "cross_entropy_sum": (lambda a: F.cross_entropy(a, TARGET, reduction="sum"), [(2, 3)]),
    "cross_entropy_none": (lambda a: F.cross_entropy(a, TARGET, reduction="none"), [(2, 3)]),
    "linear": (lambda x, w, b: F.linear(x, w, b) ** 2, [(2, 3), (4, 3), (4,)]),
    # issue 24's nn.functional rows: variants and rows without a sample
    # the indices come first (no registry sample)
    "nn.functional.embedding": (
        lambda w: F.embedding(torch.tensor([[0, 2], [2, 1]]), w), [(3, 2)]),
    "nn.functional.binary_cross_entropy_probabilities": (
        lambda a, b: F.binary_cross_entropy(torch.sigmoid(a), torch.sigmoid(b)), [(2, 3), (2, 3)]),
    # (weight and pos_weight are not differentiable: constants)
    "nn.functional.binary_cross_entropy_weighted": (
        lambda a, b: F.binary_cross_entropy(torch.sigmoid(a), torch.sigmoid(b), WEIGHT,
                                            reduction="sum"), [(2, 3), (2, 3)]),
    "nn.functional.binary_cross_entropy_with_logits_weights": (
        lambda a, b: F.binary_cross_entropy_with_logits(a, b, WEIGHT, pos_weight=WEIGHT * 2,
                                                        reduction="none"), [(2, 3), (2, 3)]),
    "nn.functional.smooth_l1_loss_beta": (
        lambda a, b: F.smooth_l1_loss(a, b, beta=0.5, reduction="sum"), [(2, 3), (2, 3)]),
    "nn.functional.huber_loss_delta": (
        lambda a, b: F.huber_loss(a, b, delta=0.5, reduction="none"), [(2, 3), (2, 3)]),
    "special.ndtri_probabilities": (lambda a: torch.special.ndtri(torch.sigmoid(a)), [(3,)]),
    "special.xlog1py_number": (lambda a: torch.special.xlog1py(2.0, _p(a)), [(3,)]),
    "nn.functional.gelu_tanh": (lambda a: F.gelu(a * 3, approximate="tanh"), [(4,)]),
    "nn.functional.elu_alpha": (lambda a: F.elu(a * 3, alpha=0.5), [(4,)]),
    "nn.functional.softplus_beta": (lambda a: F.softplus(a * 3, beta=2, threshold=2), [(4,)]),
    # threshold_ in place (ThresholdBackward1), on a non-leaf
    "nn.functional.threshold_inplace": (
        lambda a: F.threshold(a * 3, 0.5, -1.0, inplace=True), [(4,)]),
    "linear_1d": (lambda x, w, b: F.linear(x, w, b) ** 2, [(3,), (4, 3), (4,)]),
    "linear_3d": (lambda x, w, b: F.linear(x, w, b) ** 2, [(2, 2, 3), (4, 3), (4,)]),
    "linear_no_bias": (lambda x, w: F.linear(x, w) ** 2, [(2, 3), (4, 3)]),
    # joining, indexing, copying
    "cat": (lambda a, b: torch.cat([a, b], 1) ** 2, [(2, 1), (2, 3)]),
    "stack": (lambda a, b: torch.stack([a, b], 1) ** 2, [(2,), (2,)]),
    "gather_composed": (lambda a: torch.gather(a, 1, IDX) ** 2, [(2, 3)]),
    "index_select_composed": (lambda a: a.index_select(1, COLS) ** 2, [(2, 3)]),
    "masked_fill_composed": (lambda a: a.masked_fill(a > 0, 0.5) ** 2, [(2, 3)]),
    "masked_fill_tensor": (lambda a, v: a.masked_fill(a > 0, v) * a, [(2, 3), ()]),
    "clone_composed": (lambda a: a.clone() ** 2, [(2, 3)]),
    "to_device": (lambda a: a.cuda().cpu() ** 2, [(2, 3)]),
    "contiguous_transposed": (lambda a: a.t().contiguous() ** 2, [(2, 3)]),
    "index_advanced": (lambda a: a[a > 0] ** 2, [(5,)]),
    "setitem": (_setitem, [(3,), ()]),
    # views
    "view": (lambda a: a.view(3, 2) ** 2, [(2, 3)]),
    "view_as": (lambda a, b: a.view_as(b) * b, [(2, 3), (3, 2)]),
    "reshape_composed": (lambda a: a.reshape(6) ** 2, [(2, 3)]),
    "reshape_copy": (lambda a: a.t().reshape(6) ** 2, [(2, 3)]),
    "reshape_alias": (lambda a: a.expand(2, 3).reshape(2, 3, 1) ** 2, [(3,)]),
    "transpose_composed": (lambda a: a.transpose(0, 1) ** 2, [(2, 3)]),
    "t_composed": (lambda a: a.t() ** 2, [(2, 3)]),
    "permute_composed": (lambda a: a.permute(2, 0, 1) ** 2, [(2, 3, 2)]),
    "squeeze_composed": (lambda a: a.squeeze() ** 2, [(2, 1, 3)]),
    "squeeze_dim": (lambda a: a.squeeze(1) ** 2, [(2, 1, 3)]),
    "squeeze_dims": (lambda a: a.squeeze((0, 1)) ** 2, [(1, 1, 3)]),
    "unsqueeze_composed": (lambda a: a.unsqueeze(1) ** 2, [(2, 3)]),
    "expand": (lambda a: a.expand(2, 3, 3) ** 2, [(3, 1)]),
    "flatten_composed": (lambda a: a.flatten() ** 2, [(2, 3)]),
    "flatten_dims": (lambda a: torch.flatten(a, 1) ** 2, [(2, 3, 2)]),
    "narrow_composed": (lambda a: a.narrow(1, 1, 2) ** 2, [(2, 3)]),
    "select_composed": (lambda a: a.select(1, 2) ** 2, [(2, 3)]),
    "index_basic": (lambda a: a[1:, 0] ** 2, [(3, 2)]),
    "index_alias": (lambda a: a[...] ** 2, [(3, 2)]),
    "view_chain": (lambda a: a.t().reshape(6).view(2, 3).transpose(0, 1)[1:, 0] ** 2,
                   [(2, 3)]),
    "diagonal_composed": (lambda a: a.diagonal() ** 2, [(3, 3)]),
    "diagonal_offset": (lambda a: torch.diagonal(a, 1) ** 2, [(3, 4)]),
    "unbind_composed": (lambda a: a.unbind(1), [(2, 3)]),
    "unbind_partly_used": (lambda a: a.unbind(0)[1] ** 2, [(2, 3)]),
    "split_sizes": (lambda a: a.split([1, 2], 1), [(2, 3)]),
    # shape, views, joining and splitting (issue 24): the rows without a sample
    "expand_as": (lambda a, b: a.expand_as(b) * b, [(3, 1), (2, 3, 2)]),
    "reshape_as": (lambda a, b: a.t().reshape_as(b) * b, [(2, 3), (6,)]),
    "meshgrid": (lambda a, b: torch.meshgrid(a, b, indexing="xy"), [(3,), (2,)]),
    "hstack": (lambda a, b: torch.hstack([a, b]) ** 2, [(2, 1), (2, 3)]),
    "vstack": (lambda a, b: torch.vstack([a, b]) ** 2, [(3,), (2, 3)]),
    "dstack": (lambda a, b: torch.dstack([a, b]) ** 2, [(2,), (1, 2, 3)]),
    "column_stack": (lambda a, b: torch.column_stack([a, b]) ** 2, [(2,), (2, 2)]),
    "unfold_composed": (lambda a: a.unfold(1, 2, 1) ** 2, [(2, 4)]),
    "roll_flat": (lambda a: torch.roll(a, 2) ** 2, [(2, 3)]),
    "repeat_interleave_tensor": (lambda a: torch.repeat_interleave(
        a, torch.tensor([0, 2, 1]), dim=1) ** 2, [(2, 3)]),
    "constant_pad_nd_composed": (lambda a: torch.constant_pad_nd(a, (2, -1), 0.5) ** 2,
                                 [(2, 3)]),
    "block_diag_composed": (lambda a, b, c: torch.block_diag(a, b, c) ** 2, [(), (2,), (2, 2)]),
    "unsafe_split_composed": (lambda a: [p ** 2 for p in torch.unsafe_split(a, 2, 1)],
                              [(2, 3)]),
    "T": (lambda a: a.T ** 2, [(2, 3)]),
    "mT": (lambda a: a.mT ** 2, [(2, 2, 3)]),
    "H": (lambda a: a.H ** 2, [(2, 3)]),
    "mH": (lambda a: a.mH ** 2, [(2, 3)]),
    "as_strided_overlapping": (lambda a: a.as_strided((2, 2), (1, 1)) ** 2, [(3,)]),
    "cat_legacy_empty": (lambda a, b: torch.cat([a, b], 1) ** 2, [(0,), (2, 3)]),
    # in-place forms
    "add__composed": (lambda a, b: (a * 1).add_(b, alpha=2) ** 2, [(3,), (3,)]),
    "sub__composed": (lambda a, b: (a * 1).sub_(b) ** 2, [(3,), (3,)]),
    "mul__composed": (lambda a, b: (a * 1).mul_(b), [(3,), (3,)]),
    "pow__composed": (lambda a: (a * 1).pow_(3), [(3,)]),
    "pow_tensor_": (lambda a, b: _p(a).pow_(b), [(3,), (3,)]),
    "neg__composed": (lambda a: (a * a).neg_(), [(3,)]),
    "abs__composed": (lambda a: (a * 1).abs_() * a, [(3,)]),
    "relu__composed": (lambda a: (a * 1).relu_() * a, [(4,)]),
    "clamp__composed": (lambda a: (a * 1).clamp_(-0.5, 0.5) * a, [(4,)]),
    "masked_fill__composed": (lambda a: (a * 1).masked_fill_(a > 0, 2.0) * a, [(2, 3)]),
    "t__composed": (lambda a: (a * 1).t_() ** 2, [(2, 3)]),
    "transpose__composed": (lambda a: (a * 1).transpose_(0, 1) ** 2, [(2, 3)]),
    "squeeze__composed": (lambda a: (a * 1).squeeze_() ** 2, [(2, 1)]),
    "unsqueeze__composed": (lambda a: (a * 1).unsqueeze_(0) ** 2, [(2,)]),
    "as_strided__composed": (lambda a: (a * 1).as_strided_((2, 2), (1, 2), 1) ** 2,
                             [(3, 3)]),
    "squeeze_dims_": (lambda a: (a * 1).squeeze_((0, 2)) ** 2, [(1, 2, 1)]),
    "zero__composed": (lambda a: (a * 1).zero_() + a ** 2, [(3,)]),
    "fill__composed": (lambda a: (a * 1).fill_(2.0) * a, [(3,)]),
    # fill_ with a 0-d tensor value: FillBackward3, the value's gradient the grad's sum
    "fill__tensor_composed": (lambda a, v: (a * 1).fill_(v.sum()) * a, [(3,), (2,)]),
    "copy__composed": (lambda a, b: (a * 1).copy_(b) ** 2 * a, [(3,), (3,)]),
    "inplace_on_view": (_inplace_view, [(2, 2)]),
    # a Cholesky factor: triangular (the op reads one triangle) with a dominant diagonal
    "cholesky_inverse_lower": (lambda a: torch.cholesky_inverse(_factor(a)), [(3, 3)]),
    "cholesky_inverse_upper": (lambda a: torch.cholesky_inverse(_factor(a).t(), upper=True),
                               [(3, 3)]),
    "cholesky_solve_lower": (lambda b, a: torch.cholesky_solve(b, _factor(a)), [(3, 2), (3, 3)]),
    "cholesky_solve_upper": (lambda b, a: torch.cholesky_solve(b, _factor(a).t(), upper=True),
                             [(3, 2), (3, 3)]),
    "linalg.solve_triangular_lower": (lambda a, b: torch.linalg.solve_triangular(
        _factor(a), b, upper=False), [(3, 3), (3, 2)]),
    "linalg.solve_triangular_upper_right_unit": (lambda a, b: torch.linalg.solve_triangular(
        _factor(a).t(), b, upper=True, left=False, unitriangular=True), [(3, 3), (2, 3)]),
    # einsum (h27ops): a contraction through bmm, a diagonal with an ellipsis, an outer product
    "einsum_bmm": (lambda a, b: torch.einsum("bij,bjk->bik", a, b), [(2, 2, 3), (2, 3, 2)]),
    "einsum_diagonal": (lambda a: torch.einsum("ii...->i...", a), [(3, 3, 2)]),
    "einsum_outer_list": (lambda a, b: torch.einsum("i,j", [a, b]), [(2,), (3,)]),
    # lu_unpack (h27ops): of a factorisation, square and wide
    "lu_unpack": (lambda a: torch.lu_unpack(*torch.linalg.lu_factor(a))[1:], [(3, 3)]),
    "lu_unpack_wide": (lambda a: torch.lu_unpack(*torch.linalg.lu_factor(a))[1:], [(2, 3)]),
    "linalg.lu_solve": (lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b),
                        [(3, 3), (3, 2)]),
    "linalg.lu_solve_right_adjoint": (lambda a, b: torch.linalg.lu_solve(
        *torch.linalg.lu_factor(a), b, left=False, adjoint=True), [(3, 3), (2, 3)]),
    "lu_solve": (lambda b, a: torch.lu_solve(b, *torch.linalg.lu_factor(a)), [(3, 2), (3, 3)]),
    # triangular_solve (h27ops): torch's jvp reads all of A's tangent, its forward one triangle
    "triangular_solve_upper": (lambda b, a: torch.triangular_solve(b, _factor(a).t()),
                               [(3, 2), (3, 3)]),
    "triangular_solve_lower_transpose_unit": (lambda b, a: torch.triangular_solve(
        b, _factor(a).tril(-1), upper=False, transpose=True, unitriangular=True),
        [(2, 3, 2), (3, 3)]),
    # a symmetric positive-definite input
    "cholesky_lower": (lambda a: torch.cholesky(_spd(a)), [(3, 3)]),
    "linalg.cholesky_upper": (lambda a: torch.linalg.cholesky(_spd(a), upper=True), [(3, 3)]),
    "linalg.cholesky_ex_lower": (lambda a: torch.linalg.cholesky_ex(_spd(a)).L, [(3, 3)]),
    "linalg.matrix_power_negative": (lambda a: torch.linalg.matrix_power(_spd(a), -5),
                                     [(2, 2)]),
    "linalg.multi_dot_chain": (lambda a, b, c, d: torch.linalg.multi_dot([a, b, c, d]),
                               [(2, 4), (4, 3), (3, 5), (5, 1)]),
    # determinants (h24ops3): logdet is nan where det < 0, so of a positive-definite matrix
    "logdet": (lambda a: torch.logdet(_spd(a)), [(3, 3)]),
    "det_1x1": (lambda a: torch.linalg.det(a), [(2, 1, 1)]),
    # nll_loss and cross_entropy (h24ops3): weights, ignored targets, the spatial kernel,
    # label smoothing's composite, class probabilities
    "nll_loss_weight_ignore": (lambda a: torch.nn.functional.nll_loss(
        a, torch.tensor([0, 2, 1]), weight=torch.tensor([0.5, 2.0, 1.5], dtype=a.dtype),
        ignore_index=1), [(3, 3)]),
    "nll_loss_spatial_none": (lambda a: torch.nn.functional.nll_loss(
        a, torch.tensor([[[0, 2]], [[1, 1]]]), reduction="none"), [(2, 3, 1, 2)]),
    "cross_entropy_smoothing_weight": (lambda a: torch.nn.functional.cross_entropy(
        a, torch.tensor([0, 2, 1]), weight=torch.tensor([0.5, 2.0, 1.5], dtype=a.dtype),
        ignore_index=2, label_smoothing=0.2), [(3, 3)]),
    "cross_entropy_probabilities": (lambda a, b: torch.nn.functional.cross_entropy(a, b),
                                    [(2, 3), (2, 3)]),
    # normalisations (h24ops3): with their affine parameters
    "layer_norm_affine": (lambda a, w, b: torch.nn.functional.layer_norm(a, (2, 3), w, b),
                          [(2, 2, 3), (2, 3), (2, 3)]),
    "native_layer_norm_output": (lambda a, w: torch.native_layer_norm(a, (3,), w, None,
                                                                      1e-5)[0], [(2, 3), (3,)]),
    "rms_norm_weight": (lambda a, w: torch.nn.functional.rms_norm(a, (3,), w), [(2, 3), (3,)]),
    "group_norm_affine": (lambda a, w, b: torch.nn.functional.group_norm(a, 2, w, b),
                          [(2, 4, 3), (4,), (4,)]),
    "native_group_norm_stats": (lambda a: torch.native_group_norm(a, None, None, 2, 4, 3, 2,
                                                                  1e-5), [(2, 4, 3)]),
    # elementwise math (issue 24): domains and calls a registry sample cannot make
    "acosh": (lambda a: torch.acosh(a * a + 1.5), [(3,)]),
    "polygamma": (lambda a: torch.polygamma(1, _p(a)), [(3,)]),
    "polygamma_3": (lambda a: torch.polygamma(3, _p(a)), [(3,)]),
    "special_i1": (lambda a: torch.i0(a) * a, [(3,)]),
    "clamp_tensor": (lambda a, lo, hi: torch.clamp(a, lo, hi) ** 2, [(4,), (4,), (4,)]),
    "clamp_tensor_min": (lambda a, lo: torch.clamp(a, lo) * a, [(4,), (1,)]),
    "clamp_min_tensor": (lambda a, b: torch.clamp_min(a, b) ** 2, [(4,), (4,)]),
    "clamp_max_tensor": (lambda a, b: torch.clamp_max(a, b) ** 2, [(4,), (4,)]),
    "xlogy_scalar_other": (lambda a: torch.xlogy(a, 2.0), [(3,)]),
    "xlogy_scalar_self": (lambda a: torch.xlogy(2.0, _p(a)), [(3,)]),
    "copysign_scalar": (lambda a: torch.copysign(a, -1.0) * a, [(3,)]),
    "fmod_scalar": (lambda a: torch.fmod(a, 0.3) * a, [(3,)]),
    "remainder_scalar": (lambda a: torch.remainder(a, 0.3) * a, [(3,)]),
    "lerp_scalar": (lambda a, b: torch.lerp(a, b, 0.3) ** 2, [(2, 3), (3,)]),
    "round_decimals": (lambda a: torch.round(a, decimals=1) + a * a, [(3,)]),
    "logit_no_eps": (lambda a: torch.logit(a * a * 0.5 + 0.2), [(3,)]),
    "div_trunc": (lambda a, b: torch.div(a, b, rounding_mode="trunc") + a * b, [(3,), (3,)]),
    "div_no_rounding": (lambda a, b: torch.div(a, _p(b), rounding_mode=None), [(3,), (3,)]),
    # Conversions: in float64 double() returns self, and float()'s float32 rounding is far
    # above central differences' resolution, so these rows only run the backward and double
    # backward through ToCopyBackward0 (its values: the OpInfo check against torch's)
    "double": (lambda a: a.to(torch.float32).double() * 0 + a.double() ** 2, [(3,)]),
    "float": (lambda a: a.float().to(torch.float64) * 1e-30 + a ** 2, [(3,)]),
    # forward mode's aliases
    "make_dual": (_make_dual, [(2, 3)]),
    "unpack_dual_primal": (_unpacked_primal, [(2, 3)]),
    # reductions, scans and sorting (issue 24): the overloads a row's one sample does not
    # call, and the formulas' zero branches (an input with a zero: prod_safe_zeros_backward,
    # cumprod_backward's O(n) and create_graph branches)
    "median_all": (lambda a: torch.median(a) * a, [(2, 3)]),
    "nanmedian_all": (lambda a: a.nanmedian() * a, [(2, 3)]),
    "sort_stable": (lambda a: torch.sort(a, stable=True, descending=True)[0] ** 2, [(2, 3)]),
    "quantile_q_tensor": (lambda a, q: torch.quantile(a, torch.sigmoid(q), dim=1) ** 2,
                          [(2, 5), (2,)]),
    "prod_zeros": (lambda a: (a * ZERO_AT_1).prod(1) ** 2, [(2, 3)]),
    "prod_all_zeros": (lambda a: (a * ZERO_AT_1).prod() * a, [(2, 3)]),
    "cumprod_zeros": (lambda a: (a * ZERO_AT_1).cumprod(1) ** 2, [(2, 3)]),
    # complex ops (issue 22), each a real function of real inputs through complex values
    # (C: the complex view of (..., 2) pairs; R: back to pairs), so central differences
    # check torch's convention: a real loss's gradient is the conjugate Wirtinger one
    "view_as_complex": (lambda a: _R(_C(a) * _C(a)), [(3, 2)]),
    "view_as_real": (lambda a, b: _R(torch.complex(a, b)) ** 2, [(3,), (3,)]),
    "imag": (lambda a, b: torch.imag(torch.complex(a, b) * torch.complex(b, a)), [(3,), (3,)]),
    "polar": (lambda r, t: _R(torch.polar(_p(r), t)), [(3,), (3,)]),
    "complex": (lambda a, b: _R(torch.complex(a, b) * torch.complex(b, a)), [(3,), (3,)]),
    "complex_real": (lambda a, b: (_C(a) * _C(b)).real, [(3, 2), (3, 2)]),
    "complex_mul_real": (lambda a, b: _R(a * _C(b)), [(3,), (3, 2)]),
    "complex_div": (lambda a, b: _R(_C(a) / torch.complex(_p(b[:, 0]), b[:, 1])),
                    [(3, 2), (3, 2)]),
    "complex_exp": (lambda a: _R(torch.exp(_C(a))), [(3, 2)]),
    "complex_log": (lambda a, b: _R(torch.log(torch.complex(_p(a), b))), [(3,), (3,)]),
    "complex_sqrt": (lambda a, b: _R(torch.sqrt(torch.complex(_p(a), b))), [(3,), (3,)]),
    "complex_reciprocal": (lambda a, b: _R(torch.reciprocal(torch.complex(_p(a), b))),
                           [(3,), (3,)]),
    "complex_pow": (lambda a: _R(_C(a) ** 3), [(3, 2)]),
    "complex_abs": (lambda a, b: torch.complex(_p(a), b).abs(), [(3,), (3,)]),
    "complex_angle": (lambda a, b: torch.complex(_p(a), b).angle(), [(3,), (3,)]),
    "complex_sgn": (lambda a, b: _R(torch.sgn(torch.complex(_p(a), b))), [(3,), (3,)]),
    "complex_conj": (lambda a, b: _R(_C(a).conj() * _C(b)), [(3, 2), (3, 2)]),
    "complex_conj_imag": (lambda a, b: (_C(a).conj() * _C(b)).conj().imag, [(3, 2), (3, 2)]),
    "complex_conj_physical": (lambda a, b: _R(torch.conj_physical(_C(a)) * _C(b)),
                              [(3, 2), (3, 2)]),
    "complex_sum": (lambda a: _R((_C(a) * _C(a)).sum()), [(3, 2)]),
    "complex_mean": (lambda a: _R((_C(a) * _C(a)).mean()), [(3, 2)]),
    "complex_mm": (lambda a, b: _R(torch.mm(_C(a), _C(b))), [(2, 3, 2), (3, 2, 2)]),
    "complex_pow_real_base": (lambda a, b: _R(torch.pow(-_p(b), _C(a))), [(3, 2), (3,)]),
    "complex_pow_negative_scalar_base": (lambda a: _R(torch.pow(-1, _C(a))), [(3, 2)]),
    "complex_pow_scalar_base": (lambda a: _R(torch.pow(2.5, _C(a))), [(3, 2)]),
    "complex_norm": (lambda a: torch.norm(_C(a)), [(3, 2)]),
    "complex_norm_1": (lambda a: torch.norm(_C(a), 1), [(3, 2)]),
    "complex_norm_3_dim": (lambda a: torch.norm(_C(a), 3, dim=1), [(2, 3, 2)]),
    "complex_norm_half": (lambda a: torch.norm(_C(a), 0.5), [(3, 2)]),
    "complex_norm_inf": (lambda a: torch.norm(_C(a), float("inf")), [(3, 2)]),
    # the conjugated derivatives of the unary family, tanh/sigmoid_backward, prod, var
    "complex_sin": (lambda a: _R(torch.sin(_C(a))), [(3, 2)]),
    "complex_tan": (lambda a: _R(torch.tan(_C(a))), [(3, 2)]),
    "complex_acosh": (lambda a: _R(torch.acosh(_C(a))), [(3, 2)]),
    "complex_tanh": (lambda a: _R(torch.tanh(_C(a))), [(3, 2)]),
    "complex_sigmoid": (lambda a: _R(torch.sigmoid(_C(a))), [(3, 2)]),
    "complex_prod": (lambda a: _R(_C(a).prod(0)), [(3, 2, 2)]),
    "complex_var": (lambda a: torch.var(_C(a), 0), [(3, 2, 2)]),
    # nn.BatchNorm1d in eval mode (nn/batchnorm.py): running statistics, not differentiable
    "batch_norm_eval": (lambda x, w, b: _batch_norm_eval(x, w, b) ** 2,
                        [(4, 3, 2), (3,), (3,)]),
    # ---- h28ops: spectral decompositions. eigh reads one triangle: on A + A^T, as
    # OpInfo's gradcheck_wrapper_hermitian_input; the other forms of svd and matrix_norm
    "linalg.eigh": (lambda a: tuple(torch.linalg.eigh(a + a.mT)), [(3, 3)]),
    "linalg.eigh_upper": (lambda a: tuple(torch.linalg.eigh(a + a.mT, UPLO="U")), [(3, 3)]),
    "linalg.eigvalsh": (lambda a: torch.linalg.eigvalsh(a + a.mT), [(2, 3, 3)]),
    # full_matrices: the k vectors the singular values pair with (the rest, any basis of a
    # complement, has no derivative), as OpInfo's sample_inputs_svd's uniformize
    "linalg.svd_full_tall": (lambda a: _svd_k(torch.linalg.svd(a)), [(3, 2)]),
    "linalg.svd_full_wide": (lambda a: _svd_k(torch.linalg.svd(a)), [(2, 3)]),
    "linalg.svd_reduced_batch": (lambda a: tuple(torch.linalg.svd(a, full_matrices=False)),
                                 [(2, 3, 3)]),
    "linalg.matrix_norm_2": (lambda a: torch.linalg.matrix_norm(a, 2), [(3, 2)]),
    "linalg.matrix_norm_minus_2_keepdim": (lambda a: torch.linalg.matrix_norm(
        a, -2, dim=(0, 2), keepdim=True), [(3, 2, 2)]),
    "linalg.matrix_norm_nuc": (lambda a: torch.linalg.matrix_norm(a, "nuc"), [(2, 3)]),
    "linalg.cond_minus_2": (lambda a: torch.linalg.cond(a, -2), [(2, 3)]),
    # lstsq: the solution and, of a tall A with gels, the residuals; a wide A's minimum-norm
    # solution; a vector right-hand side
    "linalg.lstsq": (lambda a, b: tuple(torch.linalg.lstsq(a, b, driver="gels")[:2]),
                     [(4, 3), (4, 2)]),
    "linalg.lstsq_wide": (lambda a, b: torch.linalg.lstsq(a, b).solution, [(2, 3), (2, 2)]),
    "linalg.lstsq_vector_gelsd": (lambda a, b: tuple(torch.linalg.lstsq(
        a, b, driver="gelsd")[:2]), [(2, 4, 3), (2, 4)]),
}

OPS: dict[str, Row] = _from_registry()
assert not OPS.keys() & _BY_HAND.keys(), "a hand row is named for a registry row"
OPS.update(_BY_HAND)


def _outputs(y: Any) -> list[Any]:
    return list(y) if isinstance(y, tuple | list) else [y]


# ---- h28nnf (issue 24): F.pad's reflect/replicate modes (1-d to 3-d: six ops and their
# backward ops), cdist's kernels (p = 1, 0 < p < 2, a general p, inf) and its matrix-product
# path for p = 2 (_euclidean_dist, broadcast batches)
_H28NNF: dict[str, Row] = {
    **{f"pad_{mode}_{k}d": (functools.partial(
        lambda a, mode, pad: F.pad(a, pad, mode=mode) ** 2, mode=mode, pad=pad), [shape])
       for mode in ("reflect", "replicate")
       for k, shape, pad in ((1, (2, 3, 4), (1, 2)), (2, (1, 2, 3, 3), (1, 1, 2, 0)),
                             (3, (1, 2, 2, 3), (1, 0, 1, 1, 0, 1)))},
    "pad_replicate_cropping": (lambda a: F.pad(a, (-1, 2), mode="replicate") ** 2, [(2, 4)]),
    **{f"cdist_p{p}": (functools.partial(lambda a, b, p: torch.cdist(a, b, p), p=p),
                       [(2, 3), (4, 3)]) for p in (0.0, 1.0, 0.5, 3.0, float("inf"))},
    "cdist_batched": (lambda a, b: torch.cdist(a, b, 2.0), [(2, 1, 2, 3), (3, 4, 3)]),
    "cdist_mm": (lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
                 [(2, 3), (4, 3)]),
    "cdist_mm_batched": (lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
                         [(2, 1, 2, 3), (3, 4, 3)]),
    "pdist_p3": (lambda a: F.pdist(a, 3.0), [(4, 3)]),
    # F.unfold's create_graph grad is col2im of a grad that depends on the input
    # (Col2ImBackward0)
    "unfold_squared": (lambda a: F.unfold(a, 2, padding=1, stride=(1, 2)) ** 2,
                       [(1, 2, 3, 4)]),
    # torch.gradient's second-order edges, with numbers and with coordinates as spacing
    "gradient_edge_order_2": (lambda a: torch.gradient(a, spacing=2.0, edge_order=2),
                              [(3, 4)]),
    "gradient_coordinates": (lambda a: torch.gradient(
        a, spacing=[torch.tensor([0.0, 1.0, 3.0, 3.5])], dim=1, edge_order=2), [(2, 4)]),
}
assert not OPS.keys() & _H28NNF.keys(), "a row of h28nnf's is named twice"
OPS.update(_H28NNF)
# Rows whose backward torch does not differentiate (derivatives.yaml: _cdist_backward and
# _pdist_backward's formulas are not_implemented): a create_graph grad's node raises
# "the derivative for '<op>' is not implemented." in backward; the op's name.
NO_DOUBLE_BACKWARD: dict[str, str] = {
    **{n: "_cdist_backward" for n in OPS
       if n == "cdist" or (n.startswith("cdist_") and not n.startswith("cdist_mm"))},
    "nn.functional.pdist": "_pdist_backward", "pdist_p3": "_pdist_backward",
}
# Rows where torch's formula is not the derivative for some inputs (their positions here), as
# the engine models it: as_strided_scatter's self grad is the grad at the scattered positions
# and zeros elsewhere (FunctionsManual.cpp as_strided_scatter_backward), the reverse of the
# derivative; torch's OpInfo marks its own test_fn_grad an expectedFailure. The central-
# difference test requires those grads to differ from the derivative (and the others to
# match it), so that a fix in torch's formula shows here.
# ctc_loss's grad is the gradient through log_softmax (LossCTC.cpp; pytorch issue 52241): the
# row through log_softmax has the derivative.
TORCH_FORMULA_NOT_THE_DERIVATIVE: dict[str, tuple[int, ...]] = {
    "as_strided_scatter": (0,), "nn.functional.ctc_loss": (0,)}
# Rows whose backward's result torch records a NotImplemented node for (its backward op has
# no derivatives.yaml entry): differentiating it raises "derivative for <op> is not
# implemented" (a RuntimeError); the op's name.
NOT_IMPLEMENTED_NODE: dict[str, str] = {
    "nn.functional.multi_margin_loss": "aten::multi_margin_loss_backward",
    "nn.functional.multi_margin_loss_none": "aten::multi_margin_loss_backward",
    "nn.functional.multilabel_margin_loss": "aten::multilabel_margin_loss_backward",
    # (h32ops) the first directly, the second behind log_softmax's backward
    "nn.functional.ctc_loss": "aten::_ctc_loss_backward",
    "ctc_loss_through_log_softmax": "aten::_ctc_loss_backward",
    # (h33ops) the fused CPU attention kernel's backward
    **dict.fromkeys(("nn.functional.scaled_dot_product_attention", "sdpa_fused_scaled"),
                    "aten::_scaled_dot_product_flash_attention_for_cpu_backward"),
}


# ---- h29ops2 (issue 24): torch.special.polygamma (n first: no registry sample)
_H29OPS2: dict[str, Row] = {
    "special.polygamma": (lambda a: torch.special.polygamma(2, _p(a)), [(3,)]),
    # margin losses with class-index targets (margins wide enough that hinges count; the
    # central differences stay off the hinges' kinks for uniform inputs in [-1, 1])
    # (h32ops) ctc_loss: targets padded and concatenated; one sample's input shorter
    "nn.functional.ctc_loss": (lambda a: F.ctc_loss(
        a, torch.tensor([[1, 2], [2, 0]]), [4, 3], [2, 1], reduction="sum"), [(4, 2, 3)]),
    "ctc_loss_through_log_softmax": (lambda a: F.ctc_loss(
        a.log_softmax(2), torch.tensor([1, 1, 2]), [4, 3], [2, 1], zero_infinity=True),
        [(4, 2, 3)]),
    "nn.functional.multi_margin_loss": (lambda a: F.multi_margin_loss(
        a, torch.tensor([0, 2]), p=2, margin=3.0, weight=torch.tensor([0.5, -1.0, 2.0])),
        [(2, 3)]),
    "nn.functional.multi_margin_loss_none": (lambda a: F.multi_margin_loss(
        a, torch.tensor([1, 0]), margin=3.0, reduction="none"), [(2, 3)]),
    "nn.functional.multilabel_margin_loss": (lambda a: F.multilabel_margin_loss(
        a, torch.tensor([[0, 2, -1], [1, -1, 0]]), reduction="none"), [(2, 3)]),
    "triplet_margin_loss_swap": (lambda a, b, c: F.triplet_margin_loss(
        a, b, c, margin=4.0, p=3, swap=True, reduction="none"), [(2, 3), (2, 3), (2, 3)]),
}
assert not OPS.keys() & _H29OPS2.keys(), "a row of h29ops2's is named twice"
OPS.update(_H29OPS2)


# ---- h29ops (issue 24): interpolate's modes (align_corners, scale factors), batch norm in
# training and evaluation with its affine parameters, instance norm, prelu's scalar weight
def _interpolate(a: Any, **kwargs: Any) -> Any:
    return F.interpolate(a, **kwargs) ** 2


_H29OPS: dict[str, Row] = {
    **{f"interpolate_{name}": (functools.partial(_interpolate, **kwargs), [shape])
       for name, shape, kwargs in (
           ("linear_aligned", (1, 2, 4), {"size": 7, "mode": "linear", "align_corners": True}),
           ("bilinear_scale", (1, 1, 3, 4), {"scale_factor": 1.7, "mode": "bilinear"}),
           ("bicubic", (1, 1, 3, 4), {"size": (5, 2), "mode": "bicubic"}),
           ("bicubic_aligned", (1, 1, 3, 3), {"size": 5, "mode": "bicubic",
                                              "align_corners": True}),
           ("trilinear", (1, 1, 2, 3, 2), {"size": (3, 2, 4), "mode": "trilinear"}),
           ("nearest_exact", (1, 2, 5), {"scale_factor": 0.6, "mode": "nearest-exact"}),
           ("nearest_3d", (1, 1, 2, 3, 2), {"size": (3, 2, 4)}),
           ("area", (1, 2, 5, 4), {"size": (3, 2), "mode": "area"}))},
    "native_batch_norm_output": (lambda a, w, b: torch.native_batch_norm(
        a, w, b, None, None, True, 0.1, 1e-5)[0], [(3, 2, 2), (2,), (2,)]),
    "batch_norm_running_stats": (lambda a, w, b: F.batch_norm(
        a, torch.tensor([0.5, -1.0], dtype=a.dtype), torch.tensor([2.0, 0.5], dtype=a.dtype),
        w, b) ** 2, [(3, 2), (2,), (2,)]),
    "batch_norm_training_affine": (lambda a, w, b: F.batch_norm(
        a, None, None, w, b, training=True), [(3, 2, 2), (2,), (2,)]),
    "instance_norm_affine": (lambda a, w, b: F.instance_norm(a, weight=w, bias=b),
                             [(2, 2, 3), (2,), (2,)]),
    "prelu_scalar_weight": (lambda a, w: F.prelu(a, w), [(2, 3), (1,)]),
    "bilinear_no_batch": (lambda a, b, w: F.bilinear(a, b, w), [(3,), (2,), (4, 3, 2)]),
}
assert not OPS.keys() & _H29OPS.keys(), "a row of h29ops's is named twice"
OPS.update(_H29OPS)


# ---- h29conv (issue 24): convolution's geometry (stride, padding, dilation, groups, 'same'
# with an even kernel, unbatched, transposed with output_padding), max pooling's (padding,
# dilation, ceil_mode, indices), max unpooling (its indices from a non-overlapping max pool,
# so each input lands once)
def _unpool(k: int) -> Callable[..., Any]:
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[k - 1]
    unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[k - 1]

    def row(a: Any) -> Any:
        _, indices = pool(a.detach(), 2, return_indices=True)
        return unpool(a[(..., *[slice(None, None, 2)] * k)] * 1, indices, 2)
    return row


_H29CONV: dict[str, Row] = {
    "conv2d_strided_grouped": (lambda x, w, b: F.conv2d(x, w, b, (2, 1), 1, (1, 2), 2),
                               [(2, 4, 5, 4), (4, 2, 3, 2), (4,)]),
    "conv1d_same_even": (lambda x, w: F.conv1d(x, w, padding="same", dilation=3),
                         [(2, 6), (3, 2, 2)]),
    "conv3d_valid_unbatched": (lambda x, w: F.conv3d(x, w, padding="valid"),
                               [(2, 3, 3, 2), (2, 2, 2, 2, 1)]),
    "conv_transpose2d_geometry": (lambda x, w, b: F.conv_transpose2d(
        x, w, b, (2, 3), 1, (1, 2), 2, (2, 1)), [(1, 4, 3, 2), (4, 1, 2, 2), (2,)]),
    "conv_transpose1d_unbatched": (lambda x, w: F.conv_transpose1d(x, w, None, 2, 1, 1),
                                   [(2, 4), (2, 3, 3)]),
    "max_pool2d_geometry": (lambda a: F.max_pool2d(a, (3, 2), (2, 1), 1, (1, 2), True),
                            [(1, 2, 5, 6)]),
    "max_pool1d_indices": (lambda a: F.max_pool1d(a, 3, 2, 1, 2, True, True)[0], [(2, 7)]),
    "max_pool3d_padded": (lambda a: F.max_pool3d(a, 2, 1, 1), [(1, 2, 2, 3)]),
    **{f"nn.functional.max_unpool{k}d": (_unpool(k), [shape])
       for k, shape in ((1, (1, 2, 6)), (2, (1, 2, 4, 4)), (3, (1, 1, 2, 4, 2)))},
}
assert not OPS.keys() & _H29CONV.keys(), "a row of h29conv's is named twice"
OPS.update(_H29CONV)


# ---- h30ops (issue 24): aten's slice (its only API, torch.ops.aten.slice.Tensor: no
# registry sample), triplet_margin_with_distance_loss with a module distance, embedding_bag
# (the indices first: no registry sample)
_H30OPS: dict[str, Row] = {
    "slice": (lambda a: torch.ops.aten.slice.Tensor(a, 1, -3, 4, 2) ** 2, [(2, 5)]),
    # a module as the distance, swapped, unreduced (a margin wide enough that no hinge is
    # near for inputs in [-1, 1])
    "triplet_margin_with_distance_loss_swap": (lambda a, b, c: F.triplet_margin_with_distance_loss(
        a, b, c, distance_function=torch.nn.PairwiseDistance(p=3), margin=5.0, swap=True,
        reduction="none"), [(2, 3), (2, 3), (2, 3)]),
    # embedding_bag: the weight's grad per mode (a padding row, a bag with a repeated index,
    # 2-d indices), and the per-sample weights'; max mode's maxima are distinct for uniform
    # draws, so the central differences stay off its ties
    "nn.functional.embedding_bag": (lambda w, s: F.embedding_bag(
        torch.tensor([3, 1, 1, 0, 2, 3]), w, torch.tensor([0, 2, 5]), mode="sum",
        per_sample_weights=s, padding_idx=2) ** 2, [(4, 3), (6,)]),
    "embedding_bag_mean_2d": (lambda w: F.embedding_bag(
        torch.tensor([[0, 2, 2], [1, 3, 0]]), w, mode="mean") ** 2, [(4, 3)]),
    "embedding_bag_max_last_offset": (lambda w: F.embedding_bag(
        torch.tensor([0, 2, 3, 1, 3]), w, torch.tensor([0, 3, 5]), mode="max",
        include_last_offset=True) ** 2, [(4, 3)]),
}
assert not OPS.keys() & _H30OPS.keys(), "a row of h30ops's is named twice"
OPS.update(_H30OPS)
# Rows whose double backward the engine does not model (OpInfo supports none for them): a
# create_graph grad is a plain tensor, where torch's has a node (embedding_bag's weight grad
# EmbeddingBagBackwardBackward0, its per-sample weights' a NotImplemented node); what torch
# records there
DOUBLE_BACKWARD_NOT_MODELLED: dict[str, str] = {
    name: "EmbeddingBagBackwardBackward0 (weight), NotImplemented (per_sample_weights)"
    for name in ("nn.functional.embedding_bag", "embedding_bag_mean_2d",
                 "embedding_bag_max_last_offset")}


# ---- h31ops (issue 24): grid sampling's other modes (the registry's samples are bilinear
# with zeros padding): bicubic with border and reflection, bilinear reflection in 3-d,
# nearest (its grid grad is zeros); grids in [-1, 1] scaled past the borders
_H31OPS: dict[str, Row] = {
    "grid_sample_bicubic_border": (lambda x, g: F.grid_sample(
        x, g * 1.2, mode="bicubic", padding_mode="border", align_corners=True),
        [(1, 2, 3, 4), (1, 2, 3, 2)]),
    "grid_sample_bicubic_reflection": (lambda x, g: F.grid_sample(
        x, g * 1.3, mode="bicubic", padding_mode="reflection", align_corners=False),
        [(1, 1, 4, 3), (1, 3, 2, 2)]),
    "grid_sample_3d_reflection": (lambda x, g: F.grid_sample(
        x, g * 1.4, padding_mode="reflection", align_corners=False),
        [(1, 2, 2, 3, 2), (1, 2, 1, 2, 3)]),
    "grid_sample_nearest_border": (lambda x, g: F.grid_sample(
        x, g * 1.2, mode="nearest", padding_mode="border", align_corners=False) ** 2,
        [(1, 2, 3, 3), (1, 2, 2, 2)]),
}
assert not OPS.keys() & _H31OPS.keys(), "a row of h31ops's is named twice"
OPS.update(_H31OPS)


# ---- h33ops (issue 24): Householder products. The backward assumes every reflector
# H(tau_i) = I - tau_i v_i v_i^T invertible (FunctionsManual.cpp), 1 - tau_i ||v_i||^2 != 0:
# tau scaled by 0.2 keeps tau_i ||v_i||^2 within 0.8 for entries in [-1, 1]. ormqr's sides
# and adjoints: left ^ transpose takes householder_product_backward's order, the others its
# flipped one.
_H33OPS: dict[str, Row] = {
    "linalg.householder_product": (lambda a, t: torch.linalg.householder_product(
        a, t * 0.2), [(4, 3), (2,)]),
    "ormqr": (lambda a, t, c: torch.ormqr(a, t * 0.2, c), [(4, 3), (3,), (4, 2)]),
    "ormqr_left_transpose": (lambda a, t, c: torch.ormqr(
        a, t * 0.2, c, transpose=True), [(4, 3), (3,), (4, 2)]),
    "ormqr_right_transpose": (lambda a, t, c: torch.ormqr(
        a, t * 0.2, c, left=False, transpose=True), [(4, 2), (2,), (3, 4)]),
    # scaled_dot_product_attention where torch takes the fused CPU kernel (4-d, no mask, no
    # dropout): causal (top-left aligned), and with an explicit scale
    "nn.functional.scaled_dot_product_attention": (lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True), [(1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)]),
    "sdpa_fused_scaled": (lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, scale=0.7), [(2, 1, 4, 3), (2, 1, 2, 3), (2, 1, 2, 3)]),
    # where torch runs the math composite (3-d inputs are not the fused kernel's): its
    # _safe_softmax node, causal and not
    "sdpa_math": (lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v), [(2, 3, 4), (2, 5, 4), (2, 5, 4)]),
    "sdpa_math_causal": (lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True, scale=0.7), [(2, 4, 3), (2, 4, 3), (2, 4, 3)]),
}
assert not OPS.keys() & _H33OPS.keys(), "a row of h33ops's is named twice"
OPS.update(_H33OPS)
