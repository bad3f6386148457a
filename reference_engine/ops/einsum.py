"""torch.einsum, as ATen computes it (Linear.cpp einsum and sumproduct_pair), step by step in
the engine's ops so its graph is torch's: each operand's repeated labels become diagonals
(moved back in place), missing labels unsqueezed and the dims permuted to "output labels,
then contracted ones"; operands are then contracted left to right (opt_einsum is not part of
the engine: torch without it, or with two operands, goes left to right too), each pair by
mul or by permute/reshape/bmm/view/permute, and what is left summed (one operand) or viewed
out (several). torch/functional.py's einsum takes the operands as varargs or one list."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import messages
from ..tensor import Tensor
from . import shape_views
from .basic import elementwise, reductions, views
from .linalg import bmm

_LETTERS = 26
_TOTAL = 2 * _LETTERS
_ELLIPSIS = _TOTAL


def _subscript(label: str) -> int:
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + _LETTERS


def _label(s: int) -> str:
    return chr(s + ord("A")) if s < _LETTERS else chr(s - _LETTERS + ord("a"))


def einsum(*args: Any) -> Tensor:
    """torch.einsum(equation, *operands) (or the operands as one list)."""
    if len(args) < 2:
        raise ValueError(messages.EINSUM_ARGS)
    if isinstance(args[0], Tensor):
        raise NotImplementedError(messages.EINSUM_SUBLIST_NOT_MODELLED)
    equation, operands = args[0], list(args[1:])
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])   # the old form: the operands as one list
    return _einsum(equation, operands)


def _parse_inputs(lhs: str, num_ops: int) -> list[list[int]]:
    op_labels: list[list[int]] = [[] for _ in range(num_ops)]
    ell_in_input = False
    curr = 0
    i = 0
    while i < len(lhs):
        label = lhs[i]
        if label == " ":
            pass
        elif label == ".":
            if ell_in_input:
                raise RuntimeError(messages.einsum_second_ellipsis(curr))
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(messages.einsum_bad_ellipsis(curr))
            i += 2
            op_labels[curr].append(_ELLIPSIS)
            ell_in_input = True
        elif label == ",":
            curr += 1
            if curr >= num_ops:
                raise RuntimeError(messages.EINSUM_FEWER_OPERANDS)
            ell_in_input = False
        else:
            if not (label.isascii() and label.isalpha()):
                raise RuntimeError(messages.einsum_invalid_subscript(i))
            op_labels[curr].append(_subscript(label))
        i += 1
    if curr != num_ops - 1:
        raise RuntimeError(messages.EINSUM_MORE_OPERANDS)
    return op_labels


def _einsum(equation: str, operands: Sequence[Tensor]) -> Tensor:
    num_ops = len(operands)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_inputs(lhs, num_ops)

    label_count = [0] * _TOTAL
    ell_num_dim = 0
    for i, (operand, labels) in enumerate(zip(operands, op_labels, strict=True)):
        nlabels = len(labels)
        has_ellipsis = False
        for s in labels:
            if s == _ELLIPSIS:
                nlabels -= 1
                has_ellipsis = True
                ell_num_dim = max(ell_num_dim, operand.ndim - nlabels)
            else:
                label_count[s] += 1
        if not (nlabels <= operand.ndim if has_ellipsis else nlabels == operand.ndim):
            raise RuntimeError(messages.einsum_subscript_count(nlabels, operand.ndim, i,
                                                               has_ellipsis))

    label_perm_index = [-1] * _TOTAL
    perm_index = 0
    ell_index = 0
    ell_in_output = False
    if arrow < 0:   # implicit output: the ellipsis, then the labels seen once
        perm_index = ell_num_dim
        ell_in_output = True
        for s in range(_TOTAL):
            if label_count[s] == 1:
                label_perm_index[s] = perm_index
                perm_index += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            label = rhs[i]
            if label == " ":
                pass
            elif label == ".":
                if ell_in_output:
                    raise RuntimeError(messages.EINSUM_OUTPUT_SECOND_ELLIPSIS)
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError(messages.EINSUM_OUTPUT_BAD_ELLIPSIS)
                i += 2
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
            else:
                if not (label.isascii() and label.isalpha()):
                    raise RuntimeError(messages.einsum_invalid_subscript(len(lhs) + 2 + i))
                s = _subscript(label)
                if not (label_count[s] > 0 and label_perm_index[s] == -1):
                    raise RuntimeError(messages.einsum_output_subscript(
                        label, repeated=label_perm_index[s] > -1))
                label_perm_index[s] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for s in range(_TOTAL):
        if label_count[s] > 0 and label_perm_index[s] == -1:
            label_perm_index[s] = perm_index
            perm_index += 1

    # align every operand to the permuted shape (diagonals for repeated labels)
    label_size = [1] * _TOTAL
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops: list[Tensor] = []
    for i, operand in enumerate(operands):
        op = operand
        permutation = [-1] * perm_index
        dim = 0
        for s in op_labels[i]:
            if s == _ELLIPSIS:
                ndim = operand.ndim - (len(op_labels[i]) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    if op.shape[dim] != 1:
                        if not (ell_sizes[j] == 1 or ell_sizes[j] == op.shape[dim]):
                            raise RuntimeError(messages.einsum_ellipsis_broadcast(
                                dim, i, op.shape[dim], ell_sizes[j]))
                        ell_sizes[j] = op.shape[dim]
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[label_perm_index[s]] == -1:
                if op.shape[dim] != 1:
                    if not (label_size[s] == 1 or label_size[s] == op.shape[dim]):
                        raise RuntimeError(messages.einsum_subscript_broadcast(
                            _label(s), op.shape[dim], i, label_size[s]))
                    label_size[s] = op.shape[dim]
                    dim_counts[label_perm_index[s]] += 1
                permutation[label_perm_index[s]] = dim
                dim += 1
            else:   # a repeated label: its diagonal, moved to the first one's place
                prev = permutation[label_perm_index[s]]
                if op.shape[dim] != op.shape[prev]:
                    raise RuntimeError(messages.einsum_repeated_sizes(
                        _label(s), i, op.shape[dim], op.shape[prev]))
                op = shape_views.movedim(views.diagonal(op, 0, prev, dim), -1, prev)
        for k, val in enumerate(permutation):
            if val == -1:
                op = views.unsqueeze(op, dim)
                permutation[k] = dim
                dim += 1
        ops.append(views.permute(op, permutation))

    # contract left to right
    while len(ops) > 1:
        a, b = ops[0], ops[1]
        del ops[:2]
        sum_dims: list[int] = []
        a_dims: list[int] = []
        b_dims: list[int] = []
        for d in range(out_num_dim, perm_index):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_dims.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_dims.append(d)
                    dim_counts[d] = 0
        if a_dims:
            a = reductions.sum(a, a_dims, True)
        if b_dims:
            b = reductions.sum(b, b_dims, True)
        ops.insert(0, _sumproduct_pair(a, b, sum_dims))

    if perm_index - out_num_dim > 0:
        if num_ops > 1:
            return views.view(ops[0], tuple(ops[0].shape[:out_num_dim]))
        return reductions.sum(ops[0], list(range(out_num_dim, perm_index)))
    return ops[0]


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list[int]) -> Tensor:
    """(left * right).sum(sum_dims, keepdim=True) by permute, reshape and bmm."""
    if not sum_dims:
        return elementwise.mul(left, right)
    ndim = left.ndim
    summed = set(sum_dims)
    lro: list[int] = []
    lo: list[int] = []
    ro: list[int] = []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in summed:
            if sl and sr:
                sum_size *= left.shape[i]
            elif sl:
                left = reductions.sum(left, i, True)
            elif sr:
                right = reductions.sum(right, i, True)
        elif sl and sr:
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo]
                + [1] * len(sum_dims) + [right.shape[d] for d in ro])
    lperm = lro + lo + sum_dims + ro
    rperm = lro + sum_dims + ro + lo
    operm = [-1] * len(out_size)
    for i, d in enumerate(lro + lo + sum_dims + ro):
        operm[d] = i
    lhs = views.reshape(views.permute(left, lperm), (lro_size, lo_size, sum_size))
    rhs = views.reshape(views.permute(right, rperm), (lro_size, sum_size, ro_size))
    result = views.view(bmm(lhs, rhs), tuple(out_size))
    return views.permute(result, operm)
