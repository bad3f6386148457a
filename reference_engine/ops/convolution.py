"""ATen's convolution, which every F.conv{1,2,3}d and F.conv_transpose{1,2,3}d reaches, its
backward op convolution_backward, and their derivatives (derivatives.yaml `convolution` and
`convolution_backward`):

- ConvolutionBackward0 over (input, weight, bias) saves input and weight; its formula is
  convolution_backward(grad, input, weight, ..., grad_input_mask); forward mode is
  convolution_jvp: conv(input_t, weight) + conv(input, weight_t, bias_t).
- convolution_backward, recorded under create_graph, is one ConvolutionBackwardBackward0
  node over (grad_output, input, weight) with its three outputs (grad_input, grad_weight,
  grad_bias) and saves the three; its formula is _convolution_double_backward
  (Convolution.cpp), written here in the engine's differentiable ops: ggO = conv(ggI, w) +
  conv(x, ggW) + ggb, gI from (gO, ggW), gW from (gO, ggI).

The arithmetic is ops/conv_windows.py's: a transposed convolution is the adjoint in x of the
convolution with the same geometry, so its backward swaps the two."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import forward_ad
from ..autograd_meta import OpSpec, differentiable, record, record_multi_input
from ..tensor import Tensor
from . import common
from .basic import elementwise as ops
from .basic import reductions, views
from .conv_windows import Geometry, conv, conv_input_grad, conv_weight_grad


@dataclass(frozen=True)
class Params:
    """convolution's non-tensor arguments, each list one int per spatial axis."""
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    transposed: bool
    output_padding: tuple[int, ...]
    groups: int

    @property
    def geometry(self) -> Geometry:
        return Geometry(self.stride, self.padding, self.dilation, self.groups)


def forward_array(x: np.ndarray, w: np.ndarray, p: Params) -> np.ndarray:
    geo = p.geometry
    if not p.transposed:
        return conv(x, w, geo)
    size = geo.transposed_size(x.shape[2:], w.shape[2:], p.output_padding)
    return conv_input_grad(x, w, size, geo)


def _backward_arrays(gy: np.ndarray, x: np.ndarray, w: np.ndarray, p: Params
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    geo, kernel = p.geometry, w.shape[2:]
    if p.transposed:   # the adjoint's adjoints: the convolution itself, the roles swapped
        gx = conv(gy, w, geo, out=x.shape[2:])
        gw = conv_weight_grad(x, gy, kernel, geo)
    else:
        gx = conv_input_grad(gy, w, x.shape[2:], geo)
        gw = conv_weight_grad(gy, x, kernel, geo)
    gb = gy.sum(axis=(0, *range(2, gy.ndim)))
    return gx, gw, gb


def _mask(c: Any, n: int = 3) -> tuple[bool, ...]:
    return tuple(c._node.should_compute(i) for i in range(n))


def _convolution_jvp(c: Any) -> Tensor:
    """convolution_jvp (FunctionsManual.cpp): linear in input and in (weight, bias)."""
    out = convolution(c.input_t, c.weight, None, c.params)
    return ops.add(out, convolution(c.input, c.weight_t, c.bias_t, c.params))


CONVOLUTION = OpSpec(
    "ConvolutionBackward0", ("input", "weight", "bias"),
    dict.fromkeys(("input", "weight", "bias"), ("input", "weight")),
    lambda c, g: list(convolution_backward(g, c.input, c.weight, c.bias_sizes, c.params,
                                           _mask(c))),
    jvp=_convolution_jvp)


def _bias_view(ggb: Tensor, like: Tensor) -> Tensor:
    """ggb (C,) as (1, C, 1, ...) expanded to grad_output's shape."""
    shape = [1, ggb.shape[0]] + [1] * (like.ndim - 2)
    return reductions.expand(views.view(ggb, shape), list(like.shape))


def _double_backward(c: Any, gs: Sequence[Tensor | None]) -> list[Tensor | None]:
    """_convolution_double_backward: grads for (grad_output, input, weight) from the grads
    ggI, ggW, ggb of convolution_backward's three outputs."""
    ggI, ggW, ggb = gs
    gO, x, w, p = c.grad_output, c.input, c.weight, c.params
    want = _mask(c)
    ggO = gI = gW = None
    if want[0]:
        terms = [t for t in (None if ggI is None else convolution(ggI, w, None, p),
                             None if ggW is None else convolution(x, ggW, None, p),
                             None if ggb is None else _bias_view(ggb, gO)) if t is not None]
        for t in terms:
            ggO = t if ggO is None else ops.add(ggO, t)
    if want[1] and ggW is not None:
        gI = convolution_backward(gO, x, ggW, None, p, (True, False, False))[0]
    if want[2] and ggI is not None:
        gW = convolution_backward(gO, ggI, w, None, p, (False, True, False))[1]
    return [ggO, gI, gW]


def _backward_jvp(i: int) -> Any:
    """derivatives.yaml's result0..2 of convolution_backward: the product rule over the
    bilinear pieces (grad_output with weight for grad_input, with input for grad_weight)."""
    def jvp(c: Any) -> Tensor:
        if i == 2:
            return c.grad_output_t.sum([0, *range(2, c.grad_output_t.ndim)])
        mask = tuple(j == i for j in range(3))
        if i == 0:
            a = convolution_backward(c.grad_output, c.input, c.weight_t, None, c.params, mask)
        else:
            a = convolution_backward(c.grad_output, c.input_t, c.weight, None, c.params, mask)
        b = convolution_backward(c.grad_output_t, c.input, c.weight, None, c.params, mask)
        return ops.add(a[i], b[i])
    return jvp


CONVOLUTION_BACKWARD = OpSpec(
    "ConvolutionBackwardBackward0", ("grad_output", "input", "weight"),
    dict.fromkeys(("grad_output", "input", "weight"), ("grad_output", "input", "weight")),
    _double_backward)  # type: ignore[arg-type]
_BACKWARD_JVPS = [OpSpec("ConvolutionBackwardBackward0", ("grad_output", "input", "weight"),
                         jvp=_backward_jvp(i)) for i in range(3)]


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, p: Params) -> Tensor:
    """aten::convolution on checked arguments (ops/conv_functional.py checks them)."""
    # in float64, rounded once to the dtype: torch's float32 kernels (oneDNN, im2col + gemm)
    # sum in an order the engine does not model; the exact sum rounded is nearest to any
    out = forward_array(input._data.astype(np.float64), weight._data.astype(np.float64), p)
    if bias is not None:
        out = out + bias._data.reshape(1, -1, *[1] * (out.ndim - 2))
    bias_sizes = None if bias is None else tuple(bias.shape)
    return record(CONVOLUTION, common.new(out.astype(input.dtype.np, copy=False), input.dtype,
                                          input.device),
                  [input, weight, bias], params=p, bias_sizes=bias_sizes)


def convolution_backward(grad_output: Tensor, input: Tensor, weight: Tensor,
                         bias_sizes: tuple[int, ...] | None, p: Params,
                         mask: Sequence[bool]) -> tuple[Tensor | None, ...]:
    """aten::convolution_backward: (grad_input, grad_weight, grad_bias), each only where the
    mask asks (grad_bias also only with a bias)."""
    gy, x, w = (t._data.astype(np.float64) for t in (grad_output, input, weight))
    arrays = _backward_arrays(gy, x, w, p)
    dt, dev = grad_output.dtype, grad_output.device
    outs = tuple(common.new(a.astype(dt.np, copy=False), dt, dev) for a in arrays)
    inputs = [grad_output, input, weight]
    attrs: dict[str, Any] = {"params": p}
    if differentiable(inputs):
        record_multi_input(CONVOLUTION_BACKWARD, inputs, outs, attrs)
    for spec, out in zip(_BACKWARD_JVPS, outs, strict=True):
        forward_ad.record_tangent(spec, inputs, out, attrs)
    wanted = (mask[0], mask[1], mask[2] and bias_sizes is not None)
    return tuple(o if w else None for o, w in zip(outs, wanted, strict=True))
