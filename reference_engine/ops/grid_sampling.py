"""F.grid_sample and ATen's grid_sampler, grid_sampler_2d and grid_sampler_3d (CPU), with
their derivatives (derivatives.yaml):

- grid_sampler_2d (3d) records GridSampler2DBackward0 (3D) over (input, grid), saving both;
  its formula is grid_sampler_2d_backward(grad, input, grid, ..., grad_input_mask), which
  gives grad_input only where the mask asks and grad_grid always. derivatives.yaml has no
  forward formula: forward mode raises torch's not-implemented text.
- grid_sampler_2d_backward, recorded under create_graph, is one
  GridSampler2DBackwardBackward0 node over (grad_output, input, grid) with its two outputs,
  saving the three; its formula (grid_sampler_2d_double_backward) is the exact derivative of
  the backward: grad_input is linear in grad_output, grad_grid bilinear in (grad_output,
  input), so the grads of (ggI, ggGrid) are the forward of ggI and the grid-tangent of the
  forward (grad_output's), the input grad spread with the weights' grid-derivatives along
  ggGrid (input's), and the grid grad of (grad_output, ggI) plus the weights' second
  derivatives along ggGrid (grid's). As torch's: a nearest sampler's weights are constant,
  so ggGrid gives nothing (with ggI undefined all three grads are undefined, and the grid's
  grad from ggI is zeros); ggI gives no input grad. The double backward's grads are computed
  in NumPy without a graph (a third order is not modelled; OpInfo checks second order).

The arithmetic is ops/grid_sampling_taps.py's."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import forward_ad, messages
from ..autograd_meta import OpSpec, differentiable, record, record_multi_input
from ..tensor import Tensor
from . import common
from . import grid_sampling_taps as taps_
from .grid_sampling_taps import NEAREST

_MODES = {"bilinear": taps_.BILINEAR, "nearest": taps_.NEAREST, "bicubic": taps_.BICUBIC}
_PADDINGS = {"zeros": taps_.ZEROS, "border": taps_.BORDER, "reflection": taps_.REFLECTION}


def _mask(c: Any, n: int) -> tuple[bool, ...]:
    return tuple(c._node.should_compute(i) for i in range(n))


def _backward(k: int) -> Any:
    def backward(c: Any, g: Tensor) -> list[Tensor | None]:
        grads = _sampler_backward(k, g, c.input, c.grid, c.interpolation_mode,
                                  c.padding_mode, c.align_corners, _mask(c, 2))
        return list(grads)
    return backward


def _double_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    """grid_sampler_{2,3}d_double_backward: grads for (grad_output, input, grid) from the grads
    ggI, ggGrid of the backward's two outputs."""
    ggI, ggG = gs
    if c.interpolation_mode == NEAREST:
        ggG = None   # the weights are constant in the grid: ggGrid reaches nothing
    if ggI is None and ggG is None:
        return [None, None, None]
    gO, x = c.grad_output, c.input
    want = _mask(c, 3)
    n, ch = x.shape[:2]
    t = _taps(c.grid, x, c.interpolation_mode, c.padding_mode, c.align_corners)
    go, xs = _flat(gO, n, ch), _flat(x, n, ch)
    d_go: list[np.ndarray] = []
    d_input: list[np.ndarray] = []
    d_grid: list[np.ndarray] = []
    if ggI is not None:
        gi = _flat(ggI, n, ch)
        d_go.append(taps_.apply(gi, t, t.w))
        d_grid.append(taps_.grid_term(go, gi, t))
    if ggG is not None:
        gg = _flat_grid(ggG, n)
        along = np.einsum("tnqk,nqk->tnq", t.dw, gg)   # each weight's derivative along ggGrid
        d_go.append(taps_.apply(xs, t, along))
        d_input.append(taps_.spread(go, t, along, xs.shape[2]))
        d_grid.append(taps_.grid_term(go, xs, t, np.einsum("tnqkl,nql->tnqk", t.d2w, gg)))
    return [_like(sum(terms[1:], terms[0]), like) if wanted and terms else None
            for terms, like, wanted in zip((d_go, d_input, d_grid), (gO, x, c.grid), want,
                                           strict=True)]


def _spec(k: int) -> tuple[OpSpec, OpSpec]:
    name = f"grid_sampler_{k}d"
    saves = ("grid", "input")
    forward = OpSpec(f"GridSampler{k}DBackward0", ("input", "grid"),
                     dict.fromkeys(("input", "grid"), saves), _backward(k),
                     jvp=common.no_jvp(name))
    backward = OpSpec(f"GridSampler{k}DBackwardBackward0", ("grad_output", "input", "grid"),
                      dict.fromkeys(("grad_output", "input", "grid"),
                                    ("grad_output", "grid", "input")),
                      _double_backward,  # type: ignore[arg-type]
                      jvp=common.no_jvp(f"{name}_backward"))
    return forward, backward


GRID_SAMPLER = {k: _spec(k) for k in (2, 3)}


def _flat(t: Tensor, n: int, c: int) -> np.ndarray:
    return t._data.astype(np.float64).reshape(n, c, -1)


def _flat_grid(t: Tensor, n: int) -> np.ndarray:
    return t._data.astype(np.float64).reshape(n, -1, t.shape[-1])


def _like(values: np.ndarray, like: Tensor) -> Tensor:
    return common.new(values.reshape(like.shape), like.dtype, like.device)


def _taps(grid: Tensor, input: Tensor, mode: int, padding: int, align_corners: bool
          ) -> taps_.Taps:
    g = grid._data.reshape(grid.shape[0], -1, grid.shape[-1])   # in its dtype
    return taps_.taps(g, tuple(input.shape[2:]), mode, padding, align_corners)


def _check(k: int, input: Tensor, grid: Tensor, mode: int) -> None:
    """check_grid_sampler_common, check_grid_sampler_{2,3}d (GridSamplerUtils.h), then the
    CPU kernel's dtype dispatch and its typed read of grid."""
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(messages.grid_sampler_batch(list(input.shape), list(grid.shape)))
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(messages.grid_sampler_last_dim(input.ndim - 2, list(grid.shape)))
    for d in range(2, input.ndim):
        if input.shape[d] <= 0:
            raise RuntimeError(messages.grid_sampler_empty(list(input.shape), d))
    if input.ndim != k + 2 or grid.ndim != input.ndim:
        raise RuntimeError(messages.grid_sampler_dims(k + 2, list(input.shape),
                                                      list(grid.shape)))
    if k == 3 and mode == taps_.BICUBIC:
        raise RuntimeError(messages.GRID_SAMPLER_BICUBIC_3D)
    if not input.dtype.is_floating_point:
        kernel = "grid_sampler_2d_cpu_kernel_impl" if k == 2 else "grid_sampler3d_cpu"
        raise NotImplementedError(messages.kernel_not_implemented(kernel,
                                                                  input.dtype.scalar_name))
    if grid.dtype != input.dtype:
        raise RuntimeError(messages.bmm_dtypes(input.dtype.scalar_name,
                                               grid.dtype.scalar_name))


def _sampler(k: int, input: Tensor, grid: Tensor, interpolation_mode: int,
             padding_mode: int, align_corners: bool) -> Tensor:
    _check(k, input, grid, interpolation_mode)
    n, c = input.shape[:2]
    t = _taps(grid, input, interpolation_mode, padding_mode, align_corners)
    out = taps_.apply(_flat(input, n, c), t, t.w)
    result = common.new(out.reshape(n, c, *grid.shape[1:-1]), input.dtype, input.device)
    return record(GRID_SAMPLER[k][0], result, [input, grid],
                  interpolation_mode=interpolation_mode, padding_mode=padding_mode,
                  align_corners=bool(align_corners))


def _sampler_backward(k: int, grad_output: Tensor, input: Tensor, grid: Tensor, mode: int,
                      padding: int, align_corners: bool, mask: Sequence[bool]
                      ) -> tuple[Tensor | None, Tensor]:
    """grid_sampler_{2,3}d_backward: (grad_input where mask[0] asks, grad_grid)."""
    n, c = input.shape[:2]
    t = _taps(grid, input, mode, padding, align_corners)
    go = _flat(grad_output, n, c)
    gi = taps_.spread(go, t, t.w, int(np.prod(input.shape[2:])))
    gg = taps_.grid_term(go, _flat(input, n, c), t)
    outs = (_like(gi, input), _like(gg, grid))
    inputs = [grad_output, input, grid]
    attrs: dict[str, Any] = {"interpolation_mode": mode, "padding_mode": padding,
                             "align_corners": align_corners}
    spec = GRID_SAMPLER[k][1]
    if differentiable(inputs):
        record_multi_input(spec, inputs, outs, attrs)
    if forward_ad.active():
        for out in outs:
            forward_ad.record_tangent(spec, inputs, out, attrs)
    return (outs[0] if mask[0] else None), outs[1]


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    return _sampler(2, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    return _sampler(3, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """at::grid_sampler on CPU: the 2-d op for a 4-d input, else the 3-d one."""
    k = 2 if input.ndim == 4 else 3
    return _sampler(k, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """torch/nn/functional.py grid_sample: its checks and warning, then torch.grid_sampler."""
    if mode not in _MODES:
        raise ValueError(messages.grid_sample_mode(mode))
    if padding_mode not in _PADDINGS:
        raise ValueError(messages.grid_sample_padding_mode(padding_mode))
    if align_corners is None:
        warnings.warn(messages.GRID_SAMPLE_ALIGN_CORNERS, stacklevel=2)
        align_corners = False
    return grid_sampler(input, grid, _MODES[mode], _PADDINGS[padding_mode], align_corners)
