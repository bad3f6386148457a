"""jacobian(strategy="forward-mode", vectorize=True): torch's _jacfwd with one call of the
function, as torch's vmap gives it, without a vmap.

What torch does (torch/autograd/functional.py, _jacfwd): it vmaps, over the standard basis
of all inputs' elements, a jvp that enters a dual level, makes each input dual with its
basis tangent and calls the function once. Inside, the function sees plain tensors (dual
views of the inputs: not requiring grad unless the input does, leaves, `_is_view()`); the
tangents are batched, one basis column per batch entry, and invisible. The output tangents,
batched, are split per input and transposed into output.shape + input.shape.

What this module does: the function is called once, under one dual level, with each input
made dual with a *seed* tangent, a leaf that requires grad (ones: any value would do, the
map is linear). Every tangent formula the call runs is an engine op, so the output tangents
come out as the seeds' images under the jvp map, with the reverse-mode graph of that map
recorded (the jvp formulas of every op the function ran, and for a hessian's
forward-over-reverse those of the inner backward's ops). That graph is then replayed
backward, once per output element (functional.jacobian's reverse-mode vectorized path,
given the output tangents as outputs and the seeds as inputs): d(tangent_out)/d(seed) is
the jacobian, row by row, where torch computes it column by column; the same values up to
rounding. Before returning, the rows are checked against the tangents of the call itself
(tangent_out == J @ seed): a tangent formula that leaves the graph (a value computed
outside engine ops) would give wrong rows, and fails loudly (AssertionError) here instead.

What it does not model:
- a general vmap (torch.func.vmap, torch._vmap_internals._vmap): only this use of it;
- the tangents' visibility inside the call: torch refuses unpack_dual (and so repr) of a
  dual input there ("Batching rule not implemented for aten::_unpack_dual ..."), where this
  engine shows the seed's tangent;
- the graph of the results: torch's results require grad when the batched tangent
  computation did (a hessian's, or an input that requires grad), with vmap's internal
  nodes under them; these are detached leaves;
- saved-tensor hooks and anomaly mode see the seeds' graph being built (torch builds none);
- an in-place change, inside the function, of a tensor that a tangent formula saved makes
  the replay fail (the saved tensor's version check), where torch's batched formulas have
  already run.
Where the recording cannot work (grad mode off at the call, complex inputs, whose jvp
map is only R-linear while reverse mode conjugates), `jacobian_forward` calls the function
once per basis column with plain dual tensors: torch's values, not torch's calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import forward_ad, messages, views_multi_output
from .autograd_functional_utils import _as_tuple, _autograd_grad, _tuple_postprocess
from .factories import ones, zeros, zeros_like
from .grad_mode import is_grad_enabled
from .ops import joining
from .tensor import Tensor

__all__ = ["jacobian_forward"]

Jacobian = list[list[Tensor]]  # per output, per input: output.shape + input.shape


def jacobian_forward(func: Callable[..., Any], inputs: Any, strict: bool,
                     vectorize: bool) -> Any:
    """torch's _jacfwd: its checks in its order, then one recorded call (or, where it cannot
    record, one call per basis column)."""
    if strict:
        raise RuntimeError(messages.FORWARD_MODE_STRICT)
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(messages.FORWARD_MODE_NOT_VECTORIZED)
    if is_grad_enabled() and not any(inp.dtype.is_complex for inp in inputs):
        is_outputs_tuple, jac = _recorded(func, inputs)
    else:
        is_outputs_tuple, jac = _per_column(func, inputs)
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _call_dual(func: Callable[..., Any], inputs: tuple[Tensor, ...],
               tangents: list[Tensor]) -> tuple[bool, list[Tensor], list[Tensor | None]]:
    """Inside an entered dual level: the function called on the dual inputs; whether it
    returned a tuple, its outputs' primals and tangents (None: no tangent)."""
    duals = tuple(forward_ad.make_dual(inp, t) for inp, t in zip(inputs, tangents, strict=True))
    # torch names no function here: its text says "given to None"
    is_outputs_tuple, outs = _as_tuple(func(*duals), "outputs", "None")
    unpacked = [forward_ad.unpack_dual(o) for o in outs]
    return is_outputs_tuple, [u.primal for u in unpacked], [u.tangent for u in unpacked]


def _recorded(func: Callable[..., Any], inputs: tuple[Tensor, ...]) -> tuple[bool, Jacobian]:
    """One call with seed tangents, then the jvp map's graph replayed backward per output
    element (see the module's docstring)."""
    seeds = []
    for inp in inputs:
        seed = ones(*inp.shape, dtype=inp.dtype, device=inp.device)
        # an integer input gets a plain seed: make_dual refuses it with torch's ValueError
        seeds.append(seed.requires_grad_() if inp.dtype.is_differentiable else seed)
    with forward_ad.dual_level():
        is_outputs_tuple, primals, tangents = _call_dual(func, inputs, seeds)
    # after the level: the replay's backward formulas must not compute tangents of their own
    outs = tuple(zeros_like(p) if t is None else t for p, t in zip(primals, tangents, strict=True))
    rows = _reverse_jacobian(seeds, outs)
    _check_linear(rows, seeds, outs)
    return is_outputs_tuple, rows


def _reverse_jacobian(seeds: list[Tensor], outs: tuple[Tensor, ...]) -> Jacobian:
    """d(out)/d(seed) for every output and seed, one batched backward (the engine runs its
    rows one by one) over the standard basis of all outputs' elements; zeros where an
    output does not depend on a seed."""
    numels = [out.numel() for out in outs]
    eye = np.eye(sum(numels))
    bounds = np.cumsum((0, *numels))
    grad_outputs = tuple(Tensor(eye[:, lo:hi].astype(out.dtype.np), out.dtype, out.device)
                         for out, lo, hi in zip(outs, bounds[:-1], bounds[1:], strict=True))
    flat = tuple(out.reshape(-1) for out in outs)
    grads = _autograd_grad(flat, seeds, grad_outputs, is_grads_batched=True)
    per_seed = [views_multi_output.split(
        zeros(sum(numels), *seed.shape, dtype=seed.dtype, device=seed.device) if g is None
        else g.detach(), numels, 0) for g, seed in zip(grads, seeds, strict=True)]
    return [[per_seed[j][i].reshape(*out.shape, *seed.shape) for j, seed in enumerate(seeds)]
            for i, out in enumerate(outs)]


def _check_linear(rows: Jacobian, seeds: list[Tensor], outs: tuple[Tensor, ...]) -> None:
    """The replayed rows applied to the seeds give the call's own output tangents (where
    finite); else a tangent formula was computed outside the graph and the rows are wrong:
    an AssertionError, the engine's own limit."""
    for out, row in zip(outs, rows, strict=True):
        applied = sum((jac._data.reshape(out.numel(), -1).astype(np.float64)
                       @ seed._data.reshape(-1).astype(np.float64)
                       for jac, seed in zip(row, seeds, strict=True)),
                      np.zeros(out.numel()))
        got = out._data.reshape(-1).astype(np.float64)
        finite = np.isfinite(got) & np.isfinite(applied)
        tol = 1e-3 if out.dtype.itemsize <= 4 else 1e-7
        if not np.allclose(applied[finite], got[finite], rtol=tol, atol=tol):
            # the engine's own limit, not a text of torch's (which has no replay)
            raise AssertionError(
                "reference_engine: jacobian(strategy=\"forward-mode\", vectorize=True) "
                "replayed the tangents' graph backward and its rows do not give the call's "
                "own output tangents: a tangent formula of an op the function ran is "
                "computed outside the engine's ops")


def _per_column(func: Callable[..., Any], inputs: tuple[Tensor, ...]) -> tuple[bool, Jacobian]:
    """One call per basis column, each under its own dual level, the columns stacked and
    transposed (torch's values; torch calls the function once)."""
    numels = [inp.numel() for inp in inputs]
    columns: list[list[Tensor]] = []  # per basis column, each output's tangent
    is_outputs_tuple, primals = False, list[Tensor]()
    for k in range(sum(numels)):
        tangents, offset = [], 0
        for inp, n in zip(inputs, numels, strict=True):
            column = zeros(n, dtype=inp.dtype, device=inp.device)
            if offset <= k < offset + n:
                column[k - offset] = 1
            tangents.append(column.view_as(inp))
            offset += n
        with forward_ad.dual_level():
            is_outputs_tuple, primals, outs = _call_dual(func, inputs, tangents)
            columns.append([zeros_like(p) if t is None else t
                            for p, t in zip(primals, outs, strict=True)])
    jacobian = []
    for i, primal in enumerate(primals):
        stacked = joining.stack([c[i] for c in columns], 0)
        jacobian.append([jac.permute(*range(1, jac.dim()), 0).reshape(*primal.shape, *inp.shape)
                         for jac, inp in zip(views_multi_output.split(stacked, numels, 0), inputs,
                                             strict=True)])
    return is_outputs_tuple, jacobian
