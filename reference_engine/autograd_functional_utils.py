"""torch/autograd/functional.py's utility functions (the section of that name: _as_tuple,
_tuple_postprocess, _grad_preprocess, _grad_postprocess, _validate_v,
_check_requires_grad, _autograd_grad, _fill_in_zeros), under torch's names, with this
engine's three steps every public function takes alike (prepare_v, call_user_function,
postprocessed_results).
vjp, jvp, jacobian, hessian, vhp and hvp (autograd_functional.py) are written on them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import messages
from .autograd import grad
from .factories import zeros_like
from .tensor import Tensor

Grads = tuple[Tensor | None, ...]


def _as_tuple(inp: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple[Any, ...]]:
    """Whether `inp` was a tuple, and it as a tuple of tensors (TypeError otherwise)."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            raise TypeError(messages.functional_not_tensor(
                arg_name, fn_name, i if is_tuple else None, str(type(el))))
    return is_tuple, items


def _tuple_postprocess(res: Any, to_unpack: bool | tuple[bool, bool]) -> Any:
    """Undo _as_tuple: unwrap what the caller gave unwrapped (for a jacobian, two levels)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs: Sequence[Tensor], create_graph: bool,
                     need_graph: bool) -> tuple[Tensor, ...]:
    """Always new tensor objects (so the function's own captures of the same tensors are
    told apart, pytorch#32576): a differentiable shallow copy (`view_as`) when create_graph
    must keep the caller's history, else a detached leaf."""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph) for inp in inputs)


def _grad_postprocess(inputs: Any, create_graph: bool) -> Any:
    """Detach the results unless create_graph asked for their history (nested tuples too)."""
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v: Sequence[Tensor], other: Sequence[Tensor], is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(messages.functional_v_tuple_length(len(other), len(v)))
        raise RuntimeError(messages.FUNCTIONAL_V_SINGLE)
    for idx, (el_v, el_other) in enumerate(zip(v, other, strict=True)):
        if el_v.size() != el_other.size():
            raise RuntimeError(messages.functional_v_size(
                idx if is_other_tuple else None, str(el_other.size()), str(el_v.size())))


_REQUIRES_GRAD_MESSAGES: dict[str, Callable[[int], str]] = {
    "outputs": messages.strict_output_no_grad,
    "grad_inputs": messages.strict_grad_input_independent,
    "jacobian": messages.strict_jacobian_independent,
    "hessian": messages.strict_hessian_independent,
}


def _check_requires_grad(inputs: Sequence[Tensor | None], input_type: str, strict: bool) -> None:
    """Strict mode: every tensor present and requiring grad, else the error for its stage."""
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:  # only grad_inputs can hold None
            raise RuntimeError(messages.strict_independent_of_input(i))
        if not inp.requires_grad:
            raise RuntimeError(_REQUIRES_GRAD_MESSAGES[input_type](i))


def _autograd_grad(outputs: Sequence[Tensor | None], inputs: Sequence[Tensor],
                   grad_outputs: Sequence[Tensor | None] | None = None,
                   create_graph: bool = False, retain_graph: bool | None = None,
                   is_grads_batched: bool = False) -> Grads:
    """autograd.grad over the outputs that are tensors requiring grad (allow_unused); all
    None without calling the engine when there are none."""
    given = (None,) * len(outputs) if grad_outputs is None else tuple(grad_outputs)
    kept = [(out, g) for out, g in zip(outputs, given, strict=True)
            if out is not None and out.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return grad([o for o, _ in kept], list(inputs), [g for _, g in kept],
                allow_unused=True, create_graph=create_graph, retain_graph=retain_graph,
                is_grads_batched=is_grads_batched)


def _fill_in_zeros(grads: Grads, refs: Sequence[Tensor], strict: bool, create_graph: bool,
                   stage: str) -> tuple[Tensor, ...]:
    """None grads become zeros shaped like `refs` (strict: the error for the stage); under
    strict and create_graph a grad without history is an error too."""
    res: list[Tensor] = []
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                raise RuntimeError({
                    "back": messages.strict_independent_of_input,
                    "back_trick": messages.strict_back_trick,
                    "double_back": messages.strict_double_back,
                    "double_back_trick": messages.strict_double_back_trick,
                }[stage](i))
            grads_i = zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            raise RuntimeError(messages.strict_create_graph_hessian(i) if "double" in stage
                               else messages.strict_create_graph_jacobian(i))
        res.append(grads_i)
    return tuple(res)


def prepare_v(v: Any, refs: tuple[Tensor, ...], is_refs_tuple: bool, create_graph: bool,
              fn_name: str, none_message: str) -> tuple[Tensor, ...] | None:
    """v checked against `refs` (the inputs, or vjp's outputs); None only for one element."""
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            raise RuntimeError(none_message)
        return None
    _, vs = _as_tuple(v, "v", fn_name)
    vs = _grad_preprocess(vs, create_graph=create_graph, need_graph=False)
    _validate_v(vs, refs, is_refs_tuple)
    return vs


def call_user_function(func: Callable[..., Any], inputs: tuple[Tensor, ...], fn_name: str,
                       strict: bool) -> tuple[bool, tuple[Tensor, ...]]:
    is_outputs_tuple, outputs = _as_tuple(
        func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    return is_outputs_tuple, outputs


def postprocessed_results(outputs: tuple[Tensor, ...], is_outputs_tuple: bool,
                          res: tuple[Tensor, ...], is_res_tuple: bool,
                          create_graph: bool) -> tuple[Any, Any]:
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_res_tuple))
