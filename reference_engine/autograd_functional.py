"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp.

A model of torch/autograd/functional.py (torch 2.13), step for step, since its steps are
observable: which tensors are detached or viewed (`view_as` when create_graph keeps an
input's history), which checks run in which order (so which error a bad call meets first),
where zeros stand in for a gradient that is None. Everything is built on autograd.grad:

- vjp: one backward;
- jvp: the double-backward trick (grad of the grad w.r.t. a dummy grad_output);
- jacobian: one backward per output element (or, `vectorize=True`, one batched backward:
  torch vmaps autograd.grad over the standard basis; this engine's
  `grad(is_grads_batched=True)` runs the backwards one by one and stacks them, the same
  values; not the same graph under create_graph: torch's nodes are legacy vmap's, one per
  backward formula with a view on each unbatched operand, the engine's a StackBackward0 of
  per-entry nodes: docs/coverage/test_functional.yaml, test_jacobian_create_graph);
- hessian: the jacobian of the jacobian (the inner one with create_graph=True);
- vhp: grad of the grad; hvp: the double-backward trick on top of that.

`strategy="forward-mode"` (jacobian, vectorize=True) is torch's _jacfwd, whose vmap of one
jvp over the standard basis calls the function once: autograd_functional_vmap.py calls it
once with seed tangents and replays the tangents' recorded graph per output element (what
it models and what it does not: its docstring). `outer_jacobian_strategy="forward-mode"`
(hessian) is forward-over-reverse through it: the inner reverse-mode jacobian's backward
formulas run on dual tensors (saved results keep their tangents).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import messages, views_multi_output
from .autograd_functional_utils import (
    _as_tuple,
    _autograd_grad,
    _check_requires_grad,
    _fill_in_zeros,
    _grad_postprocess,
    _grad_preprocess,
    _tuple_postprocess,
    call_user_function,
    postprocessed_results,
    prepare_v,
)
from .autograd_functional_vmap import jacobian_forward
from .factories import zeros_like
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from .ops import common, joining
from .ops.basic import views
from .tensor import Tensor

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = call_user_function(func, inputs, "vjp", strict)
        vs = prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp",
                       messages.FUNCTIONAL_V_NONE_OUTPUT)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, vs, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    return postprocessed_results(outputs, is_outputs_tuple, res, is_inputs_tuple, create_graph)


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        vs = prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp",
                       messages.FUNCTIONAL_V_NONE_INPUT_JVP)
        is_outputs_tuple, outputs = call_user_function(func, inputs, "jvp", strict)
        # The backward is linear in grad_outputs, so their value does not reach the result
        # (zeros: no inf or nan); they only have to require grad, to be differentiated.
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    # torch enters enable_grad only under create_graph; otherwise the caller's mode stays
    with enable_grad() if create_graph else set_grad_enabled(is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, vs, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    return postprocessed_results(outputs, is_outputs_tuple, res, is_outputs_tuple, create_graph)


def _standard_basis(tensors: tuple[Tensor, ...], numels: tuple[int, ...]) -> tuple[Tensor, ...]:
    """The N x N identity (N the total of numels) split by columns into one chunk per tensor,
    each of the tensor's dtype and device (torch: _construct_standard_basis_for)."""
    eye = np.eye(sum(numels))
    bounds = np.cumsum((0, *numels))
    return tuple(common.new(eye[:, lo:hi], t.dtype, t.device)
                 for t, lo, hi in zip(tensors, bounds[:-1], bounds[1:], strict=True))


def _jacobian_vectorized(inputs: tuple[Tensor, ...], outputs: tuple[Tensor, ...],
                         create_graph: bool) -> tuple[tuple[Tensor, ...], ...]:
    """One batched backward over the standard basis of all outputs' elements, split back
    per output and reshaped to output.shape + input.shape."""
    numels = tuple(out.numel() for out in outputs)
    grad_outputs = _standard_basis(outputs, numels)
    flat_outputs = tuple(out.reshape(-1) for out in outputs)
    vj = list(_autograd_grad(flat_outputs, inputs, grad_outputs, create_graph=create_graph,
                             is_grads_batched=True))
    full = tuple(zeros_like(inp).expand((sum(numels), *inp.shape)) if g is None else g
                 for g, inp in zip(vj, inputs, strict=True))
    per_input = [[jac.view(*out.shape, *inp.shape)
                  for jac, out in zip(views_multi_output.split(jac_i, list(numels), 0), outputs,
                                     strict=True)]
                 for jac_i, inp in zip(full, inputs, strict=True)]
    return tuple(zip(*per_input, strict=True))


def _jacobian_loop(inputs: tuple[Tensor, ...], outputs: tuple[Tensor, ...], strict: bool,
                   create_graph: bool) -> tuple[tuple[Tensor, ...], ...]:
    """One backward per output element (retain_graph), rows stacked per input."""
    jacobian: list[tuple[Tensor, ...]] = []
    for i, out in enumerate(outputs):
        rows: list[list[Tensor]] = [[] for _ in inputs]
        for j in range(out.numel()):
            vj = _autograd_grad((out.reshape(-1)[j],), inputs, retain_graph=True,
                                create_graph=create_graph)
            for el_idx, (vj_el, inp_el) in enumerate(zip(vj, inputs, strict=True)):
                if vj_el is not None:
                    if strict and create_graph and not vj_el.requires_grad:
                        # torch names the output's index here, as "input {i}"
                        raise RuntimeError(messages.strict_create_graph_jacobian(i))
                    rows[el_idx].append(vj_el)
                else:
                    if strict:
                        raise RuntimeError(messages.strict_output_independent_of_input(i, el_idx))
                    rows[el_idx].append(zeros_like(inp_el))
        jacobian.append(tuple(joining.stack(r, 0).view(*out.size(), *inputs[k].size())
                              for k, r in enumerate(rows)))
    return tuple(jacobian)


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(messages.JACOBIAN_STRATEGY)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(messages.FORWARD_MODE_CREATE_GRAPH)
        return jacobian_forward(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = call_user_function(func, inputs, "jacobian", strict)
        if vectorize:
            if strict:
                raise RuntimeError(messages.STRICT_AND_VECTORIZE)
            jac = _jacobian_vectorized(inputs, outputs, create_graph)
        else:
            jac = _jacobian_loop(inputs, outputs, strict, create_graph)
        return _tuple_postprocess(_grad_postprocess(jac, create_graph),
                                  (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(messages.HESSIAN_STRATEGY)

    def ensure_single_output_function(*inp: Tensor) -> Tensor:
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError(messages.functional_single_tensor("hessian"))
        if out.numel() != 1:
            raise RuntimeError(messages.functional_single_element("hessian"))
        return views.squeeze(out)

    def jac_func(*inp: Tensor) -> Any:
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _single_output(outputs: tuple[Tensor, ...], is_outputs_tuple: bool, fn_name: str) -> None:
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(messages.functional_single_tensor(fn_name))
    if outputs[0].numel() != 1:
        raise RuntimeError(messages.functional_single_element(fn_name))


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        vs = prepare_v(v, inputs, is_inputs_tuple, create_graph, "vhp",
                       messages.FUNCTIONAL_V_NONE_INPUT)
        is_outputs_tuple, outputs = call_user_function(func, inputs, "vhp", strict)
        _single_output(outputs, is_outputs_tuple, "vhp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, vs, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    return postprocessed_results(outputs, is_outputs_tuple, res, is_inputs_tuple, create_graph)


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        vs = prepare_v(v, inputs, is_inputs_tuple, create_graph, "hvp",
                       messages.FUNCTIONAL_V_NONE_INPUT)
        is_outputs_tuple, outputs = call_user_function(func, inputs, "hvp", strict)
        _single_output(outputs, is_outputs_tuple, "hvp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        # torch checks `jac` again here (not double_back): kept as torch has it
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, vs, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    return postprocessed_results(outputs, is_outputs_tuple, res, is_inputs_tuple, create_graph)
