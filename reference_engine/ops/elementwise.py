"""Differentiable ops: forward in numpy, backward written in engine ops.

Each OpSpec below is one derivatives.yaml entry: torch's node name, the inputs
that get edges, which saved values each input's formula reads, and the formula.
Because formulas call engine ops, create_graph=True differentiates them again.
Broadcast grads are *not* reduced here: like torch, the engine's validate_outputs
sums them back to each input's shape.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes, messages
from ..autograd_meta import OpSpec, record
from ..dtypes import device, dtype
from ..grad_mode import is_grad_enabled, no_grad
from ..tensor import Tensor

Number = int | float | bool

# ---- tensor construction and argument handling -----------------------------------


def new(arr: Any, dt: dtype, dev: device, order: str = "C") -> Tensor:
    if isinstance(arr, np.ndarray | np.generic) and arr.dtype == dt.np:
        # a copy without a cast: nothing can overflow, so no errstate is needed
        return Tensor(np.array(arr, dtype=dt.np, order=order), dt, dev)  # type: ignore[call-overload]
    with np.errstate(all="ignore"):  # a cast that overflows gives inf, silently, in torch
        return Tensor(np.array(arr, dtype=dt.np, order=order), dt, dev)  # type: ignore[call-overload]


def _layout_kept(ts: Sequence[Tensor], shape: tuple[int, ...]) -> bool:
    """TensorIterator gives an elementwise result its inputs' memory layout (a transposed
    input gives a transposed result, so reshaping it copies) where they agree; here only
    where every input that is not 0-d has the result's shape, no expanded (0) stride, and
    the same order of strides: elsewhere the result is contiguous, as it was before.
    Found by the generator: `(x.t() * 2).reshape(-1)` is an UnsafeViewBackward0 in torch."""
    strides = []   # of the inputs that are not 0-d
    for t in ts:
        if t._data.ndim:
            st = t._data.strides
            if t._data.shape != shape or 0 in st:
                return False
            strides.append(st)
    if not strides:
        return False
    if strides.count(strides[0]) == len(strides):   # equal strides: one order
        return True
    # the dims from the smallest stride up (a stable sort: equal strides keep their order)
    orders = {tuple(sorted(range(len(st)), key=st.__getitem__)) for st in strides}
    return len(orders) == 1


def wrap(x: Any) -> Tensor:
    """A Python number becomes a 0-dim 'wrapped number' tensor, as torch does, so that
    it can be saved (x * 2 saves the 2) yet loses to tensors in type promotion."""
    if isinstance(x, Tensor):
        return x
    dt = dtypes.scalar_dtype(x)
    t = Tensor(np.array(x, dtype=dt.np), dt, dtypes.CPU)
    t._wrapped_number = True
    return t


def _promotes(ts: Sequence[Tensor]) -> dtype:
    if len({t._dtype for t in ts}) == 1:   # one dtype promotes to itself, whatever the ranks
        return ts[0]._dtype
    return dtypes.result_type(
        [t._dtype for t in ts if not t._wrapped_number and t._data.ndim > 0],
        [t._dtype for t in ts if not t._wrapped_number and t._data.ndim == 0],
        [t._dtype for t in ts if t._wrapped_number])


def common_device(ts: Sequence[Tensor]) -> device:
    # 0-dim cpu tensors (and wrapped numbers) may join any device, like torch's scalars.
    first: device | None = None
    for t in ts:
        if t._data.ndim == 0 and t._device.type == "cpu":
            continue
        if first is None:
            first = t._device
        elif t._device is not first and t._device != first:
            raise RuntimeError(messages.devices_differ(str(first), str(t._device)))
    return dtypes.CPU if first is None else first


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    if a == b or not a:   # the common cases: nothing to broadcast, nothing to check
        return tuple(b)
    n = builtins.max(len(a), len(b))
    out = []
    for i in range(n - 1, -1, -1):
        ia, ib = len(a) - n + i, len(b) - n + i
        sa = a[ia] if ia >= 0 else 1
        sb = b[ib] if ib >= 0 else 1
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(messages.broadcast_mismatch(sa, sb, i))
        out.append(sa if sb == 1 else sb)
    return tuple(reversed(out))


def wrap_dim(dim: int, ndim: int) -> int:
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(messages.dim_out_of_range(-n, n - 1, dim))
    return dim % n


# torch returns inf/nan silently; so do we. (np.errstate as a decorator sets the state per
# call without making a context object each time: this runs for every op.)
@np.errstate(all="ignore")
def _compute(fn: Callable[..., Any], *arrays: np.ndarray) -> Any:
    return fn(*arrays)


def _elementwise(spec: OpSpec | None, fn: Callable[..., Any], args: Sequence[Any],
                 out_dtype: dtype | None = None, compute_dtype: dtype | None = None,
                 **attrs: Any) -> Tensor:
    ts = [wrap(a) for a in args]
    dev = common_device(ts)
    dt = compute_dtype or _promotes(ts)
    shape: tuple[int, ...] = ()
    for t in ts:
        shape = broadcast_shape(shape, t._data.shape)
    # (astype(copy=False) would return an operand of that dtype as it is, at a method call's cost)
    arrays = [t._data if t._data.dtype == dt.np else t._data.astype(dt.np) for t in ts]
    out = new(_compute(fn, *arrays), out_dtype or dt, dev,
              "K" if _layout_kept(ts, shape) else "C")
    return out if spec is None else record(spec, out, ts, **attrs)


def written_in_place(t: Tensor, times: int = 1) -> Tensor:
    """Mark t as written in place `times` times by the kernel that made it: torch formulas
    such as at::zeros(...).scatter_(...) leave the grad they return at _version 1 (or 2)."""
    for _ in range(times):
        t._version_counter.bump()
    return t


def _float_dtype(t: Tensor) -> dtype:
    return t.dtype if t.dtype.is_floating_point else dtypes.get_default_dtype()


# ---- arithmetic -------------------------------------------------------------------

ADD = OpSpec("AddBackward0", ("self", "other"),
             backward=lambda c, g: c.grads(lambda: g, lambda: _times(g, c.alpha)))
SUB = OpSpec("SubBackward0", ("self", "other"),
             backward=lambda c, g: c.grads(lambda: g, lambda: _times(neg(g), c.alpha)))
ADD_SCALAR = OpSpec("AddBackward1", ("self",), backward=lambda c, g: [g])
SUB_SCALAR = OpSpec("SubBackward1", ("self",), backward=lambda c, g: [g])
RSUB = OpSpec("RsubBackward0", ("self", "other"),
              backward=lambda c, g: c.grads(lambda: _times(neg(g), c.alpha), lambda: g))
RSUB_SCALAR = OpSpec("RsubBackward1", ("self",),
                     backward=lambda c, g: [_times(neg(g), c.alpha)])
MUL = OpSpec("MulBackward0", ("self", "other"), {"self": ("other",), "other": ("self",)},
             lambda c, g: c.grads(lambda: mul(g, c.other), lambda: mul(g, c.self)))
MUL_SCALAR = OpSpec("MulBackward1", ("self",), backward=lambda c, g: [mul_scalar(g, c.other)])
DIV = OpSpec("DivBackward0", ("self", "other"), {"self": ("other",), "other": ("self", "other")},
             lambda c, g: c.grads(lambda: div(g, c.other),
                                  lambda: mul(neg(g), div(div(c.self, c.other), c.other))))
DIV_SCALAR = OpSpec("DivBackward1", ("self",), backward=lambda c, g: [div_scalar(g, c.other)])
NEG = OpSpec("NegBackward0", ("self",), backward=lambda c, g: [neg(g)])
RECIPROCAL = OpSpec("ReciprocalBackward0", ("self",), {"self": ("result",)},
                    lambda c, g: [mul(neg(g), mul(c.result, c.result))])


def _times(g: Tensor, alpha: Number) -> Tensor:
    return g if alpha == 1 else mul_scalar(g, alpha)


def add(self: Any, other: Any, alpha: Number = 1) -> Tensor:
    return _elementwise(ADD, lambda a, b: a + alpha * b if alpha != 1 else a + b,
                        (self, other), alpha=alpha)


def sub(self: Any, other: Any, alpha: Number = 1) -> Tensor:
    return _elementwise(SUB, lambda a, b: a - alpha * b if alpha != 1 else a - b,
                        (self, other), alpha=alpha)


def add_scalar(self: Tensor, other: Number) -> Tensor:
    """tensor + Scalar as C++ formulas write it (AddBackward1; the scalar is no input)."""
    dt = _promotes([self, wrap(other)])
    arr = _compute(lambda a: a + other, self._data.astype(dt.np))
    return record(ADD_SCALAR, new(arr, dt, self.device), [self], other=other)


def sub_scalar(self: Tensor, other: Number) -> Tensor:
    """tensor - Scalar as C++ formulas write it (SubBackward1)."""
    dt = _promotes([self, wrap(other)])
    arr = _compute(lambda a: a - other, self._data.astype(dt.np))
    return record(SUB_SCALAR, new(arr, dt, self.device), [self], other=other)


def rsub(self: Tensor, other: Tensor | Number, alpha: Number = 1) -> Tensor:
    """other - alpha * self: torch.rsub.Tensor, or .Scalar for a Python number other."""
    if isinstance(other, Tensor):
        return _elementwise(RSUB, lambda a, b: b - alpha * a if alpha != 1 else b - a,
                            (self, other), alpha=alpha)
    dt = _promotes([self, wrap(other)])
    arr = _compute(lambda a: other - alpha * a, self._data.astype(dt.np))
    return record(RSUB_SCALAR, new(arr, dt, self.device), [self], alpha=alpha, other=other)


def mul(self: Any, other: Any, *, out: Tensor | None = None) -> Tensor:
    if out is not None:
        return into_out("mul", out, (self, other), lambda: mul(self, other))
    return _elementwise(MUL, np.multiply, (self, other))


def into_out(name: str, out: Tensor, inputs: Sequence[Any], compute: Callable[[], Tensor]
             ) -> Tensor:
    """An op's out= overload. Autograd refuses it (VariableType's
    throw_error_out_requires_grad) when grad mode is on and an input or `out` requires grad;
    otherwise the result is written into `out` in place, which counts as one write."""
    from ..inplace import write
    if is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad
                                 for t in (*inputs, out)):
        raise RuntimeError(messages.out_requires_grad(name))
    with no_grad():
        result = compute()
    if tuple(result.shape) != tuple(out.shape):
        raise NotImplementedError(messages.OUT_RESIZE_NOT_MODELLED)
    write(out, dtypes.cast(result._data, out.dtype.np))
    out._version_counter.bump()
    return out


def mul_scalar(self: Tensor, other: Number) -> Tensor:
    """tensor * Scalar as ATen calls it internally (MulBackward1; the scalar is no input)."""
    dt = _promotes([self, wrap(other)])
    arr = _compute(lambda a: a * other, self._data.astype(dt.np))
    return record(MUL_SCALAR, new(arr, dt, self.device), [self], other=other)


def div(self: Any, other: Any) -> Tensor:
    ts = [wrap(self), wrap(other)]
    dt = _promotes(ts)
    return _elementwise(DIV, np.true_divide, ts,
                        compute_dtype=dt if dt.is_floating_point else dtypes.get_default_dtype())


def div_scalar(self: Tensor, other: Number) -> Tensor:
    arr = _compute(lambda a: a / other, self._data)
    return record(DIV_SCALAR, new(arr, _float_dtype(self), self.device), [self], other=other)


def neg(self: Tensor) -> Tensor:
    return _elementwise(NEG, np.negative, (self,))


def reciprocal(self: Tensor) -> Tensor:
    return _unary_float(RECIPROCAL, np.reciprocal, self)


# ---- pow ----------------------------------------------------------------------------

def _pow0_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    if c.exponent == 0:
        return [zeros_like(c.self)]
    return [mul(g, mul_scalar(pow(c.self, c.exponent - 1), c.exponent))]


def _log_base_term(base: Tensor | Number, exponent: Tensor, result: Tensor) -> Tensor:
    # d(b**e)/de = b**e * log(b), defined as 0 where b == 0 and e >= 0 (torch's convention).
    base_t = wrap(base)
    zero_base = compare(base_t, 0, np.equal)
    cond = compare(zero_base, compare(exponent, 0, np.greater_equal), np.logical_and)
    log_b = log(base_t) if isinstance(base, Tensor) else float(np.log(base))
    return where(cond, zeros_scalar(result), mul(result, log_b))


POW0 = OpSpec("PowBackward0", ("self",), {"self": ("self",)}, _pow0_backward)
POW1 = OpSpec(
    "PowBackward1", ("self", "exponent"),
    {"self": ("self", "exponent"), "exponent": ("self", "exponent", "result")},
    lambda c, g: c.grads(
        lambda: where(compare(c.exponent, 0, np.equal), zeros_scalar(g),
                      mul(g, mul(c.exponent, pow(c.self, sub_scalar(c.exponent, 1))))),
        lambda: mul(g, _log_base_term(c.self, c.exponent, c.result))))
POW2 = OpSpec("PowBackward2", ("exponent",), {"exponent": ("exponent", "result")},
              lambda c, g: [mul(g, _log_base_term(c.self, c.exponent, c.result)
                                if c.self == 0 else mul_scalar(c.result, float(np.log(c.self))))])


def pow(self: Any, exponent: Any) -> Tensor:
    if isinstance(self, Tensor) and not isinstance(exponent, Tensor):
        return _elementwise(POW0, lambda a: np.power(a, exponent), (self,),
                            compute_dtype=_promotes([self, wrap(exponent)]), exponent=exponent)
    if isinstance(self, Tensor):
        return _elementwise(POW1, np.power, (self, exponent))
    # Python number ** tensor (torch.pow.Scalar): only the exponent has an edge.
    dt = _promotes([wrap(self), exponent])
    arr = _compute(lambda e: np.power(np.asarray(self, dtype=dt.np), e),
                   exponent._data.astype(dt.np))
    out = new(arr, dt, exponent.device)
    return record(POW2, out, [exponent], self=self)


# ---- unary elementwise --------------------------------------------------------------

def _unary_float(spec: OpSpec, fn: Callable[[np.ndarray], Any], self: Tensor,
                 rounded: bool = False) -> Tensor:
    dt = _float_dtype(self)
    if rounded and dt is dtypes.float32:
        # torch's float32 exp/log/sin/cos/tanh (SLEEF, within 1 ULP) are nearly always the
        # correctly rounded value; numpy's float32 SIMD loops are often 1 ULP off, which a
        # chain like exp(x * x) amplifies past the comparison's tolerance. Computing in
        # float64 and rounding once agrees with torch far more often.
        return _elementwise(spec, fn, (self,), out_dtype=dt, compute_dtype=dtypes.float64)
    return _elementwise(spec, fn, (self,), compute_dtype=dt)


def _sigmoid_array(a: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-a)) in a's precision, with the exp rounded as torch's (see above)."""
    with np.errstate(all="ignore"):
        e = np.exp(-a.astype(np.float64)).astype(a.dtype)
    return np.asarray(a.dtype.type(1) / (a.dtype.type(1) + e))


EXP = OpSpec("ExpBackward0", ("self",), {"self": ("result",)},
             lambda c, g: [mul(g, c.result)])
LOG = OpSpec("LogBackward0", ("self",), {"self": ("self",)}, lambda c, g: [div(g, c.self)])
SQRT = OpSpec("SqrtBackward0", ("self",), {"self": ("result",)},
              lambda c, g: [div(g, mul_scalar(c.result, 2))])
ABS = OpSpec("AbsBackward0", ("self",), {"self": ("self",)},
             lambda c, g: [mul(g, grad_ops.sgn(c.self))])
SIN = OpSpec("SinBackward0", ("self",), {"self": ("self",)}, lambda c, g: [mul(g, cos(c.self))])
COS = OpSpec("CosBackward0", ("self",), {"self": ("self",)},
             lambda c, g: [mul(g, neg(sin(c.self)))])
TANH = OpSpec("TanhBackward0", ("self",), {"self": ("result",)},
              lambda c, g: [grad_ops.tanh_backward(g, c.result)])
SIGMOID = OpSpec("SigmoidBackward0", ("self",), {"self": ("result",)},
                 lambda c, g: [grad_ops.sigmoid_backward(g, c.result)])
# threshold_backward / clamp_backward select, so masked grads are +0, not -0.
RELU = OpSpec("ReluBackward0", ("self",), {"self": ("result",)},
              lambda c, g: [grad_ops.threshold_backward(g, c.result, 0)])
CLAMP = OpSpec("ClampBackward1", ("self",), {"self": ("self",)},
               lambda c, g: [where(_clamp_mask(c.self, c.min, c.max), g, zeros_scalar(g))])


def _constant(arr: Any, like: Tensor) -> Tensor:
    return new(arr, like.dtype, like.device)


def zeros_scalar(like: Tensor) -> Tensor:
    return new(0, like.dtype, like.device)


def _clamp_mask(x: Tensor, lo: Number | None, hi: Number | None) -> Tensor:
    mask = np.ones(x.shape, dtype=bool)
    if lo is not None:
        mask &= x._data >= lo
    if hi is not None:
        mask &= x._data <= hi
    return new(mask, dtypes.bool_, x.device)


def exp(self: Tensor) -> Tensor:
    return _unary_float(EXP, np.exp, self, rounded=True)


def log(self: Tensor) -> Tensor:
    return _unary_float(LOG, np.log, self, rounded=True)


def sqrt(self: Tensor) -> Tensor:
    return _unary_float(SQRT, np.sqrt, self)


def abs(self: Tensor) -> Tensor:
    return _elementwise(ABS, np.abs, (self,))


def sin(self: Tensor) -> Tensor:
    return _unary_float(SIN, np.sin, self, rounded=True)


def cos(self: Tensor) -> Tensor:
    return _unary_float(COS, np.cos, self, rounded=True)


def tanh(self: Tensor) -> Tensor:
    return _unary_float(TANH, np.tanh, self, rounded=True)


def sigmoid(self: Tensor) -> Tensor:
    return _unary_float(SIGMOID, _sigmoid_array, self)


def relu(self: Tensor) -> Tensor:
    # relu is clamp_min(self, 0): x < 0 ? 0 : x, so -0.0 stays -0.0 and NaN stays NaN.
    return _elementwise(RELU, lambda a: _clamp_array(a, 0, None), (self,))


def clamp(self: Tensor, min: Number | None = None, max: Number | None = None) -> Tensor:
    return _elementwise(CLAMP, lambda a: _clamp_array(a, min, max), (self,), min=min, max=max)


def _clamp_array(a: np.ndarray, lo: Number | None, hi: Number | None) -> np.ndarray:
    """ATen's clamp: x < lo ? lo : x, then x > hi ? hi : x. A bound equal to x (a zero of
    the other sign) leaves x as it is; np.maximum would not."""
    out = a if lo is None else np.where(a < lo, np.asarray(lo, dtype=a.dtype), a)
    return out if hi is None else np.where(out > hi, np.asarray(hi, dtype=a.dtype), out)


# ---- comparisons and other non-differentiable results ---------------------------------

def compare(self: Any, other: Any, fn: Callable[..., Any]) -> Tensor:
    return _elementwise(None, fn, (self, other), out_dtype=dtypes.bool_)


def logical_not(self: Tensor) -> Tensor:
    return new(np.logical_not(self._data), dtypes.bool_, self.device)


def signbit(self: Tensor) -> Tensor:
    return new(np.signbit(self._data), dtypes.bool_, self.device)


def isnan(self: Tensor) -> Tensor:
    return new(np.isnan(self._data), dtypes.bool_, self.device)


def equal(a: Tensor, b: Tensor) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a._data, b._data))


def allclose(a: Tensor, b: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    return bool(np.allclose(a._data, b._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


WHERE = OpSpec("WhereBackward0", ("self", "other"),
               {"self": ("condition",), "other": ("condition",)},
               lambda c, g: c.grads(lambda: where(c.condition, g, zeros_scalar(g)),
                                    lambda: where(c.condition, zeros_scalar(g), g)))


def where(condition: Tensor, self: Any, other: Any) -> Tensor:
    a, b = wrap(self), wrap(other)
    dt = _promotes([a, b])
    dev = common_device([condition, a, b])
    out = new(np.where(condition._data, a._data.astype(dt.np), b._data.astype(dt.np)), dt, dev)
    return record(WHERE, out, [a, b], condition=condition)


def _max_backward(c: Any, g: Tensor, keep: Callable[..., Any]) -> Tensor:
    """at::where(self == other, grad / 2, grad).masked_fill_(<loses>, 0)."""
    x, y = c.self, c.other
    halved = where(compare(x, y, np.equal), div_scalar(g, 2), g)
    return written_in_place(indexing.masked_fill(halved, compare(x, y, keep), 0))


MAXIMUM = OpSpec("MaximumBackward0", ("self", "other"),
                 {"self": ("self", "other"), "other": ("self", "other")},
                 lambda c, g: c.grads(lambda: _max_backward(c, g, np.less),
                                      lambda: _max_backward(c, g, np.greater)))
MINIMUM = OpSpec("MinimumBackward0", ("self", "other"),
                 {"self": ("self", "other"), "other": ("self", "other")},
                 lambda c, g: c.grads(lambda: _max_backward(c, g, np.greater),
                                      lambda: _max_backward(c, g, np.less)))


def _keep_first(pick: Callable[..., Any]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """ATen's scalar maximum/minimum: NaN if either is NaN, else std::max(a, b), which keeps
    the first operand on ties (maximum(-0., 0.) is -0.). torch's vectorized loop (whole
    SIMD vectors of contiguous elements, 16 float32 / 8 float64 with AVX512) takes the second
    operand on ties instead; that CPU-dependent path is not modelled."""
    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.broadcast_arrays(a, b)
        return np.where(np.isnan(a) | np.isnan(b), a + b, np.where(pick(b, a), b, a))
    return fn


def maximum(self: Tensor, other: Tensor) -> Tensor:
    return _elementwise(MAXIMUM, _keep_first(np.greater), (self, other))


def minimum(self: Tensor, other: Tensor) -> Tensor:
    return _elementwise(MINIMUM, _keep_first(np.less), (self, other))


# ---- linear algebra -------------------------------------------------------------------

def _column_major(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    return strides[0] == 1 and strides[1] == sizes[0]


def mm_mat1_backward(g: Tensor, mat2: Tensor, sizes: tuple[int, ...],
                     strides: tuple[int, ...]) -> Tensor:
    if _column_major(sizes, strides):   # keep a column-major input's grad column-major
        return views.t(mm(mat2, views.t(g)))
    return mm(g, views.t(mat2))


def mm_mat2_backward(g: Tensor, mat1: Tensor, sizes: tuple[int, ...],
                     strides: tuple[int, ...]) -> Tensor:
    if _column_major(sizes, strides):
        return views.t(mm(views.t(g), mat1))
    return mm(views.t(mat1), g)


def strides(t: Tensor) -> tuple[int, ...]:
    """Element strides, as torch reports them (numpy views keep torch's layouts)."""
    return tuple(s // t._data.itemsize for s in t._data.strides)


MM = OpSpec("MmBackward0", ("self", "mat2"), {"self": ("mat2",), "mat2": ("self",)},
            lambda c, g: c.grads(
                lambda: mm_mat1_backward(g, c.mat2, c.self_sym_sizes, c.self_sym_strides),
                lambda: mm_mat2_backward(g, c.self, c.mat2_sym_sizes, c.mat2_sym_strides)))
MV = OpSpec("MvBackward0", ("self", "vec"), {"self": ("vec",), "vec": ("self",)},
            lambda c, g: c.grads(
                lambda: mul(views.reshape(g, (-1, 1)), c.vec),   # ger(): an exact outer product
                lambda: mv(views.t(c.self), g)))
DOT = OpSpec("DotBackward0", ("self", "tensor"), {"self": ("tensor",), "tensor": ("self",)},
             lambda c, g: c.grads(lambda: mul(g, c.tensor), lambda: mul(g, c.self)))
ADDMM = OpSpec("AddmmBackward0", ("self", "mat1", "mat2"), {"mat1": ("mat2",), "mat2": ("mat1",)},
               lambda c, g: c.grads(
                   lambda: g,
                   lambda: mm_mat1_backward(g, c.mat2, c.mat1_sym_sizes, c.mat1_sym_strides),
                   lambda: mm_mat2_backward(g, c.mat1, c.mat2_sym_sizes, c.mat2_sym_strides)))


def _dims(t: Tensor) -> str:
    return "x".join(str(s) for s in t.shape)


def mm(self: Tensor, mat2: Tensor) -> Tensor:
    # ranks, then shapes, then dtypes: the order of ATen's checks (found by the generator:
    # mm on a 3-D tensor whose squeeze_ had failed)
    for operand, t in (("self", self), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(messages.mm_not_matrix(operand))
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(messages.mm_shapes(_dims(self), _dims(mat2)))
    if self.dtype is not mat2.dtype:
        raise RuntimeError(messages.mm_dtypes(self.dtype.cpp_name, mat2.dtype.cpp_name))
    return _matmul_like(MM, self, mat2, mm_product, self_sym_sizes=self._data.shape,
                        self_sym_strides=strides(self), mat2_sym_sizes=tuple(mat2.shape),
                        mat2_sym_strides=strides(mat2))


def mv(self: Tensor, vec: Tensor) -> Tensor:
    # ranks, sizes, then dtypes, as addmv checks them
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(messages.mv_ranks(self.ndim, vec.ndim))
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(messages.mv_sizes(self.shape[0], _dims(self), vec.shape[0]))
    if self.dtype is not vec.dtype:
        raise RuntimeError(messages.mv_dtypes(self.dtype.scalar_name, vec.dtype.scalar_name))
    return _matmul_like(MV, self, vec)


def dot(self: Tensor, tensor: Tensor) -> Tensor:
    if self.dtype is not tensor.dtype:
        raise RuntimeError(messages.dot_dtypes(self.dtype.scalar_name, tensor.dtype.scalar_name))
    if self.numel() != tensor.numel():
        raise RuntimeError(messages.dot_sizes(self.numel(), tensor.numel()))
    return _matmul_like(DOT, self, tensor)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor) -> Tensor:
    # no promotion: the input, then mat1, against mat2 (found by the generator: a float32
    # input with float64 matrices ran); dtypes are checked before ranks and shapes, as ATen
    for first, t in (("self", input), ("mat1", mat1)):
        if t.dtype is not mat2.dtype:
            raise RuntimeError(messages.addmm_dtypes(first, t.dtype.scalar_name,
                                                     mat2.dtype.scalar_name))
    for operand, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(messages.addmm_not_matrix(operand, t.ndim))
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(messages.mm_shapes(_dims(mat1), _dims(mat2)))
    dev = common_device([input, mat1, mat2])
    dt = _promotes([mat1, mat2])
    # BLAS accumulates into the output, which starts as the input: -0.0 + (-0.0 products)
    # stays -0.0.
    out = new(_compute(lambda b, x, w: b + _from_negative_zero(x, w), input._data, mat1._data,
                       mat2._data), dt, dev)
    return record(ADDMM, out, [input, mat1, mat2], mat1_sym_sizes=tuple(mat1.shape),
                  mat1_sym_strides=strides(mat1), mat2_sym_sizes=tuple(mat2.shape),
                  mat2_sym_strides=strides(mat2))


def blas_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b as BLAS computes it: each sum of products accumulates from +0.0, so a sum of
    zeros is +0.0 even where every product is -0.0 (numpy's sign there is unreliable)."""
    return np.matmul(a, b) + a.dtype.type(0)


def _from_negative_zero(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The 2-D a @ b summed from -0.0: -0.0 exactly where every product is -0.0."""
    products = a[:, :, None] * b[None, :, :]
    all_negative_zero = np.all((products == 0) & np.signbit(products), axis=1)
    return np.where(all_negative_zero, a.dtype.type(-0.0), blas_product(a, b))


def mm_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """mm's kernel: with an inner size of 1 and both outer sizes above 1, each element is
    the one product a[i, 0] * b[0, j] with its sign (an outer product, not a BLAS sum);
    otherwise sums accumulate from +0.0 (blas_product). Found empirically on torch 2.13 CPU."""
    if a.shape[1] == 1 and a.shape[0] > 1 and b.shape[1] > 1:
        return _from_negative_zero(a, b)
    return blas_product(a, b)


def _matmul_like(spec: OpSpec, a: Tensor, b: Tensor,
                 product: Callable[[np.ndarray, np.ndarray], np.ndarray] = blas_product,
                 **attrs: Any) -> Tensor:
    dev = common_device([a, b])
    dt = _promotes([a, b])
    return record(spec, new(_compute(product, a._data, b._data), dt, dev), [a, b], **attrs)


def matmul(self: Tensor, other: Tensor) -> Tensor:
    return linalg.matmul(self, other)


# ---- reductions -----------------------------------------------------------------------

def _sum_backward(c: Any, g: Tensor) -> Tensor:
    if not c.keepdim:
        for d in sorted(c.dim):
            g = views.unsqueeze(g, d)
    return views.expand(g, c.self_sym_sizes)


SUM0 = OpSpec("SumBackward0", ("self",), backward=lambda c, g: [views.expand(g, c.self_sym_sizes)])
SUM1 = OpSpec("SumBackward1", ("self",), backward=lambda c, g: [_sum_backward(c, g)])
MEAN0 = OpSpec("MeanBackward0", ("self",),
               backward=lambda c, g: [div_scalar(views.expand(g, c.self_sym_sizes),
                                                 c.self_sym_numel)])
MEAN1 = OpSpec("MeanBackward1", ("self",),
               backward=lambda c, g: [div_scalar(_sum_backward(c, g), c.count)])


def _reduce_dims(t: Tensor, dim: int | Sequence[int]) -> tuple[int, ...]:
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(wrap_dim(d, t.ndim) for d in dims) if t.ndim else ()


@np.errstate(all="ignore")   # inf + -inf is nan, silently, in torch
def _sum_array(a: np.ndarray, dt: dtype, dims: tuple[int, ...] | None = None,
               keepdim: bool = False) -> np.ndarray:
    """ATen's sum accumulates from +0.0: a sum of -0.0s (even of one) is +0.0. numpy
    starts from the first element and keeps -0.0; adding +0.0 turns only -0.0 into +0.0."""
    # np.add.reduce is the call np.sum makes, without np.sum's Python wrapper around it
    total = np.add.reduce(a, axis=dims, dtype=dt.np, keepdims=keepdim)  # type: ignore[call-overload]
    return total + dt.np.type(0)


def sum(self: Tensor, dim: int | Sequence[int] | None = None,
        keepdim: bool = False) -> Tensor:
    dt = self.dtype if self.dtype.is_floating_point else dtypes.int64
    if dim is None:
        out = new(_sum_array(self._data, dt), dt, self.device)
        return record(SUM0, out, [self], self_sym_sizes=self._data.shape)
    dims = _reduce_dims(self, dim)
    out = new(_sum_array(self._data, dt, dims, keepdim), dt, self.device)
    return record(SUM1, out, [self], dim=dims, keepdim=keepdim, self_sym_sizes=self._data.shape)


def mean(self: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    if not self.dtype.is_floating_point:
        raise RuntimeError(messages.mean_dtype(self.dtype.scalar_name))
    if dim is None:
        total = _sum_array(self._data, self.dtype)
        out = new(_compute(lambda t: t / self.numel(), total), self.dtype, self.device)
        return record(MEAN0, out, [self], self_sym_sizes=self._data.shape,
                      self_sym_numel=self.numel())
    dims = _reduce_dims(self, dim)
    count = int(np.prod([self.shape[d] for d in dims])) if self.ndim else 1
    # mean is sum / count, so a mean of -0.0s is +0.0 too.
    total = _sum_array(self._data, self.dtype, dims, keepdim)
    out = new(_compute(lambda t: t / count, total), self.dtype, self.device)
    return record(MEAN1, out, [self], dim=dims, keepdim=keepdim,
                  self_sym_sizes=self._data.shape, count=count)


def sum_to(g: Tensor, shape: Sequence[int]) -> Tensor:
    """at::sum_to: what the engine applies to a broadcast grad (sum keepdim, then view;
    to a 0-dim shape, one plain sum())."""
    if len(shape) == 0:
        return sum(g)
    lead = g.ndim - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape)
                                if s == 1 and g.shape[lead + i] != 1]
    if dims:
        g = sum(g, dims, keepdim=True)
    return views.view(g, tuple(shape)) if lead > 0 else g


# ---- joining, copying, converting -------------------------------------------------------

CAT = OpSpec("CatBackward0", ("tensors",),
             backward=lambda c, g: [views.slice(g, c.dim, start, start + size)
                                    for start, size in c.pieces])
STACK = OpSpec("StackBackward0", ("tensors",),
               backward=lambda c, g: [views.select(g, c.dim, i) for i in range(c.count)])
CLONE = OpSpec("CloneBackward0", ("self",))
TO_COPY = OpSpec("ToCopyBackward0", ("self",),
                 backward=lambda c, g: [to(g, c.device, c.dtype)])


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    ts = list(tensors)
    d = wrap_dim(dim, ts[0].ndim)
    for i, t in enumerate(ts[1:], start=1):
        for k in range(ts[0].ndim):
            if k != d and t.shape[k] != ts[0].shape[k]:
                raise RuntimeError(messages.cat_sizes(d, ts[0].shape[k], t.shape[k], i))
    dt = _promotes(ts)
    out = new(np.concatenate([t._data.astype(dt.np) for t in ts], axis=d), dt, common_device(ts))
    starts = np.cumsum([0] + [t.shape[d] for t in ts])
    pieces = [(int(s), t.shape[d]) for s, t in zip(starts, ts, strict=False)]
    return record(CAT, out, ts, dim=d, pieces=pieces)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    ts = list(tensors)
    d = wrap_dim(dim, ts[0].ndim + 1)
    dt = _promotes(ts)
    out = new(np.stack([t._data.astype(dt.np) for t in ts], axis=d), dt, common_device(ts))
    return record(STACK, out, ts, dim=d, count=len(ts))


def clone(self: Tensor) -> Tensor:
    return record(CLONE, new(self._data, self.dtype, self.device), [self])


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    target_device, target_dtype = self.device, self.dtype
    for a in [*args, kwargs.get("device"), kwargs.get("dtype")]:
        if isinstance(a, dtype):
            target_dtype = a
        elif isinstance(a, Tensor):
            target_device, target_dtype = a.device, a.dtype
        elif isinstance(a, str | device):
            target_device = device(a)
    if target_device == self.device and target_dtype is self.dtype:
        return self
    out = new(self._data, target_dtype, target_device)
    return record(TO_COPY, out, [self], device=self.device, dtype=self.dtype)


def zeros_like(t: Tensor) -> Tensor:
    return new(np.zeros(t.shape), t.dtype, t.device)


# ---- index plumbing shared by views and in-place writes --------------------------------
# A view or index result is described by flat indices into its source, so every backward
# of selecting elements is one scatter-add, and every backward of a scatter is a gather.

def _gather_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    return [scatter_add(g, c.index, c.source_shape, c.grad_name)]


def _scatter_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    return [gather(g, c.index, "IndexBackward0")]


def gather(self: Tensor, index: np.ndarray, name: str) -> Tensor:
    """self.flatten()[index] - the copy-semantics index op (torch's x[mask] / x[[0, 1]])."""
    spec = OpSpec(name, ("self",), backward=_gather_backward,
                  saves_indices=name == "IndexBackward0")
    out = new(self._data.reshape(-1)[index], self.dtype, self.device)
    return record(spec, out, [self], index=index, source_shape=tuple(self.shape),
                  grad_name="IndexPutBackward0")


def scatter_add(self: Tensor, index: np.ndarray, shape: Sequence[int], name: str,
                distinct: bool = False) -> Tensor:
    """zeros(shape) with self's elements added at flat positions index. With `distinct`
    positions (a select or slice: each element once) they are written, as ATen's
    select_backward/slice_backward copy into the zeros: 0 + -0.0 would lose the sign."""
    spec = OpSpec(name, ("self",), backward=_scatter_backward)
    flat = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=self.dtype.np)
    values = np.broadcast_to(self._data, index.shape).reshape(-1)
    if distinct:
        flat[index.reshape(-1)] = values
    else:
        np.add.at(flat, index.reshape(-1), values)
    return record(spec, new(flat.reshape(tuple(shape)), self.dtype, self.device), [self],
                  index=index)


INDEX_PUT = OpSpec(
    "IndexPutBackward0", ("self", "values"),
    backward=lambda c, g: c.grads(lambda: index_put(g, c.index, zeros_scalar(g)),
                                  lambda: gather(g, c.index, "IndexBackward0")),
    saves_indices=True)


def index_put(self: Tensor, index: np.ndarray, values: Tensor) -> Tensor:
    """Out-of-place: a copy of self with positions index overwritten by values."""
    arr = np.array(self._data, copy=True)
    arr.reshape(-1)[index.reshape(-1)] = np.broadcast_to(values._data, index.shape).reshape(-1)
    return record(INDEX_PUT, new(arr, self.dtype, self.device), [self, values], index=index)


# ---- nn.functional helpers -------------------------------------------------------------

MSE = OpSpec(
    "MseLossBackward0", ("self", "target"),
    {"self": ("self", "target"), "target": ("self", "target")},
    lambda c, g: c.grads(
        lambda: grad_ops.mse_loss_backward(g, c.self, c.target, c.reduction),
        lambda: grad_ops.mse_loss_backward(g, c.target, c.self, c.reduction)))


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    diff = (input._data - target._data) ** 2
    value = diff.mean() if reduction == "mean" else diff.sum() if reduction == "sum" else diff
    out = new(value, _promotes([input, target]), common_device([input, target]))
    return record(MSE, out, [input, target], reduction=reduction)


# ---- atan2 ------------------------------------------------------------------------------

def _atan2_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    """FunctionsManual atan2_backward: both grads scale by the reciprocal of self^2 + other^2,
    masked to 0 where that is 0, so atan2(0, 0) has a zero gradient rather than NaN."""
    denom = add(mul(c.self, c.self), mul(c.other, c.other))
    recip = indexing.masked_fill(reciprocal(denom), compare(denom, 0, np.equal), 0)
    return c.grads(lambda: mul(mul(g, c.other), recip),
                   lambda: mul(mul(g, neg(c.self)), recip))


ATAN2 = OpSpec("Atan2Backward0", ("self", "other"),
               {"self": ("self", "other"), "other": ("self", "other")}, _atan2_backward)


def atan2(self: Tensor, other: Tensor) -> Tensor:
    ts = [wrap(self), wrap(other)]
    dt = _promotes(ts)
    dt = dt if dt.is_floating_point else dtypes.get_default_dtype()   # integers give floats
    return _elementwise(ATAN2, np.arctan2, ts, compute_dtype=dt)


# They import this module; used at call time.
from .. import views  # noqa: E402
from . import backward as grad_ops  # noqa: E402
from . import indexing, linalg  # noqa: E402
