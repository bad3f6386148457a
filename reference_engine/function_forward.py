"""A custom Function's forward mode: its jvp run for the outputs of apply() when an input
has a tangent, and torch's checks of the tangents jvp returns
(torch/csrc/autograd/custom_function.cpp, _process_forward_mode_AD).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import forward_ad, messages
from .ops.common import new
from .tensor import Tensor

if TYPE_CHECKING:
    from .function import BackwardCFunction, Function


def forward_mode(cls: type[Function], ctx: BackwardCFunction, args: tuple[Any, ...],
                 raw: tuple[Any, ...], outs: tuple[Any, ...]) -> None:
    """custom_function.cpp's _process_forward_mode_AD: when an input has a tangent, jvp gets
    one tangent per input (zeros for a floating tensor without one, None for anything else,
    an integer tensor included) and returns one per output, kept as it is, after torch's
    checks of what it may return for a non-differentiable, an in-place or a view output
    (`raw`: the outputs as forward returned them; `outs`: as apply returns them)."""
    tangents = [forward_ad.fw_grad(a) if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return
    tangents = [new(np.zeros(a.shape), a.dtype, a.device) if t is None and isinstance(
        a, Tensor) and a.dtype.is_differentiable else t for a, t in zip(args, tangents,
                                                                         strict=True)]
    ctx._saved_for_forward = ctx._saved_for_forward or ()   # jvp sees only these
    versions = [None if t is None else t._version for t in tangents]
    with forward_ad.suspended():   # jvp's primals show no tangent
        result = cls.jvp(ctx, *tangents)
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(outs):
        raise RuntimeError(messages.fwad_jvp_count(len(outs), len(result)))
    inputs = [(a, t, v) for a, t, v in zip(args, tangents, versions, strict=True)
              if isinstance(a, Tensor)]
    for i, (var, out, tangent) in enumerate(zip(raw, outs, result, strict=True)):
        if tangent is None:
            continue
        if not isinstance(var, Tensor) or not var.dtype.is_differentiable or any(
                var is t for t in ctx._non_differentiable):
            raise RuntimeError(messages.fwad_jvp_non_differentiable(i))
        _check_jvp_output(ctx, var, tangent, inputs)
        if tuple(tangent.shape) != tuple(out.shape):
            raise RuntimeError(messages.fwad_size_mismatch(list(out.shape), list(tangent.shape)))
        forward_ad.set_fw_grad(out, tangent)


def _check_jvp_output(ctx: BackwardCFunction, var: Tensor, tangent: Tensor,
                      inputs: list[tuple[Tensor, Tensor | None, int | None]]) -> None:
    """What the jvp of an output that is an input modified in place, an input as-is, or a
    view of an input must return: that input's tangent itself, modified in place (its
    version moved), or a view of it (of its base when the input is itself a view)."""
    if any(var is t for t in ctx._dirty):
        given, version = next(((t, v) for a, t, v in inputs if a is var), (None, None))
        if tangent is not given or given._version == version:
            raise RuntimeError(messages.FWAD_JVP_NOT_INPLACE)
        return
    # views in forward mode's sense (make_dual's alias is none)
    root = var._fw_base if var._fw_base is not None else var
    source = next(((a, t) for a, t, _ in inputs if a is var or (
        a._fw_base if a._fw_base is not None else a) is root), None)
    if source is None or source[1] is None:
        return
    if tangent._base is None:
        raise RuntimeError(messages.FWAD_JVP_NOT_A_VIEW)
    given = source[1]
    if source[0]._fw_base is None and tangent._base is not given:
        raise RuntimeError(messages.FWAD_JVP_NOT_A_VIEW_OF_INPUT)
    if source[0]._fw_base is not None and tangent._base is not given._base:
        raise RuntimeError(messages.FWAD_JVP_NOT_A_VIEW_OF_BASE)
