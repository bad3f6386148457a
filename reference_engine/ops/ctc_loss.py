"""nn.functional.ctc_loss: the connectionist temporal classification loss, as ATen computes it
on CPU (LossCTC.cpp).

F.ctc_loss is torch.ctc_loss, a composite: ATen's _ctc_loss (one CtcLossBackward0 node, whose
outputs are the per-sample negative log likelihood and the log_alpha table of the forward
recursion), zeroed where infinite under zero_infinity (WhereBackward0), then the reduction:
'mean' divides by the target lengths clamped to 1 and averages (DivBackward0, MeanBackward0),
'sum' sums. The backward kernel (ctc_loss_backward_cpu_template) runs the beta recursion and
returns exp(log_probs) - exp(log(sum of alpha * beta) + nll - log_probs), times the grad: the
gradient of the loss of log_softmax's input seen through log_softmax's backward, not the
derivative in log_probs itself (pytorch issue 52241: OpInfo checks it through log_softmax).
_ctc_loss_backward has no derivatives.yaml entry: torch records a NotImplemented node for a
create_graph grad, whose backward raises; the op has no forward-mode formula.

The alpha recursion runs each time step for every sample at once, the beta recursion per
sample as the kernel does, both vectorized over the states s of the extended target (blanks
between and around the labels); each sum of exponentials is the kernel's, in its order,
shifted by the largest term (0 when all are -inf).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpNode, OpSpec, record
from ..saved import SavedVariable
from ..tensor import Tensor
from . import moments
from .basic import comparisons, elementwise, reductions, to_copy, views
from .common import new, no_jvp
from .losses import REDUCTIONS

_NEG_INF = -np.inf


def _not_implemented_node(name: str, inputs: tuple[str, ...]) -> OpSpec:
    """The node torch's fallback records for an op without a derivatives.yaml entry: an edge
    for each tensor argument that requires grad, in argument order
    (autograd_not_implemented_fallback.cpp)."""
    def backward(c: Any, g: Tensor) -> list[Tensor | None]:
        raise RuntimeError(messages.no_derivative_for(name))
    return OpSpec("NotImplemented", inputs, {}, backward, jvp=no_jvp(name))


def _record_not_implemented(out: Tensor, arguments: dict[str, Tensor]) -> Tensor:
    """_ctc_loss_backward's result under its NotImplemented node: its tensor arguments
    grad, log_probs and neg_log_likelihood (log_alpha never requires grad: _ctc_loss's
    output_differentiability), those that require grad."""
    present = {k: t for k, t in arguments.items() if t.requires_grad}
    spec = _not_implemented_node("aten::_ctc_loss_backward", tuple(present))
    return record(spec, out, list(present.values()))


def _lengths(lengths: Any, name: str) -> list[int]:
    """An int list, or a tensor of integers (torch.ctc_loss's Tensor overload reads it on
    the CPU as int64)."""
    if isinstance(lengths, Tensor):
        if lengths.dtype.category != 1:
            raise RuntimeError(messages.ctc_lengths_integral(name))
        return [int(v) for v in lengths._data.reshape(-1)]
    return [int(v) for v in lengths]


def _extended(targets: np.ndarray, offset: int, length: int, blank: int) -> np.ndarray:
    """The kernel's target prime: blank, label 1, blank, label 2, ..., blank."""
    primes = np.full(2 * length + 1, blank, dtype=np.int64)
    primes[1::2] = targets[offset:offset + length]
    return primes


def _exp(a: Any) -> Any:
    """exp of float32 values correctly rounded, as glibc's expf (which the kernel's std::exp
    calls) is nearly always: NumPy's vectorized float32 exp is off by an ULP at times, which
    the closing formula's exp(res + nll - lp) turns into 1e-5 where nll is large."""
    a = np.asarray(a)
    return np.exp(a.astype(np.float64)).astype(a.dtype)


def _log(a: Any) -> Any:
    a = np.asarray(a)
    return np.log(a.astype(np.float64)).astype(a.dtype)


def _logsumexp3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """log(exp(a-m) + exp(b-m) + exp(c-m)) + m with m the largest (0 if it is -inf)."""
    m = np.maximum(np.maximum(a, b), c)
    m = np.where(m == _NEG_INF, m.dtype.type(0), m)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return _log(_exp(a - m) + _exp(b - m) + _exp(c - m)) + m


def _shift(a: np.ndarray, k: int) -> np.ndarray:
    """a moved k places along its last axis (right for k > 0, left for k < 0), -inf where
    nothing moved in."""
    out = np.full_like(a, _NEG_INF)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out


def _alphas(lp: np.ndarray, primes: list[np.ndarray], lengths: list[int],
            alpha: np.ndarray) -> None:
    """Fill alpha (N x T x W, its first time step already -inf) as the kernel does per
    sample: each time step for every sample at once (the same elementwise operations), a
    sample's states s < 2 * target_length + 1 and steps t < its input length only."""
    batch, width = alpha.shape[0], alpha.shape[2]
    padded = np.zeros((batch, width), dtype=np.int64)
    valid = np.zeros((batch, width), dtype=bool)
    for b, p in enumerate(primes):
        padded[b, :len(p)], valid[b, :len(p)] = p, True
    skip = np.zeros((batch, width), dtype=bool)
    skip[:, 2:] = padded[:, 2:] != padded[:, :-2]
    rows = np.arange(batch)
    for b, (p, il) in enumerate(zip(primes, lengths, strict=True)):
        if il > 0:
            alpha[b, 0, 0] = lp[0, b, p[0]]
            if len(p) > 1:
                alpha[b, 0, 1] = lp[0, b, p[1]]
    steps = np.array(lengths)
    for t in range(1, alpha.shape[1]):
        prev = alpha[:, t - 1]
        la3 = np.where(skip, _shift(prev, 2), _NEG_INF)
        step = _logsumexp3(prev, _shift(prev, 1), la3) + lp[t][rows[:, None], padded]
        write = valid & (t < steps)[:, None]
        alpha[:, t] = np.where(write, step, alpha[:, t])


def _likelihood(alpha: np.ndarray, primes: np.ndarray, il: int, dt: Any) -> Any:
    """One sample's log likelihood from its filled alpha (T x W)."""
    tl = (len(primes) - 1) // 2
    if il == 0:
        return dt.type(0 if tl == 0 else _NEG_INF)
    if tl == 0:
        return alpha[il - 1, 0]
    l1, l2 = alpha[il - 1, 2 * tl], alpha[il - 1, 2 * tl - 1]
    m = max(l1, l2)
    m = dt.type(0) if m == _NEG_INF else m
    with np.errstate(invalid="ignore", divide="ignore"):
        return _log(_exp(l1 - m) + _exp(l2 - m)) + m


def _backward(lp: np.ndarray, primes: np.ndarray, il: int, alpha: np.ndarray,
              nll: Any, gr: Any) -> np.ndarray:
    """One sample's grad (T x C): the beta recursion, the log-sums of alpha * beta per
    label, then the kernel's closing formula."""
    n, tl = len(primes), (len(primes) - 1) // 2
    grad = np.full(lp.shape, _NEG_INF, dtype=lp.dtype)
    beta = np.full((lp.shape[0], n), _NEG_INF, dtype=lp.dtype)
    if il > 0:
        beta[il - 1, 2 * tl] = lp[il - 1, primes[2 * tl]]
        grad[il - 1, primes[2 * tl]] = alpha[il - 1, 2 * tl] + beta[il - 1, 2 * tl]
        if tl > 0:
            c = primes[2 * tl - 1]
            beta[il - 1, 2 * tl - 1] = lp[il - 1, c]
            grad[il - 1, c] = alpha[il - 1, 2 * tl - 1] + beta[il - 1, 2 * tl - 1]
    skip = np.zeros(n, dtype=bool)
    skip[:-2] = primes[2:] != primes[:-2]
    for t in range(il - 2, -1, -1):
        nxt = beta[t + 1]
        lb3 = np.where(skip, _shift(nxt, -2), _NEG_INF)
        beta[t] = _logsumexp3(nxt, _shift(nxt, -1), lb3) + lp[t, primes]
    if il >= 2:
        # grad[t, prime[s]] "log+=" alpha[t, s] + beta[t, s], s descending (the kernel's
        # order), for every t < il - 1 at once
        ab = alpha[:il - 1, :n] + beta[:il - 1]
        for s in range(n - 1, -1, -1):
            acc, term = grad[:il - 1, primes[s]], ab[:, s]
            m = np.maximum(acc, term)
            with np.errstate(invalid="ignore", divide="ignore"):
                summed = _log(_exp(acc - m) + _exp(term - m)) + m
            grad[:il - 1, primes[s]] = np.where(acc == _NEG_INF, term, summed)
    with np.errstate(over="ignore", invalid="ignore"):
        out = (_exp(lp) - _exp(grad + nll - lp)) * gr
    out[il:] = 0
    return out


def _ctc_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    lp = c.log_probs._data
    nll, alpha = c.result._data, c.log_alpha._data
    grad = np.zeros(lp.shape, dtype=lp.dtype)
    gr = np.broadcast_to(g._data, nll.shape)
    for b, (primes, il) in enumerate(zip(c.primes, c.input_lengths, strict=True)):
        if c.zero_infinity and nll[b] == np.inf:
            continue
        grad[:, b] = _backward(lp[:, b], primes, il, alpha[b], nll[b], gr[b])
    out = new(grad, c.log_probs.dtype, c.log_probs.device)
    return [_record_not_implemented(out, {"grad": g, "log_probs": c.log_probs,
                                          "neg_log_likelihood": c.result})]


def _no_result_formula(c: Any) -> Tensor:
    """_ctc_loss has a derivatives.yaml entry without a result formula: torchgen's code
    refuses forward mode with its longer text."""
    raise NotImplementedError(messages.fwad_no_formula("_ctc_loss"))


# one edge, log_probs': targets and log_alpha are saved tensors with no edge (torch saves
# log_probs and targets before the forward, its two outputs after)
CTC_LOSS = OpSpec("CtcLossBackward0", ("log_probs",),
                  {"log_probs": ("log_probs", "result", "targets")}, _ctc_backward,
                  jvp=_no_result_formula)


def _ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: list[int],
              target_lengths: list[int], blank: int, zero_infinity: bool) -> Tensor:
    """ATen's _ctc_loss on CPU (ctc_loss_cpu_template): the negative log likelihoods, with
    log_alpha saved for the backward."""
    if log_probs.ndim != 3:
        raise RuntimeError(messages.ctc_dim(log_probs.ndim))
    T, batch, labels = log_probs.shape
    if not 0 <= blank < labels:
        raise RuntimeError(messages.CTC_BLANK)
    if len(input_lengths) != batch:
        raise RuntimeError(messages.CTC_INPUT_LENGTHS_SIZE)
    if len(target_lengths) != batch:
        raise RuntimeError(messages.CTC_TARGET_LENGTHS_SIZE)
    for v in target_lengths:
        if v < 0:
            raise RuntimeError(messages.ctc_length_at_least("target_lengths", v))
    tg = targets._data
    if tg.ndim == 1:   # concatenated
        offsets = np.concatenate([[0], np.cumsum(target_lengths)[:-1]]).astype(int)
        if tg.shape[0] != sum(target_lengths):
            raise RuntimeError(messages.ctc_targets_size(0, sum(target_lengths), tg.shape[0],
                                                         False))
        flat = tg
    else:   # batch x max_target_length
        if tg.shape[0] != batch:
            raise RuntimeError(messages.ctc_targets_size(0, batch, tg.shape[0], False))
        if tg.shape[1] < max(target_lengths, default=0):
            raise RuntimeError(messages.ctc_targets_size(1, max(target_lengths), tg.shape[1],
                                                         True))
        offsets = np.arange(batch) * tg.shape[1]
        flat = tg.reshape(-1)
    for v in input_lengths:
        if v < 0:
            raise RuntimeError(messages.ctc_length_at_least("input_lengths", v))
        if v > T:
            raise RuntimeError(messages.ctc_input_length_at_most(T, v))
    primes = [_extended(flat, int(o), tl, blank) for o, tl in zip(offsets, target_lengths,
                                                                    strict=True)]
    lp = log_probs._data
    width = 2 * max(target_lengths, default=0) + 1
    # torch's log_alpha is torch.empty: the kernel writes the first time step and each
    # sample's own states and steps; the rest is left as zeros here
    alpha = np.zeros((batch, T, width), dtype=lp.dtype)
    alpha[:, 0, :] = _NEG_INF
    _alphas(lp, primes, input_lengths, alpha)
    nll = np.array([-_likelihood(alpha[b], primes[b], input_lengths[b], lp.dtype)
                    for b in range(batch)], dtype=lp.dtype).reshape(batch)
    log_alpha = new(alpha, log_probs.dtype, log_probs.device)
    out = record(CTC_LOSS, new(nll, log_probs.dtype, log_probs.device), [log_probs],
                 targets=targets, primes=primes,
                 input_lengths=list(input_lengths), zero_infinity=zero_infinity)
    node = out.grad_fn
    if isinstance(node, OpNode) and "log_probs" in node.saved:
        # the kernel's second output, saved after the first (pack hooks see it last)
        node.saved["log_alpha"] = SavedVariable(log_alpha, is_output=False)
    return out


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Sequence[int] | Tensor,
             target_lengths: Sequence[int] | Tensor, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """F.ctc_loss: torch.ctc_loss (LossCTC.cpp ctc_loss_impl) with the reduction's enum."""
    if reduction not in REDUCTIONS:
        raise ValueError(messages.invalid_reduction(reduction))
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else views.unsqueeze(log_probs, 1)
    tg = targets if targets.dtype == dtypes.int64 else to_copy.to(targets, dtypes.int64)
    res = _ctc_loss(lp, tg, il, tl, blank, zero_infinity)
    if zero_infinity:
        zero = new(np.zeros((), res.dtype.np), res.dtype, res.device)
        res = comparisons.where(res == float("inf"), zero, res)
    if reduction == "mean":
        lengths = np.maximum(np.array(tl, dtype=res.dtype.np), 1)
        return moments.mean(elementwise.div(res, new(lengths, res.dtype, res.device)))
    if reduction == "sum":
        return reductions.sum(res)
    return res if batched else views.squeeze(res, 0)
