"""torch.autograd.gradcheck and gradgradcheck (torch/autograd/gradcheck.py, slow mode).

The numerical Jacobian is computed by central differences, each element of each input that
requires grad perturbed in place by +-eps; the analytical one row by row, by
autograd.grad with one-hot grad_outputs, twice (the second run checks that backward is
deterministic). Then, as torch does: backward with zero grad_outputs must give zero grads,
and backward with undefined grad_outputs must succeed. Both follow torch's order of calls,
so a function or hook that counts its calls sees torch's counts.

Complex numbers as torch checks them: a complex input's numerical derivative is the
conjugate Wirtinger one (ds/dx + i ds/dy, each by central differences); a function with
complex outputs is checked (backward) as its imaginary, then its real parts; one of complex
inputs (forward) along their imaginary, then their real parts, the other part held.

check_forward_ad (slow mode) is torch's too: the analytical Jacobian is built
column by column inside a dual level, each differentiable input made a dual tensor of its
detached self with a zero tangent, one element of that tangent set to 1 per call of the
function; then, with check_undefined_grad, each differentiable input once with a zero
tangent and once as a plain tensor must give the same output tangents (the other inputs'
tangents drawn by the engine's own generator, as gradgradcheck's grad_outputs are). The
order of the checks, hence of the function's and its Functions' calls, is torch's.

Not modelled (refused with NotImplementedError, never answered wrongly): fast_mode=True,
check_batched_grad, check_batched_forward_grad (vmap), masked inputs.
check_grad_dtypes and nondet_tol are honoured.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import autograd, dtypes, forward_ad, inplace_ops, messages
from .dtypes import get_default_dtype
from .engine import gradient_edge
from .factories import zeros_like
from .graph import Node, node_class
from .ops import complex_numbers, copying
from .ops import elementwise as ew
from .ops.common import new
from .tensor import Tensor


class GradcheckError(RuntimeError):
    """torch.autograd.gradcheck.GradcheckError."""


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if isinstance(x, tuple):
        return x
    return tuple(x) if isinstance(x, list) else (x,)


def _diff_inputs(inputs: Sequence[Any]) -> list[Tensor]:
    return [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]


def _differentiable_outputs(x: Any) -> tuple[Tensor, ...]:
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _check_inputs(inputs: Sequence[Any]) -> None:
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if isinstance(inp, Tensor) and inp.requires_grad:
            if inp.dtype not in (dtypes.float64, dtypes.complex128):
                warnings.warn(messages.gradcheck_not_double(idx), UserWarning, stacklevel=4)
            if any(st == 0 and sz > 1
                   for st, sz in zip(inp._data.strides, inp._data.shape, strict=True)):
                raise RuntimeError(messages.gradcheck_stride_zero(idx))
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError(messages.GRADCHECK_NO_INPUT_REQUIRES_GRAD)


def _numerical_jacobian(func: Callable[..., Any], inputs: tuple[Any, ...],
                        outputs: tuple[Tensor, ...], eps: float) -> list[list[np.ndarray]]:
    """[input][output] -> (numel of input, numel of output): d output / d input element."""
    result = []
    for inp in _diff_inputs(inputs):
        data = _writable(inp)
        columns: list[list[np.ndarray]] = [[] for _ in outputs]
        for idx in itertools.product(*(range(n) for n in data.shape)):
            ds_dx = _central_difference(func, inputs, data, idx, eps)
            if inp.dtype.is_complex:
                # the conjugate Wirtinger derivative: ds/dx + i ds/dy
                ds_dy = _central_difference(func, inputs, data, idx, eps * 1j)
                ds_dx = [dx + dy * 1j for dx, dy in zip(ds_dx, ds_dy, strict=True)]
            for k, d in enumerate(ds_dx):
                columns[k].append(d)
        result.append([np.stack(c).astype(inp._data.dtype if inp.dtype.is_complex
                                          else c[0].dtype, copy=False)
                       if c else np.zeros((0, o.numel()), o._data.dtype)
                       for c, o in zip(columns, outputs, strict=True)])
    return result


def _writable(t: Tensor) -> np.ndarray:
    """t's elements as an array gradcheck may move in place (torch writes through x.data): a
    complex tensor's part view is read-only here (complex_numbers' views), so it is reached
    through its base's memory."""
    a = t._data
    if a.flags.writeable or t._base is None or a.size == 0:
        return a
    root = t._base._data
    offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(a.shape, a.dtype, buffer=root, offset=offset, strides=a.strides)


def _central_difference(func: Callable[..., Any], inputs: tuple[Any, ...], data: np.ndarray,
                        idx: tuple[int, ...], delta: float | complex) -> list[np.ndarray]:
    """(f(x + delta) - f(x - delta)) / (2 |delta|) per output, x's element idx moved in place
    (torch's _compute_numerical_gradient)."""
    orig = data[idx].copy()
    data[idx] = orig - delta
    below = [o.clone() for o in _as_tuple(func(*inputs))]
    data[idx] = orig + delta
    above = [o.clone() for o in _as_tuple(func(*inputs))]
    data[idx] = orig
    return [((b._data - a._data) / np.asarray(2 * abs(delta), b._data.dtype)).reshape(-1)
            for a, b in zip(below, above, strict=True)]


def _analytical_rows(output: Tensor, diff_inputs: list[Tensor]
                     ) -> tuple[list[np.ndarray], bool, bool]:
    """Per input, (numel of input, numel of output), from one backward per output element;
    also whether every grad had its input's shape and dtype."""
    jac = [np.zeros((inp.numel(), output.numel()), inp._data.dtype) for inp in diff_inputs]
    sizes_ok = types_ok = True
    sample = copying.clone(output)
    for j in range(sample.numel()):
        onehot = np.zeros(sample.numel(), sample._data.dtype)
        onehot[j] = 1
        grad_out = new(onehot.reshape(sample.shape), sample.dtype, sample.device)
        grads = autograd.grad(output, diff_inputs, grad_out, retain_graph=True,
                              allow_unused=True)
        for i, g in enumerate(grads):
            if g is None:
                continue
            if tuple(g.shape) != tuple(diff_inputs[i].shape):
                sizes_ok = False
            elif g.dtype is not diff_inputs[i].dtype:
                types_ok = False
            if g.numel() == jac[i].shape[0]:
                jac[i][:, j] = g._data.reshape(-1)
    return jac, sizes_ok, types_ok


def _analytical_jacobian(output: Tensor, diff_inputs: list[Tensor], nondet_tol: float,
                         check_grad_dtypes: bool) -> list[np.ndarray]:
    first, sizes_ok, types_ok = _analytical_rows(output, diff_inputs)
    second = _analytical_rows(output, diff_inputs)[0]
    reentrant = all(a.size == 0 or np.abs(a - b).max() <= nondet_tol
                    for a, b in zip(first, second, strict=True))
    # torch's _stack_and_check_tensors returns its two flags in swapped order
    if not sizes_ok and check_grad_dtypes:
        raise GradcheckError(messages.GRADCHECK_DTYPE_MISMATCH)
    if not types_ok:
        raise GradcheckError(messages.GRADCHECK_WRONG_SIZE)
    if not reentrant:
        raise GradcheckError(messages.gradcheck_not_reentrant(nondet_tol))
    return first


def _tensor_text(a: np.ndarray, dt: dtypes.dtype) -> str:
    return str(new(a, dt, dtypes.device("cpu")))


def _slow_gradcheck(func: Callable[..., Any], func_out: Any, inputs: tuple[Any, ...],
                    outputs: tuple[Tensor, ...], eps: float, rtol: float, atol: float,
                    check_grad_dtypes: bool, nondet_tol: float,
                    complex_indices: Sequence[int] = (), test_imag: bool = False) -> None:
    all_out = _as_tuple(func_out)
    numerical = _numerical_jacobian(func, inputs, all_out, eps)
    if not outputs:
        if any(np.count_nonzero(j) for per_input in numerical for j in per_input):
            raise GradcheckError(messages.GRADCHECK_NONZERO_NUMERICAL)
        return
    # per output that requires grad, per input
    by_output = [[numerical[i][k] for i in range(len(numerical))]
                 for k, o in enumerate(all_out) if o.requires_grad]
    diff = _diff_inputs(inputs)
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian(o, diff, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, by_output[i], strict=True)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                prefix = _part(test_imag, "outputs") if i in complex_indices else ""
                # a complex input's numerical column is complex, as its grads are
                n_dtype = diff[j].dtype if np.iscomplexobj(n) else o.dtype
                raise GradcheckError(prefix + messages.gradcheck_jacobian_mismatch(
                    i, j, _tensor_text(n, n_dtype), _tensor_text(a, diff[j].dtype)))


def _part(test_imag: bool, element: str) -> str:
    return messages.gradcheck_complex_part("imaginary" if test_imag else "real", element)


def _real_and_imag_output(func: Callable[..., Any]) -> tuple[Callable[..., Any],
                                                             Callable[..., Any]]:
    """func with torch.real, and with torch.imag, applied to its complex outputs."""
    def apply(part: Callable[[Tensor], Tensor]) -> Callable[..., Any]:
        def wrapped(*args: Any) -> tuple[Any, ...]:
            return tuple(part(o) if isinstance(o, Tensor) and o.dtype.is_complex else o
                         for o in _as_tuple(func(*args)))
        return wrapped
    return apply(complex_numbers.real), apply(complex_numbers.imag)


def _real_and_imag_input(func: Callable[..., Any], indices: list[int],
                         inputs: tuple[Any, ...]) -> tuple[Callable[..., Any],
                                                           Callable[..., Any]]:
    """x -> func(x + orig.imag * 1j) and y -> func(orig.real + y * 1j) for the complex
    inputs (the other part held at the original's, never 0)."""
    def apply(make: Callable[[Tensor, Tensor], Tensor]) -> Callable[..., Any]:
        def wrapped(*args: Any) -> tuple[Any, ...]:
            new_args = list(args)
            for k in indices:
                new_args[k] = make(new_args[k], inputs[k])
            return _as_tuple(func(*new_args))
        return wrapped
    return (apply(lambda x, orig: ew.add(x, ew.mul(complex_numbers.imag(orig), 1j))),
            apply(lambda y, orig: ew.add(complex_numbers.real(orig), ew.mul(y, 1j))))


def _parts(inputs: tuple[Any, ...], part: Callable[[Tensor], Tensor]) -> tuple[Any, ...]:
    """The complex inputs replaced by one part each (its view: x.real, x.imag)."""
    return tuple(part(x) if isinstance(x, Tensor) and x.dtype.is_complex else x
                 for x in inputs)


def _backward_real_imag(func: Callable[..., Any], func_out: Any, inputs: tuple[Any, ...],
                        outputs: tuple[Tensor, ...], eps: float, rtol: float, atol: float,
                        check_grad_dtypes: bool, nondet_tol: float) -> None:
    """torch's _gradcheck_real_imag, backward half: a function with complex outputs is
    checked as its imaginary parts, then its real parts."""
    complex_out = [i for i, o in enumerate(outputs) if o.dtype.is_complex]
    if not any(isinstance(o, Tensor) and o.dtype.is_complex for o in _as_tuple(func_out)):
        _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                        nondet_tol)
        return
    real_fn, imag_fn = _real_and_imag_output(func)
    for fn, test_imag in ((imag_fn, True), (real_fn, False)):
        out = fn(*inputs)
        _slow_gradcheck(fn, out, inputs, _differentiable_outputs(out), eps, rtol, atol,
                        check_grad_dtypes, nondet_tol, complex_out, test_imag)


def _forward_real_imag(func: Callable[..., Any], func_out: Any, inputs: tuple[Any, ...],
                       outputs: tuple[Tensor, ...], eps: float, rtol: float, atol: float,
                       check_undefined_grad: bool) -> None:
    """torch's _gradcheck_real_imag, forward half: a function of complex inputs is checked
    along their imaginary parts, then their real parts."""
    complex_inp = [i for i, x in enumerate(inputs) if isinstance(x, Tensor)
                   and x.dtype.is_complex]
    if not complex_inp:
        _slow_gradcheck_forward(func, func_out, inputs, outputs, eps, rtol, atol)
        if check_undefined_grad:
            _test_undefined_forward_mode(func, inputs)
        return
    real_fn, imag_fn = _real_and_imag_input(func, complex_inp, inputs)
    imag_inputs = _parts(inputs, complex_numbers.imag)
    imag_out = imag_fn(*imag_inputs)
    _slow_gradcheck_forward(imag_fn, imag_out, imag_inputs, _differentiable_outputs(imag_out),
                            eps, rtol, atol, complex_inp, True)
    real_inputs = _parts(inputs, complex_numbers.real)
    real_out = real_fn(*real_inputs)
    _slow_gradcheck_forward(real_fn, real_out, real_inputs, _differentiable_outputs(real_out),
                            eps, rtol, atol, complex_inp, False)
    if check_undefined_grad:
        _test_undefined_forward_mode(imag_fn, imag_inputs)
        _test_undefined_forward_mode(real_fn, real_inputs)


def _float_or_complex(x: Any) -> bool:
    return isinstance(x, Tensor) and (x.dtype.is_floating_point or x.dtype.is_complex)


def _dual_inputs(inputs: tuple[Any, ...]) -> tuple[list[Any], list[Tensor]]:
    """The inputs with each that requires grad a dual tensor of its detached self and a zero
    tangent; and those tangents, read back from the duals (torch's _get_analytical_jacobian_
    forward_ad)."""
    duals: list[Any] = []
    tangents: list[Tensor] = []
    for inp in inputs:
        if isinstance(inp, Tensor) and inp.requires_grad:
            inp = forward_ad.make_dual(inp.detach(), zeros_like(inp))
            tangent = forward_ad.unpack_dual(inp).tangent
            assert tangent is not None
            tangents.append(tangent)
        duals.append(inp)
    return duals, tangents


def _analytical_jacobian_forward(func: Callable[..., Any], inputs: tuple[Any, ...],
                                 func_out: tuple[Any, ...]) -> list[list[np.ndarray]]:
    """[input][output] -> (numel of input, numel of output), one call of func per element of
    each differentiable input, its tangent one-hot."""
    floats = [o for o in func_out if _float_or_complex(o)]
    with forward_ad.dual_level():
        duals, tangents = _dual_inputs(inputs)
        jacobians = [[np.zeros((t.numel(), o.numel()), o._data.dtype) for o in floats]
                     for t in tangents]
        for i, tangent in enumerate(tangents):
            for lin, idx in enumerate(itertools.product(*(range(n) for n in tangent.shape))):
                tangent[idx] = 1.0
                outs = [o for o in _as_tuple(func(*duals)) if _float_or_complex(o)]
                for k, o in enumerate(outs):
                    res = forward_ad.unpack_dual(o).tangent
                    if res is not None:
                        jacobians[i][k][lin] = res._data.reshape(-1)
                tangent[idx] = 0.0
    return jacobians


def _slow_gradcheck_forward(func: Callable[..., Any], func_out: Any, inputs: tuple[Any, ...],
                            outputs: tuple[Tensor, ...], eps: float, rtol: float,
                            atol: float, complex_indices: Sequence[int] = (),
                            test_imag: bool = False) -> None:
    all_out = _as_tuple(func_out)
    numerical = _numerical_jacobian(func, inputs, all_out, eps)
    if not outputs:
        if any(np.count_nonzero(j) for per_input in numerical for j in per_input):
            raise GradcheckError(messages.GRADCHECK_NONZERO_NUMERICAL)
        return
    # torch pairs the numerical Jacobians of the outputs that require grad (index i) with
    # the analytical ones of the floating outputs (the same index i)
    by_output = [[numerical[j][k] for j in range(len(numerical))]
                 for k, o in enumerate(all_out) if o.requires_grad]
    analytical = _analytical_jacobian_forward(func, inputs, all_out)
    for i, per_input in enumerate(by_output):
        for j, n in enumerate(per_input):
            a = analytical[j][i]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                # torch tests the input's index among those requiring grad against the
                # complex inputs' indices among all inputs
                prefix = _part(test_imag, "inputs") if j in complex_indices else ""
                raise GradcheckError(prefix + messages.gradcheck_forward_jacobian_mismatch(
                    i, j, _tensor_text(n, outputs[i].dtype), _tensor_text(a, outputs[i].dtype)))


class _TorchCpuGenerator:
    """A fresh torch.Generator() (CPU, its default seed 67280421310721) as far as gradcheck
    draws from it: torch.rand in the default dtype (ATen's uniform_real_distribution): per
    element of a double, two 32-bit mt19937 outputs (the first the high word), the low 53
    bits scaled by 2**-53; of a float, one output, its low 24 bits scaled by 2**-24."""

    def __init__(self, seed: int = 67280421310721) -> None:
        key = np.empty(624, np.uint64)
        key[0] = seed & 0xFFFFFFFF
        for i in range(1, 624):   # std::mt19937's seeding (init_genrand)
            prev = int(key[i - 1])
            key[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF
        self._bits = np.random.MT19937()
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": key.astype(np.uint32), "pos": 624}}

    def rand(self, n: int, dt: dtypes.dtype) -> np.ndarray:
        if dt is dtypes.float64:
            raw = np.asarray(self._bits.random_raw(2 * n), np.uint64)
            bits = ((raw[0::2] << np.uint64(32)) | raw[1::2]) & np.uint64(2 ** 53 - 1)
            return bits.astype(np.float64) * 2.0 ** -53
        if dt is not dtypes.float32:
            raise NotImplementedError(messages.GRADCHECK_NOT_MODELLED)
        raw = np.asarray(self._bits.random_raw(n), np.uint64)
        return ((raw & np.uint64(0xFFFFFF)).astype(np.float64) * 2.0 ** -24).astype(np.float32)


def _test_undefined_forward_mode(func: Callable[..., Any], inputs: tuple[Any, ...]) -> None:
    """Each differentiable input, with a zero tangent and as a plain tensor, must give the
    same output tangents, the other inputs' tangents those torch draws (_make_vectors: a
    fresh generator's rand, in the input's dtype, of norm 1)."""
    gen = _TorchCpuGenerator()
    with forward_ad.dual_level():
        duals, tangents = _dual_inputs(inputs)
        for tangent in tangents:
            u = gen.rand(tangent.numel(), get_default_dtype()).astype(
                dtypes.to_real(tangent.dtype).np)
            u /= np.sqrt(np.sum(u * u))
            inplace_ops.copy_(tangent, new(u.reshape(tangent.shape), tangent.dtype, tangent.device))
        for idx, inp in enumerate(inputs):
            if not (isinstance(inp, Tensor) and inp.requires_grad):
                continue
            kept = duals[idx]
            duals[idx] = forward_ad.make_dual(inp.detach(), zeros_like(inp))
            outs1 = [o for o in _as_tuple(func(*duals)) if _float_or_complex(o)]
            duals[idx] = inp.detach()
            outs2 = [o for o in _as_tuple(func(*duals)) if _float_or_complex(o)]
            duals[idx] = kept
            for k, (o1, o2) in enumerate(zip(outs1, outs2, strict=False)):
                r1 = forward_ad.unpack_dual(o1).tangent
                r2 = forward_ad.unpack_dual(o2).tangent
                if r1 is not None and r2 is not None \
                        and not np.allclose(r1._data, r2._data, rtol=1e-5, atol=1e-8):
                    raise GradcheckError(*messages.gradcheck_undefined_tangent_mismatch(
                        k, inp, r1, r2))


def _test_backward_mul_by_grad_output(outputs: tuple[Tensor, ...],
                                      inputs: tuple[Any, ...]) -> None:
    diff = _diff_inputs(inputs)
    grads = autograd.grad(outputs, diff, [new(np.zeros(o.shape), o.dtype, o.device)
                                          for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff, strict=False):
        if gi is None:
            continue
        if np.any(gi._data != 0):
            raise GradcheckError(messages.GRADCHECK_NOT_MULTIPLIED)
        if gi.dtype is not di.dtype:
            raise GradcheckError(messages.GRADCHECK_INCORRECT_TYPE)
        if tuple(gi.shape) != tuple(di.shape):
            raise GradcheckError(messages.GRADCHECK_INCORRECT_SIZE)


class UndefinedGradNode(Node):
    """torch._C._functions.UndefinedGrad's node: passes an undefined grad back."""

    def name(self) -> str:
        return "UndefinedGradBackward"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return [None]


UndefinedGradBackward = node_class("UndefinedGradBackward", UndefinedGradNode)


def _undefined(o: Tensor) -> Tensor:
    node = UndefinedGradBackward([gradient_edge(o)])
    node.input_metadata.append(o._meta())
    out = Tensor(o._data, o.dtype, o.device)
    out._set_grad_fn(node, 0)
    return out


def _test_undefined_backward_mode(func: Callable[..., Any], outputs: tuple[Tensor, ...],
                                  inputs: tuple[Any, ...]) -> None:
    diff = _diff_inputs(inputs)

    def check(to_check: list[Tensor]) -> None:
        zeros = [new(np.zeros(o.shape), o.dtype, o.device) for o in to_check]
        try:
            grads = autograd.grad(to_check, diff, zeros, allow_unused=True)
        except RuntimeError as e:
            warnings.warn(messages.GRADCHECK_UNDEFINED_BC, UserWarning, stacklevel=4)
            raise GradcheckError(messages.GRADCHECK_UNDEFINED_FAILED) from e
        for g in grads:
            if g is not None and np.any(g._data != 0):
                warnings.warn(messages.GRADCHECK_UNDEFINED_BC, UserWarning, stacklevel=4)
                raise GradcheckError(messages.GRADCHECK_UNDEFINED_NONZERO)

    groups = [[_undefined(o) for o in _differentiable_outputs(func(*inputs))]]
    if len(groups[0]) > 1:
        for k in range(len(outputs)):
            groups.append([_undefined(o) if idx == k else o
                           for idx, o in enumerate(_differentiable_outputs(func(*inputs)))])
    for group in groups:
        check(group)


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6,
              atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
              nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False,
              masked: bool | None = None) -> bool:
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(messages.GRADCHECK_NEEDS_A_MODE)
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(messages.GRADCHECK_BATCHED_NEEDS_BACKWARD)
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(messages.GRADCHECK_BATCHED_FORWARD_NEEDS_FORWARD)
    try:
        inputs = _as_tuple(inputs)
        _check_inputs(inputs)
        # refused only past the input checks, which every mode shares
        if fast_mode or check_batched_grad or check_batched_forward_grad or masked:
            raise NotImplementedError(messages.GRADCHECK_NOT_MODELLED)
        func_out = func(*inputs)
        outputs = _differentiable_outputs(func_out)
        # torch's order: backward's Jacobians, forward's, then the other backward checks
        if check_backward_ad:
            _backward_real_imag(func, func_out, inputs, outputs, eps, rtol, atol,
                                check_grad_dtypes, nondet_tol)
        if check_forward_ad:
            _forward_real_imag(func, func_out, inputs, outputs, eps, rtol, atol,
                               check_undefined_grad)
        if not check_backward_ad:
            return True
        _test_backward_mul_by_grad_output(outputs, inputs)
        if check_undefined_grad:
            _test_undefined_backward_mode(func, outputs, inputs)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _uniform(rng: np.random.Generator, x: Tensor) -> np.ndarray:
    """make_tensor(low=-1, high=1): both parts for a complex x."""
    a = rng.uniform(-1, 1, x.shape)
    return a + 1j * rng.uniform(-1, 1, x.shape) if x.dtype.is_complex else a


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """gradcheck of the function that maps (inputs, grad_outputs) to the first-order grads
    (create_graph=True). Missing grad_outputs are drawn uniformly from [-1, 1) (torch's
    make_tensor(low=-1, high=1)); the draw is the engine's own, and only pass or fail is
    compared."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(messages.GRADGRADCHECK_NEEDS_A_MODE)
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _differentiable_outputs(func(*inputs))
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            new(_uniform(rng, x), x.dtype if x.is_floating_point() or x.dtype.is_complex
                else dtypes.float64, x.device).requires_grad_() for x in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(grad_outputs)
    diff_args = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad}
    diff_grads = {i for i, x in enumerate(grad_outputs) if x.requires_grad}

    def new_func(*args: Any) -> tuple[Tensor, ...]:
        input_args = tuple(x.requires_grad_() if i in diff_args else x
                           for i, x in enumerate(args[:-n]))
        outputs = _differentiable_outputs(func(*input_args))
        gos = tuple(x.requires_grad_() if i in diff_grads else x
                    for i, x in enumerate(args[-n:]))
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_args)
        grads = autograd.grad(outputs, diff_input_args, gos, create_graph=True,
                              allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)
