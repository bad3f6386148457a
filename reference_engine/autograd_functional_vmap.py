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
forward-over-reverse those of the inner backward's ops; the formulas run with grad mode on
while recording, as an in-place op computes its tangent under no_grad). That graph is then
replayed: backward once with dummy grad_outputs `u` (create_graph), and that backward
backward again once per basis column (functional.jvp's double-backward trick, batched as
functional.jacobian's reverse-mode vectorized path): J e_k, column by column as torch's
vmap gives them, with the forward formulas' own products (so exact zeros get torch's
signs), split per input and transposed as _jacfwd does, in the outputs' dtypes (a complex
output's real and imaginary parts replayed apart). Before returning, the jacobian is
checked against the tangents of the call itself (tangent_out == J @ seed): a tangent
computed outside the graph (a custom Function's jvp not made of engine ops) makes it wrong,
and then the columns are computed as the engine did before (below), calling the function
again once per column.

What it does not model:
- a general vmap (torch.func.vmap, torch._vmap_internals._vmap): only this use of it;
- the tangents inside the call, but for what follows: torch's unpack_dual works there and
  gives vmap's BatchedTensor (the input's shape and dtype, a leaf without requires_grad,
  the same object each time), whose values cannot be read; the recording's tangents are
  the seeds' images (they require grad: the replay needs their graph). Modelled: unpack_dual
  there gives the same detached alias of the tangent each time (forward_ad._batched); the
  repr (and str, print) of a dual tensor, or of such a tangent, raises torch's "Batching
  rule not implemented for aten::_unpack_dual; ..." (_batched_tangent_shown; in the
  per-column fallback below too: the column's own tangent, once unpack_dual gave it out,
  counts as batched until the call returns). `.item()` (and float(), int()) and `bool()`
  of such a tangent, or of a tensor computed from it, raise "Batching rule not implemented
  for aten::item / aten::is_nonzero. We could not generate a fallback.", and `.tolist()`
  "Cannot access data pointer of Tensor that doesn't have storage", as torch's, and its
  repr raises as a dual tensor's does, and `.numpy()` aten::detach's batching error
  (forward_ad.is_batched; in both paths), its `.detach()` aten::detach's, its `.detach_()`
  a view's in-place detach error, and its `.data` is batched too. Not modelled: an in-place change
  of such a tangent changes torch's jvp, not the recording here (the check below then
  falls back to one call per column, or the replay meets the version check);
- the graph of the results: torch's results require grad when the batched tangent
  computation did (a hessian's, or an input that requires grad), with vmap's internal
  nodes under them; these are detached leaves;
- saved-tensor hooks and anomaly mode see the seeds' graph being built (torch builds none);
- an in-place change, inside the function, of a primal that a tangent formula saved would
  make the replay read the new value (or fail the version check), where torch's batched
  formulas have already run: so while recording, the formulas' saves of tensors that do
  not require grad are copies (forward_ad.record_tangent_graph); a saved tensor that requires
  grad (a tangent, or a hessian's primal) is kept as usual, with its version check.
Where the recording cannot work (grad mode off at the call; complex inputs, whose jvp map
is only R-linear while reverse mode conjugates) or its check fails, the function is called
once per basis column with plain dual tensors: torch's values, not torch's calls.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import forward_ad, messages, tensor_metadata, views_multi_output
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
    # the tangents as recorded (unpack_dual gives the user of a recorded call detached aliases)
    return (is_outputs_tuple, [forward_ad.unpack_dual(o).primal for o in outs],
            [forward_ad.fw_grad(o) for o in outs])


def _recorded(func: Callable[..., Any], inputs: tuple[Tensor, ...]) -> tuple[bool, Jacobian]:
    """One call with seed tangents, then the jvp map's graph replayed backward per output
    element (see the module's docstring)."""
    seeds = []
    for inp in inputs:
        seed = ones(*inp.shape, dtype=inp.dtype, device=inp.device)
        # an integer input gets a plain seed: make_dual refuses it with torch's ValueError
        seeds.append(seed.requires_grad_() if inp.dtype.is_differentiable else seed)
    forward_ad.record_tangent_graph[0] = True
    try:
        with forward_ad.dual_level(), _batched_repr():
            is_outputs_tuple, primals, tangents = _call_dual(func, inputs, seeds)
    finally:
        forward_ad.record_tangent_graph[0] = False
        forward_ad.batched_tangents.clear()
    # after the level: the replay's backward formulas must not compute tangents of their own
    outs = tuple(zeros_like(p) if t is None else t for p, t in zip(primals, tangents, strict=True))
    # the seeds are real: a complex tangent's real and imaginary parts are two real maps
    parts = [part for out in outs
             for part in ((out.real, out.imag) if out.dtype.is_complex else (out,))]
    parts_jac = iter(_columns(seeds, tuple(parts)))
    jac = [_out_blocks(out, parts_jac) for out in outs]
    if not _gives_own_tangents(jac, seeds, outs):
        # a tangent computed outside the graph (a custom Function's jvp not made of engine
        # ops): the jacobian is wrong, so the columns are computed as before, calling the
        # function again once per column
        return _per_column(func, inputs)
    return is_outputs_tuple, jac


@contextlib.contextmanager
def _batched_repr() -> Iterator[None]:
    """While the function runs: tensor_metadata's tangent reader is _batched_tangent_shown,
    and the tangents unpack_dual gives out are batched (forward_ad.is_batched: their data
    cannot be read), as are the tensors computed from them; after it, none is."""
    tensor_metadata.TANGENT_READER.insert(0, _batched_tangent_shown)
    forward_ad.tangents_batched[0] = True
    try:
        yield
    finally:
        tensor_metadata.TANGENT_READER.remove(_batched_tangent_shown)
        forward_ad.tangents_batched[0] = False
        forward_ad.batched_values.clear()


def _batched_tangent_shown(t: Tensor) -> Tensor | None:
    """The repr of a tensor during the recorded call (tensor_metadata's tangent reader, first
    while recording): torch/_tensor_str.py unpacks a dual tensor to show its tangent, and
    there the tangent is vmap's BatchedTensor, for which aten::_unpack_dual (a view op) has
    no batching rule. So the repr of a dual tensor, or of a tangent unpack_dual gave out or
    a tensor computed from one (batched too), raises torch's error; other tensors print as
    usual."""
    if forward_ad.fw_grad(t) is not None or forward_ad.is_batched(t):
        raise RuntimeError(messages.VMAP_UNPACK_DUAL)
    return None


def _out_blocks(out: Tensor, parts_jac: Any) -> list[Tensor]:
    """One output's blocks (per input) from the replayed parts, in the output's dtype (torch's
    forward-mode jacobian has the tangents' dtype, the reverse replay the seeds')."""
    real = next(parts_jac)
    if not out.dtype.is_complex:
        return [r if r.dtype is out.dtype else r.to(out.dtype) for r in real]
    imag = next(parts_jac)
    return [Tensor((r._data + 1j * i._data).astype(out.dtype.np), out.dtype, out.device)
            for r, i in zip(real, imag, strict=True)]


def _columns(seeds: list[Tensor], outs: tuple[Tensor, ...]) -> Jacobian:
    """d(out)/d(seed) for every output and seed, column by column as torch's jvp gives it:
    the graph replayed backward once with dummy grad_outputs `u` (create_graph: J^T u, a
    graph in u), then that replayed backward per seed element (the double-backward trick,
    functional.jvp's): J e_k, whose products are the forward formulas' own, so exact zeros
    get the signs torch's do. The columns are split per seed and transposed as torch's
    _jacfwd does; zeros where an output does not depend on a seed."""
    us = [zeros_like(out, requires_grad=True) for out in outs]
    vjps = _autograd_grad(outs, seeds, us, create_graph=True)
    numels = [seed.numel() for seed in seeds]
    eye = np.eye(sum(numels))
    bounds = np.cumsum((0, *numels))
    basis = tuple(Tensor(eye[:, lo:hi].astype(seed.dtype.np), seed.dtype, seed.device)
                  for seed, lo, hi in zip(seeds, bounds[:-1], bounds[1:], strict=True))
    flat = tuple(None if v is None else v.reshape(-1) for v in vjps)
    cols = _autograd_grad(flat, us, basis, is_grads_batched=True)
    jacobian = []
    for out, col in zip(outs, cols, strict=True):
        full = zeros(sum(numels), *out.shape, dtype=out.dtype, device=out.device) if col is None \
            else col.detach()
        jacobian.append([jac.permute(*range(1, jac.dim()), 0).reshape(*out.shape, *seed.shape)
                         for jac, seed in zip(views_multi_output.split(full, numels, 0), seeds,
                                              strict=True)])
    return jacobian


def _gives_own_tangents(jac: Jacobian, seeds: list[Tensor], outs: tuple[Tensor, ...]) -> bool:
    """Whether the replayed jacobian applied to the seeds gives the call's own output
    tangents (where finite): if not, a tangent was computed outside the graph."""
    for out, row in zip(outs, jac, strict=True):
        applied = sum((jac._data.reshape(out.numel(), -1).astype(np.complex128)
                       @ seed._data.reshape(-1).astype(np.complex128)
                       for jac, seed in zip(row, seeds, strict=True)),
                      np.zeros(out.numel(), dtype=np.complex128))
        got = out._data.reshape(-1).astype(np.complex128)
        finite = np.isfinite(got) & np.isfinite(applied)
        # float32 and complex64 (its parts float32) against float64's and complex128's
        tol = 1e-3 if out.dtype.itemsize <= (8 if out.dtype.is_complex else 4) else 1e-7
        if not np.allclose(applied[finite], got[finite], rtol=tol, atol=tol):
            return False
    return True


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
        with forward_ad.dual_level(), _batched_repr():
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
