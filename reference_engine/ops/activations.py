"""The activations of torch.nn.functional (registry rows `nn.functional.<name>`).

Most are pointwise f(x) whose gradient torch computes with a backward op of its own
(derivatives.yaml: `elu: self: elu_backward(grad, ..., self)`, and elu_backward's own entry),
so a grad made with create_graph=True has a grad_fn such as EluBackwardBackward0. Here each
is a `Pointwise`: f and f' as NumPy kernels (in float64, rounded once to the input's dtype,
as torch's float32 kernels nearly always are), and f'' written in engine ops, so every order
differentiates again. The rest are compositions, as torch's Python functions are (softsign,
tanhshrink), or torch's own infinitely differentiable formulas (silu, mish: their first
grads end in a MulBackward0, as torch's do).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..tensor import Tensor
from . import common, joining, unary_math
from . import unary_via_backward as ub  # abs, tanh, sigmoid, relu
from .basic import comparisons, views
from .basic import elementwise as ops

Array = np.ndarray


@dataclass(frozen=True)
class Pointwise:
    """A pointwise activation: torch's node names for it and for its backward op, which
    attributes it records, f and f' (NumPy, on float64 values, given the attributes), and
    f'' (engine ops on the saved input; None for a piecewise linear f, whose second
    derivative torch gives as zeros_like(grad), +0 everywhere). `buffer`: a second saved
    tensor the forward computes from the input (log_sigmoid's)."""
    node: str
    backward_node: str
    params: tuple[str, ...]
    f: Callable[..., Array]
    df: Callable[..., Array]
    d2f: Callable[..., Tensor] | None
    buffer: Callable[[Array], Array] | None = None
    # torch's backward kernel selects 0 where f' is 0 (`x <= min ? 0 : grad`): +0 there,
    # where grad * 0 would be -0 for a negative grad
    selects: bool = False
    # the forward's result (and buffer) contiguous whatever the input's layout, not
    # TensorIterator's (log_sigmoid_forward_cpu: at::empty_like(input, Contiguous))
    contiguous: bool = False
    spec: OpSpec = field(init=False, repr=False)
    backward_spec: OpSpec = field(init=False, repr=False)

    def __post_init__(self) -> None:
        saves = ("self", "buffer") if self.buffer is not None else ("self",)
        object.__setattr__(self, "spec", OpSpec(
            self.node, ("self",), {"self": saves},
            lambda c, g: [self.backward(g, c.self, self._params(c))],
            jvp="auto_element_wise", save_order=saves))
        object.__setattr__(self, "backward_spec", OpSpec(
            self.backward_node, ("grad_output", "self"),
            {"grad_output": ("self",), "self": ("grad_output", "self")},
            lambda c, g: c.grads(lambda: self.backward(g, c.self, self._params(c)),
                                 lambda: self._second(g, c.grad_output, c.self, c)),
            # go_t * f'(x) + go * f''(x) * x_t
            jvp=lambda c: ops.add(self.backward(c.grad_output_t, c.self, self._params(c)),
                                  self._second(c.self_t, c.grad_output, c.self, c))))

    def _second(self, g: Tensor, grad_output: Tensor, x: Tensor, c: Any) -> Tensor:
        """g * grad_output * f''(x): the backward op's gradient for its `self`."""
        if self.d2f is None:
            return common.zeros_like(g)
        return ops.mul(ops.mul(g, grad_output), self.d2f(x, **self._params(c)))

    def _params(self, c: Any) -> dict[str, Any]:
        return {k: getattr(c, k) for k in self.params}

    def __call__(self, input: Tensor, **params: Any) -> Tensor:
        dt = common.float_dtype(input)
        attrs: dict[str, Any] = dict(params)
        if self.buffer is not None:
            buffer = common.compute_on(self.buffer, input._data.astype(np.float64))
            if self.contiguous:
                buffer = np.array(buffer, order="C")   # (0-d stays 0-d)
            attrs["buffer"] = common.new(buffer, dt, input.device)
        if not self.contiguous:
            return common.elementwise_op(self.spec, lambda x: self.f(x, **params), (input,),
                                         out_dtype=dt, compute_dtype=dtypes.float64, **attrs)
        values = common.elementwise_op(None, lambda x: self.f(x, **params), (input,),
                                       out_dtype=dt, compute_dtype=dtypes.float64)
        out = common.new(np.array(values._data, order="C"), dt, input.device)
        return record(self.spec, out, [input], **attrs)

    def backward(self, grad_output: Tensor, self_: Tensor, params: dict[str, Any]) -> Tensor:
        """grad_output * f'(self): torch's `<name>_backward` op."""
        dt = common.result_dtype([grad_output, self_])

        def kernel(go: Array, x: Array) -> Array:
            df = self.df(x, **params)
            return np.where(df == 0, 0.0, go * df) if self.selects else go * df
        return common.elementwise_op(self.backward_spec, kernel, (grad_output, self_),
                                     out_dtype=dt, compute_dtype=dtypes.float64, **params)


def value_mask(x: Tensor, where: Callable[[Array], Array]) -> Tensor:
    """A bool tensor from the values of x (no history): the branches of a piecewise f."""
    return common.new(where(x._data), dtypes.bool_, x.device)


def _zero_where(mask: Tensor, value: Tensor) -> Tensor:
    return comparisons.where(mask, common.zeros_scalar(value), value)


def check_no_inplace(name: str, inplace: bool) -> None:
    if inplace:
        raise NotImplementedError(messages.inplace_not_modelled(name))


# ---- elu, selu, celu: elu_backward(grad, alpha, scale, input_scale, is_result=false, self)

def _elu_f(x: Array, alpha: float, scale: float, input_scale: float) -> Array:
    return np.where(x > 0, scale * x, scale * alpha * np.expm1(x * input_scale))


# elu_backward's kernel and elu_double_backward test `x <= 0` for the curve: a nan input
# takes the linear piece (gradient scale, second derivative 0)

def _elu_df(x: Array, alpha: float, scale: float, input_scale: float) -> Array:
    return np.where(x <= 0, scale * alpha * input_scale * np.exp(x * input_scale), scale)


def _elu_d2f(x: Tensor, alpha: float, scale: float, input_scale: float) -> Tensor:
    curve = ops.mul_scalar(ops.exp(ops.mul_scalar(x, input_scale)),
                           scale * alpha * input_scale * input_scale)
    return _zero_where(value_mask(x, lambda a: ~(a <= 0)), curve)


ELU = Pointwise("EluBackward0", "EluBackwardBackward0", ("alpha", "scale", "input_scale"),
                _elu_f, _elu_df, _elu_d2f)
# celu(self, alpha) is elu(self, alpha, 1, 1/alpha), with a node of its own whose backward
# is elu_backward (so its second order is EluBackwardBackward0, as torch's)
CELU = Pointwise("CeluBackward0", "EluBackwardBackward0", ("alpha",),
                 lambda x, alpha: _elu_f(x, alpha, 1.0, 1.0 / alpha),
                 lambda x, alpha: _elu_df(x, alpha, 1.0, 1.0 / alpha),
                 lambda x, alpha: _elu_d2f(x, alpha, 1.0, 1.0 / alpha))
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    common.floating_kernel("elu_cpu", input)
    check_no_inplace("elu", inplace)
    return ELU(input, alpha=alpha, scale=1.0, input_scale=1.0)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    common.floating_kernel("elu_cpu", input)
    check_no_inplace("selu", inplace)
    return ELU(input, alpha=SELU_ALPHA, scale=SELU_SCALE, input_scale=1.0)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    common.floating_kernel("elu_cpu", input)
    check_no_inplace("celu", inplace)
    return CELU(input, alpha=alpha)


# ---- gelu ---------------------------------------------------------------------------

_SQRT_2_PI = math.sqrt(2 / math.pi)
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _gelu_f(x: Array, approximate: str) -> Array:
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(_SQRT_2_PI * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _gelu_df(x: Array, approximate: str) -> Array:
    if approximate == "tanh":
        t = np.tanh(_SQRT_2_PI * (x + 0.044715 * x ** 3))
        du = _SQRT_2_PI * (1 + 3 * 0.044715 * x * x)
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du
    return 0.5 * (1 + _erf(x / math.sqrt(2))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _gelu_d2f(x: Tensor, approximate: str) -> Tensor:
    x2 = ops.mul(x, x)
    if approximate == "tanh":
        # (1 - t^2) (u' - x t u'^2 + x u''/2), u = k (x + c x^3)
        c = 0.044715
        t = ub.tanh(ops.mul_scalar(ops.add(x, ops.mul_scalar(ops.mul(x2, x), c)), _SQRT_2_PI))
        du = ops.mul_scalar(ops.add_scalar(ops.mul_scalar(x2, 3 * c), 1), _SQRT_2_PI)
        inner = ops.add(ops.sub(du, ops.mul(ops.mul(x, t), ops.mul(du, du))),
                        ops.mul_scalar(x2, 3 * c * _SQRT_2_PI))
        return ops.mul(ops.rsub(ops.mul(t, t), 1), inner)
    # phi(x) (2 - x^2)
    phi = ops.mul_scalar(ops.exp(ops.mul_scalar(x2, -0.5)), 1 / math.sqrt(2 * math.pi))
    return ops.mul(phi, ops.rsub(x2, 2))


GELU = Pointwise("GeluBackward0", "GeluBackwardBackward0", ("approximate",),
                 _gelu_f, _gelu_df, _gelu_d2f)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    common.floating_kernel("GeluKernelImpl", input)
    if approximate not in ("none", "tanh"):
        raise RuntimeError(messages.GELU_APPROXIMATE)
    return GELU(input, approximate=approximate)


# ---- softplus, logsigmoid -----------------------------------------------------------

def _sigmoid(x: Array) -> Array:
    return 1 / (1 + np.exp(-x))


def _softplus_f(x: Array, beta: float, threshold: float) -> Array:
    return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


def _softplus_df(x: Array, beta: float, threshold: float) -> Array:
    return np.where(x * beta > threshold, 1.0, _sigmoid(x * beta))


def _softplus_d2f(x: Tensor, beta: float, threshold: float) -> Tensor:
    s = ub.sigmoid(ops.mul_scalar(x, beta))
    curve = ops.mul_scalar(ops.mul(s, ops.rsub(s, 1)), beta)
    return _zero_where(value_mask(x, lambda a: a * beta > threshold), curve)


SOFTPLUS = Pointwise("SoftplusBackward0", "SoftplusBackwardBackward0", ("beta", "threshold"),
                     _softplus_f, _softplus_df, _softplus_d2f)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    common.floating_kernel("softplus_cpu", input)
    return SOFTPLUS(input, beta=beta, threshold=threshold)


def _logsigmoid_d2f(x: Tensor) -> Tensor:
    s = ub.sigmoid(x)
    return ops.neg(ops.mul(s, ops.rsub(s, 1)))


# log_sigmoid_forward also returns its `buffer`, exp(-|x|) on CPU, saved for the backward
LOGSIGMOID = Pointwise("LogSigmoidBackward0", "LogSigmoidBackwardBackward0", (),
                       lambda x: np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))),
                       lambda x: _sigmoid(-x), _logsigmoid_d2f,
                       buffer=lambda x: np.exp(-np.abs(x)), contiguous=True)


def logsigmoid(input: Tensor) -> Tensor:
    common.floating_kernel("log_sigmoid_cpu", input)
    return LOGSIGMOID(input)


# ---- silu, mish: torch's infinitely differentiable backward formulas --------------------

def _silu_backward(g: Tensor, x: Tensor) -> Tensor:
    """grad * s * (1 + x * (1 - s)), s = sigmoid(x)."""
    s = ub.sigmoid(x)
    # C++'s `1.0 - s` wraps the number: SubBackward0, as ops.sub(1.0, s)
    return ops.mul(ops.mul(g, s), ops.add_scalar(ops.mul(x, ops.sub(1.0, s)), 1))


def _mish_backward(g: Tensor, x: Tensor) -> Tensor:
    """grad * (t + x * sigmoid(x) * (1 - t * t)), t = tanh(softplus(x)), softplus written
    `input.exp().log1p()` as infinitely_differentiable_mish_backward does (ExpBackward0 and
    Log1PBackward0 under create_graph, not SoftplusBackward0)."""
    t = ub.tanh(unary_math.log1p(ops.exp(x)))
    return ops.mul(g, ops.add(t, ops.mul(ops.mul(x, ub.sigmoid(x)),
                                         ops.sub(1.0, ops.mul(t, t)))))


SILU = OpSpec("SiluBackward0", ("self",), {"self": ("self",)},
              lambda c, g: [_silu_backward(g, c.self)], jvp="auto_element_wise")
MISH = OpSpec("MishBackward0", ("self",), {"self": ("self",)},
              lambda c, g: [_mish_backward(g, c.self)], jvp="auto_element_wise")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    common.floating_kernel("silu_cpu", input)
    check_no_inplace("silu", inplace)
    return common.elementwise_op(SILU, lambda x: x * _sigmoid(x), (input,),
                                 out_dtype=common.float_dtype(input),
                                 compute_dtype=dtypes.float64)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    common.floating_kernel("mish_cpu", input)
    check_no_inplace("mish", inplace)
    return common.elementwise_op(MISH, lambda x: x * np.tanh(np.logaddexp(0, x)), (input,),
                                 out_dtype=common.float_dtype(input),
                                 compute_dtype=dtypes.float64)


# ---- glu: a * sigmoid(b), the halves of `dim` ---------------------------------------

def _halves(t: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    h = t.shape[dim] // 2
    return views.narrow(t, dim, 0, h), views.narrow(t, dim, h, h)


def _glu_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """glu_backward: [g * sigmoid(b), g * a * sigmoid(b) * (1 - sigmoid(b))] joined on dim."""
    a, b = _halves(c.self, c.dim)
    s = ub.sigmoid(b)
    return [joining.cat([ops.mul(g, s), ops.mul(ops.mul(ops.mul(g, a), s), ops.rsub(s, 1))],
                        c.dim)]


def _glu_jvp(c: Any) -> Tensor:
    """glu_jvp: a_t * sigmoid(b) + a * sigmoid(b) * (1 - sigmoid(b)) * b_t."""
    a, b = _halves(c.self, c.dim)
    a_t, b_t = _halves(c.self_t, c.dim)
    s = ub.sigmoid(b)
    return ops.add(ops.mul(a_t, s), ops.mul(ops.mul(ops.mul(a, s), ops.rsub(s, 1)), b_t))


GLU = OpSpec("GluBackward0", ("self",), {"self": ("self",)}, _glu_backward, jvp=_glu_jvp)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    if input.ndim == 0:
        raise RuntimeError(messages.GLU_SCALAR)
    d = common.wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(messages.glu_odd(d, input.shape[d]))
    h = input.shape[d] // 2

    def kernel(x: Array) -> Array:
        a, b = np.split(x, [h], axis=d)
        return a * _sigmoid(b)
    dt = common.float_dtype(input)
    out = common.new(common.compute_on(kernel, input._data.astype(np.float64)), dt,
                     input.device)
    return record(GLU, out, [input], dim=d)


# ---- compositions, as torch's Python functions ---------------------------------------

def softsign(input: Tensor) -> Tensor:
    """input / (input.abs() + 1)."""
    return ops.div(input, ops.add(ub.abs(input), 1))


def tanhshrink(input: Tensor) -> Tensor:
    """input - input.tanh()."""
    return ops.sub(input, ub.tanh(input))


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """F.relu: torch.relu, or relu_ in place (both ReluBackward0)."""
    return ub.relu_(input) if inplace else ub.relu(input)
