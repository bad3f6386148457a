"""nn.functional's piecewise activations: hardtanh, relu6, leaky_relu, hardswish, softshrink,
hardshrink, and threshold (whose backward is threshold_backward, as relu's). Each is an
activations.Pointwise (see activations.py)."""

from __future__ import annotations

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec
from ..grad_mode import no_grad
from ..tensor import Tensor
from . import backward as grad_ops
from . import common, piecewise
from .activations import Array, Pointwise, check_no_inplace, value_mask
from .basic import comparisons
from .basic.inplace import apply_inplace

# ---- piecewise linear: hardtanh, relu6, leaky_relu, hardswish, shrinks ------------------

HARDTANH = Pointwise("HardtanhBackward0", "HardtanhBackwardBackward0", ("min_val", "max_val"),
                     lambda x, min_val, max_val: np.clip(x, min_val, max_val),
                     lambda x, min_val, max_val: np.where((x <= min_val) | (x >= max_val),
                                                          0.0, 1.0), None,
                     selects=True)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError(messages.HARDTANH_BOUNDS)
    check_no_inplace("hardtanh", inplace)
    return _hardtanh(input, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """torch's relu6 is hardtanh(input, 0, 6) (HardtanhBackward0)."""
    check_no_inplace("relu6", inplace)
    return _hardtanh(input, 0.0, 6.0)


def _hardtanh(input: Tensor, min_val: float, max_val: float) -> Tensor:
    """Activation.cpp hardtanh_out: an integer tensor is clamped to the bounds truncated to
    integers (toLong, 'boundaries not causing type promotion'), keeping its dtype."""
    if input.dtype is dtypes.bool_:
        raise RuntimeError(messages.HARDTANH_BOOL)
    if not input.dtype.is_floating_point:
        return piecewise.clamp(input, int(min_val), int(max_val))
    return HARDTANH(input, min_val=min_val, max_val=max_val)


LEAKY_RELU = Pointwise("LeakyReluBackward0", "LeakyReluBackwardBackward0", ("negative_slope",),
                       lambda x, negative_slope: np.where(x > 0, x, x * negative_slope),
                       lambda x, negative_slope: np.where(x > 0, 1.0, negative_slope), None)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    common.floating_kernel("leaky_relu_cpu", input)
    check_no_inplace("leaky_relu", inplace)
    return LEAKY_RELU(input, negative_slope=negative_slope)


def _hardswish_d2f(x: Tensor) -> Tensor:
    # derivatives.yaml: where(-3 < self < 3, grad * grad_output / 3, 0)
    inside = value_mask(x, lambda a: (a > -3) & (a < 3))
    return comparisons.where(inside, common.new(1 / 3, x.dtype, x.device), common.zeros_scalar(x))


HARDSWISH = Pointwise("HardswishBackward0", "HardswishBackwardBackward0", (),
                      lambda x: x * np.clip(x + 3, 0, 6) / 6,
                      # hardswish_backward's kernel: 0 for x <= -3, grad for x >= 3
                      lambda x: np.where(x <= -3, 0.0, np.where(x < 3, x / 3 + 0.5, 1.0)),
                      _hardswish_d2f, selects=True)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    common.floating_kernel("hardswish_cpu", input)
    check_no_inplace("hardswish", inplace)
    return HARDSWISH(input)


def _shrink_df(x: Array, lambd: float) -> Array:
    return np.where((x >= -lambd) & (x <= lambd), 0.0, 1.0)


SOFTSHRINK = Pointwise("SoftshrinkBackward0", "SoftshrinkBackwardBackward0", ("lambd",),
                       lambda x, lambd: np.where(x > lambd, x - lambd,
                                                 # a * 0, as torch's scalar kernel: -0
                                                 # for a negative x, nan for nan (its SIMD
                                                 # loop, over whole vectors of contiguous
                                                 # elements, gives +0: CPU-dependent, not
                                                 # modelled, as maximum's ties)
                                                 np.where(x < -lambd, x + lambd, x * 0.0)),
                       _shrink_df, None, selects=True)
HARDSHRINK = Pointwise("HardshrinkBackward0", "HardshrinkBackwardBackward0", ("lambd",),
                       lambda x, lambd: np.where((x >= -lambd) & (x <= lambd), 0.0, x),
                       _shrink_df, None, selects=True)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    common.floating_kernel("softshrink_check", input)
    dt = common.float_dtype(input)
    top = float(np.finfo(dt.np).max)
    if not 0 <= lambd <= top:
        name = {"float32": "Float", "float64": "Double"}.get(dt.name, dt.name)
        raise RuntimeError(messages.softshrink_lambda(top, name, lambd))
    return SOFTSHRINK(input, lambd=lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    common.floating_kernel("hardshrink_cpu", input)
    return HARDSHRINK(input, lambd=lambd)


# ---- threshold: its backward is threshold_backward, as relu's -------------------------

THRESHOLD = OpSpec("ThresholdBackward0", ("self",), {"self": ("self",)},
                   lambda c, g: [grad_ops.threshold_backward(g, c.self, c.threshold)],
                   jvp="auto_element_wise")


# threshold_ (F.threshold's inplace=True): its own node, saving self from before the write
# (a clone, as every in-place formula reading self), unlike relu_, which saves its result
THRESHOLD_ = OpSpec("ThresholdBackward1", ("self",), {"self": ("self",)},
                    lambda c, g: [grad_ops.threshold_backward(g, c.self, c.threshold)],
                    jvp="auto_element_wise")


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    if inplace:
        with no_grad():
            result = threshold_values(input, threshold, value)
        if not input.dtype.is_floating_point:
            threshold = int(threshold)
        return apply_inplace(input, THRESHOLD_, result, [], threshold=threshold, value=value)
    return threshold_values(input, threshold, value)


def threshold_values(input: Tensor, threshold: float, value: float) -> Tensor:
    """F.threshold out of place (ThresholdBackward0, saving its input)."""
    if input.dtype is dtypes.bool_:
        raise NotImplementedError(messages.kernel_not_implemented("threshold_cpu", "Bool"))
    if not input.dtype.is_floating_point:
        # the kernel runs in the tensor's dtype: threshold and value are cast to it (truncated)
        threshold, value = int(threshold), int(value)
        return common.elementwise_op(THRESHOLD, lambda x: np.where(x <= threshold, value, x),
                                     (input,), threshold=threshold, value=value)
    return common.elementwise_op(THRESHOLD, lambda x: np.where(x <= threshold, value, x),
                                 (input,), out_dtype=common.float_dtype(input),
                                 threshold=threshold, value=value)
