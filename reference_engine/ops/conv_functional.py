"""F.conv{1,2,3}d and F.conv_transpose{1,2,3}d: ATen's composites over convolution
(Convolution.cpp), with their checks in ATen's order.

Each batchifies an unbatched input (unsqueeze(0), then squeeze(0) of the output: the graph's
UnsqueezeBackward0 and SqueezeBackward1), and a string padding is _convolution_mode's:
'valid' no padding, 'same' the padding that keeps the size (stride 1), where it is uneven
(an even kernel extent) the input first padded by the difference on the right
(constant_pad_nd) and the rest symmetric."""

from __future__ import annotations

from typing import Any

from .. import messages, warn
from ..tensor import Tensor
from . import layers
from .basic import views
from .convolution import Params, convolution


def _ints(value: Any) -> list[int]:
    """An int[N] argument: an int, or a list (its length is checked later, per parameter)."""
    return [int(value)] if isinstance(value, int) else [int(v) for v in value]


def _expand(name: str, values: list[int], dim: int) -> tuple[int, ...]:
    """expand_param_if_needed: one value for every spatial axis, or one per axis."""
    if len(values) == 1:
        return tuple(values * dim)
    if len(values) != dim:
        raise RuntimeError(messages.conv_param_length(name, dim, values))
    return tuple(values)


def _checked(input: Tensor, weight: Tensor, bias: Tensor | None, stride: list[int],
             padding: list[int], dilation: list[int], transposed: bool,
             output_padding: list[int], groups: int) -> Params:
    """_convolution's checks, then check_shape_forward's, in their order."""
    dim = weight.ndim - 2
    if dim <= 0:
        raise RuntimeError(messages.CONV_WEIGHT_DIMS)
    if groups <= 0:
        raise RuntimeError(messages.CONV_GROUPS)
    p = Params(_expand("stride", stride, dim), _expand("padding", padding, dim),
               _expand("dilation", dilation, dim), transposed,
               _expand("output_padding", output_padding, dim), groups)
    if min(p.padding) < 0:
        raise RuntimeError(messages.CONV_PADDING_NEGATIVE)
    if min(p.output_padding) < 0:
        raise RuntimeError(messages.CONV_OUTPUT_PADDING_NEGATIVE)
    if min(p.stride) <= 0:
        raise RuntimeError(messages.CONV_STRIDE)
    if min(p.dilation) <= 0:
        raise RuntimeError(messages.CONV_DILATION)
    w = list(weight.shape)
    if input.ndim != weight.ndim:
        raise RuntimeError(messages.conv_input_dims(w, list(input.shape)))
    if w[0] < groups:
        raise RuntimeError(messages.conv_weight_groups(groups, "at least", w))
    if w[0] % groups:
        raise RuntimeError(messages.conv_weight_groups(groups, "divisible by", w))
    bias_shape = None if bias is None else list(bias.shape)
    if not transposed:
        if input.shape[1] != w[1] * groups:
            raise RuntimeError(messages.conv_input_channels(f"groups={groups}", w,
                                                           list(input.shape), w[1] * groups))
        if bias_shape is not None and bias_shape != [w[0]]:
            raise RuntimeError(messages.conv_bias("", w, w[0], bias_shape))
        padded = [n + 2 * q for n, q in zip(input.shape[2:], p.padding, strict=True)]
        extent = [d * (k - 1) + 1 for k, d in zip(w[2:], p.dilation, strict=True)]
        if any(n < k for n, k in zip(padded, extent, strict=True)):
            raise RuntimeError(messages.conv_kernel_too_large(padded, extent))
    else:
        if input.shape[1] != w[0]:
            raise RuntimeError(messages.conv_input_channels("transposed=1", w,
                                                           list(input.shape), w[0]))
        if bias_shape is not None and bias_shape != [w[1] * groups]:
            raise RuntimeError(messages.conv_bias("transposed=1, ", w, w[1] * groups,
                                                  bias_shape))
    return p


def _batchify(input: Tensor, dims: int, op: str) -> tuple[Tensor, bool]:
    batched = input.ndim == dims + 2
    if input.ndim != dims + 1 and not batched:
        raise RuntimeError(messages.conv_batchify(dims, op, list(input.shape)))
    return (input, True) if batched else (views.unsqueeze(input, 0), False)


def _same(input: Tensor, weight: Tensor, bias: Tensor | None, stride: list[int],
          dilation: list[int], groups: int) -> Tensor:
    """convolution_same: the padding d (k - 1) split left total // 2, right the rest."""
    k = weight.ndim
    if k <= 2:
        raise RuntimeError(messages.CONV_WEIGHT_DIMS_SAME)
    if groups <= 0:
        raise RuntimeError(messages.CONV_GROUPS)
    dim = k - 2
    if input.ndim != k:
        raise RuntimeError(messages.conv_same_input_dims(k, list(weight.shape),
                                                         list(input.shape)))
    for name, values in (("stride", stride), ("dilation", dilation)):
        if len(values) not in (1, dim):
            raise RuntimeError(messages.conv_same_broadcast(name, dim))
    if any(s != 1 for s in stride):
        raise RuntimeError(messages.CONV_SAME_STRIDED)
    dil = _expand("dilation", dilation, dim)
    left, extra = [], []
    for n, d in zip(weight.shape[2:], dil, strict=True):
        total = d * (n - 1)
        left.append(total // 2)
        extra.append(total - 2 * (total // 2))
    if any(extra):
        warn.warn_once(messages.CONV_SAME_EVEN_KERNEL)
        pad: list[int] = []
        for e in reversed(extra):   # F.pad's order: the last dim first
            pad += [0, e]
        input = layers.constant_pad_nd(input, pad, 0)
    return convolution(input, weight, bias, _checked(input, weight, bias, stride, left,
                                                     list(dil), False, [0], groups))


def _conv(op: str, dims: int, input: Tensor, weight: Tensor, bias: Tensor | None,
          stride: Any, padding: Any, dilation: Any, groups: int) -> Tensor:
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(messages.conv_bias_dtype(input.dtype.cpp_name, bias.dtype.cpp_name))
    batch, batched = _batchify(input, dims, op)
    if isinstance(padding, str):
        if padding == "same":
            out = _same(batch, weight, bias, _ints(stride), _ints(dilation), groups)
        elif padding == "valid":
            out = convolution(batch, weight, bias, _checked(
                batch, weight, bias, _ints(stride), [0], _ints(dilation), False, [0], groups))
        else:
            raise RuntimeError(messages.conv_padding_string(padding))
    else:
        out = convolution(batch, weight, bias, _checked(
            batch, weight, bias, _ints(stride), _ints(padding), _ints(dilation), False,
            [0], groups))
    return out if batched else views.squeeze(out, 0)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _transpose(op: str, dims: int, input: Tensor, weight: Tensor, bias: Tensor | None,
               stride: Any, padding: Any, output_padding: Any, groups: int,
               dilation: Any) -> Tensor:
    batch, batched = _batchify(input, dims, op)
    p = _checked(batch, weight, bias, _ints(stride), _ints(padding), _ints(dilation), True,
                 _ints(output_padding), groups)
    for op_, s, d in zip(p.output_padding, p.stride, p.dilation, strict=True):
        if not (op_ < s or op_ < d):
            raise RuntimeError(messages.conv_output_padding(dims, p))
    out = convolution(batch, weight, bias, p)
    return out if batched else views.squeeze(out, 0)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    return _transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                      output_padding, groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    return _transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                      output_padding, groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    return _transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                      output_padding, groups, dilation)
