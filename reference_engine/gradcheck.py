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

check_forward_ad is gradcheck_forward.py's; what both checks share (the numerical
Jacobian, the error) is in gradcheck_common.py.

fast_mode=True is gradcheck_fast.py's, for real outputs (of real or complex inputs) and
backward mode. Not modelled (refused with NotImplementedError, never answered wrongly):
fast_mode with complex outputs or with check_forward_ad, check_batched_grad,
check_batched_forward_grad (vmap), masked inputs.
check_grad_dtypes and nondet_tol are honoured.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import autograd, dtypes, messages
from .engine import gradient_edge
from .gradcheck_common import (
    GradcheckError,
    as_tuple,
    differentiable_inputs,
    differentiable_outputs,
    numerical_jacobian,
    part_name,
    tensor_text,
)
from .gradcheck_fast import fast_gradcheck
from .gradcheck_forward import forward_real_imag
from .graph import Node, node_class
from .ops.basic import complex_imag, complex_numbers, copying
from .ops.common import new
from .tensor import Tensor


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


def _slow_gradcheck(func: Callable[..., Any], func_out: Any, inputs: tuple[Any, ...],
                    outputs: tuple[Tensor, ...], eps: float, rtol: float, atol: float,
                    check_grad_dtypes: bool, nondet_tol: float,
                    complex_indices: Sequence[int] = (), test_imag: bool = False) -> None:
    all_out = as_tuple(func_out)
    numerical = numerical_jacobian(func, inputs, all_out, eps)
    if not outputs:
        if any(np.count_nonzero(j) for per_input in numerical for j in per_input):
            raise GradcheckError(messages.GRADCHECK_NONZERO_NUMERICAL)
        return
    # per output that requires grad, per input
    by_output = [[numerical[i][k] for i in range(len(numerical))]
                 for k, o in enumerate(all_out) if o.requires_grad]
    diff = differentiable_inputs(inputs)
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian(o, diff, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, by_output[i], strict=True)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                prefix = part_name(test_imag, "outputs") if i in complex_indices else ""
                # a complex input's numerical column is complex, as its grads are
                n_dtype = diff[j].dtype if np.iscomplexobj(n) else o.dtype
                raise GradcheckError(prefix + messages.gradcheck_jacobian_mismatch(
                    i, j, tensor_text(n, n_dtype), tensor_text(a, diff[j].dtype)))


def _real_and_imag_output(func: Callable[..., Any]) -> tuple[Callable[..., Any],
                                                             Callable[..., Any]]:
    """func with torch.real, and with torch.imag, applied to its complex outputs."""
    def apply(part: Callable[[Tensor], Tensor]) -> Callable[..., Any]:
        def wrapped(*args: Any) -> tuple[Any, ...]:
            return tuple(part(o) if isinstance(o, Tensor) and o.dtype.is_complex else o
                         for o in as_tuple(func(*args)))
        return wrapped
    return apply(complex_numbers.real), apply(complex_imag.imag)


def _backward_real_imag(func: Callable[..., Any], func_out: Any, inputs: tuple[Any, ...],
                        outputs: tuple[Tensor, ...], eps: float, rtol: float, atol: float,
                        check_grad_dtypes: bool, nondet_tol: float) -> None:
    """torch's _gradcheck_real_imag, backward half: a function with complex outputs is
    checked as its imaginary parts, then its real parts."""
    complex_out = [i for i, o in enumerate(outputs) if o.dtype.is_complex]
    if not any(isinstance(o, Tensor) and o.dtype.is_complex for o in as_tuple(func_out)):
        _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                        nondet_tol)
        return
    real_fn, imag_fn = _real_and_imag_output(func)
    for fn, test_imag in ((imag_fn, True), (real_fn, False)):
        out = fn(*inputs)
        _slow_gradcheck(fn, out, inputs, differentiable_outputs(out), eps, rtol, atol,
                        check_grad_dtypes, nondet_tol, complex_out, test_imag)


def _test_backward_mul_by_grad_output(outputs: tuple[Tensor, ...],
                                      inputs: tuple[Any, ...]) -> None:
    diff = differentiable_inputs(inputs)
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
    diff = differentiable_inputs(inputs)

    def check(to_check: list[Tensor]) -> None:
        zeros = [new(np.zeros(o.shape), o.dtype, o.device) for o in to_check]
        try:
            grads = autograd.grad(to_check, diff, zeros, allow_unused=True)
        except RuntimeError as e:
            # torch warns without a stacklevel: the warning points into its gradcheck
            warnings.warn(messages.GRADCHECK_UNDEFINED_BC, UserWarning, stacklevel=1)
            raise GradcheckError(messages.GRADCHECK_UNDEFINED_FAILED) from e
        for g in grads:
            if g is not None and np.any(g._data != 0):
                warnings.warn(messages.GRADCHECK_UNDEFINED_BC, UserWarning, stacklevel=1)
                raise GradcheckError(messages.GRADCHECK_UNDEFINED_NONZERO)

    groups = [[_undefined(o) for o in differentiable_outputs(func(*inputs))]]
    if len(groups[0]) > 1:
        for k in range(len(outputs)):
            groups.append([_undefined(o) if idx == k else o
                           for idx, o in enumerate(differentiable_outputs(func(*inputs)))])
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
        inputs = as_tuple(inputs)
        _check_inputs(inputs)
        # refused only past the input checks, which every mode shares
        if (fast_mode and check_forward_ad) or check_batched_grad \
                or check_batched_forward_grad or masked:
            raise NotImplementedError(messages.GRADCHECK_NOT_MODELLED)
        func_out = func(*inputs)
        outputs = differentiable_outputs(func_out)
        # torch's order: backward's Jacobians, forward's, then the other backward checks
        if check_backward_ad and fast_mode:
            fast_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol,
                           check_grad_dtypes, nondet_tol, _analytical_jacobian)
        elif check_backward_ad:
            _backward_real_imag(func, func_out, inputs, outputs, eps, rtol, atol,
                                check_grad_dtypes, nondet_tol)
        if check_forward_ad:
            forward_real_imag(func, func_out, inputs, outputs, eps, rtol, atol,
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
    inputs = as_tuple(inputs)
    if grad_outputs is None:
        outs = differentiable_outputs(func(*inputs))
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            new(_uniform(rng, x), x.dtype if x.is_floating_point() or x.dtype.is_complex
                else dtypes.float64, x.device).requires_grad_() for x in outs)
    grad_outputs = as_tuple(grad_outputs)
    n = len(grad_outputs)
    diff_args = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad}
    diff_grads = {i for i, x in enumerate(grad_outputs) if x.requires_grad}

    def new_func(*args: Any) -> tuple[Tensor, ...]:
        input_args = tuple(x.requires_grad_() if i in diff_args else x
                           for i, x in enumerate(args[:-n]))
        outputs = differentiable_outputs(func(*input_args))
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
