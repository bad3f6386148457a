"""abs, tanh, sigmoid and relu, and their in-place forms: the unary ops whose derivative
formulas call a backward op (ops/backward.py; derivatives.yaml: abs `grad * self.sgn()`,
tanh `tanh_backward(grad, result)`, sigmoid `sigmoid_backward(grad, result)`, relu
`threshold_backward(grad, result, 0)`). The backward ops' own formulas are written in the
basic ops (mul, add, sum), and nothing below calls these four, so they sit above
backward.py, which sits above the basic ops: none of the three is part of the basic ops'
import circle (ops/basic/)."""

from __future__ import annotations

import numpy as np

from ..autograd_meta import OpSpec
from ..tensor import Tensor
from . import backward as grad_ops
from . import complex_polar, kernels
from .basic.elementwise import mul, refuse_complex_clamp, unary_float
from .common import elementwise_op
from .inplace_ops import unary_inplace

ABS: OpSpec = OpSpec("AbsBackward0", ("self",), {"self": ("self",)},
                     lambda c, g: [mul(g, grad_ops.sgn(c.self))],
                     jvp=lambda c: mul(c.self_t, grad_ops.sgn(c.self)))
TANH: OpSpec = OpSpec("TanhBackward0", ("self",), {"self": ("result",)},
                      lambda c, g: [grad_ops.tanh_backward(g, c.result)], jvp="auto_element_wise")
SIGMOID: OpSpec = OpSpec("SigmoidBackward0", ("self",), {"self": ("result",)},
                         lambda c, g: [grad_ops.sigmoid_backward(g, c.result)],
                         jvp="auto_element_wise")
# threshold_backward / clamp_backward select, so masked grads are +0, not -0.
RELU: OpSpec = OpSpec("ReluBackward0", ("self",), {"self": ("result",)},
                      lambda c, g: [grad_ops.threshold_backward(g, c.result, 0)],
                      jvp="auto_element_wise")


def abs(self: Tensor) -> Tensor:
    if self.dtype.is_complex:   # a real result, and its own formula
        return complex_polar.abs(self)
    return elementwise_op(ABS, np.abs, (self,))


def tanh(self: Tensor) -> Tensor:
    return unary_float(TANH, np.tanh, self, rounded=True)


def sigmoid(self: Tensor) -> Tensor:
    return unary_float(SIGMOID, kernels.sigmoid, self)


def relu(self: Tensor) -> Tensor:
    # relu is clamp_min(self, 0): x < 0 ? 0 : x, so -0.0 stays -0.0 and NaN stays NaN.
    refuse_complex_clamp(self)
    return elementwise_op(RELU, lambda a: kernels.clamp(a, 0, None), (self,))


abs_ = unary_inplace(ABS, abs)
tanh_ = unary_inplace(TANH, tanh)
sigmoid_ = unary_inplace(SIGMOID, sigmoid)
relu_ = unary_inplace(RELU, relu)
