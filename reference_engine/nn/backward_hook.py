"""nn.Module's full backward hooks, as torch/utils/hooks.py's BackwardHook builds them.

The module's tensor inputs and its outputs each pass through BackwardHookFunction, an
identity custom Function (node BackwardHookFunctionBackward). A post hook on the outputs'
node stores the grads of the outputs; a post hook on the inputs' node then calls the user
hooks with (module, grad_input, grad_output) and may replace the grads of the inputs. A grad
that reaches the inputs' node without passing the outputs' (a double backward) calls nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .. import messages
from ..function import Function
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor


class BackwardHookFunction(Function):
    @staticmethod
    def forward(ctx: Any, *args: Tensor) -> tuple[Tensor, ...]:
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Tensor | None) -> tuple[Tensor | None, ...]:
        return grads


def _pack_with_none(indices: Sequence[int], values: Sequence[Any], size: int) -> tuple[Any, ...]:
    res: list[Any] = [None] * size
    for i, v in zip(indices, values, strict=True):
        res[i] = v
    return tuple(res)


class BackwardHook:
    def __init__(self, module: Any, user_hooks: list[Callable[..., Any]]) -> None:
        self.module, self.user_hooks = module, user_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = self.n_outputs = -1
        self.input_tensors_index: list[int] | None = None
        self.output_tensors_index: list[int] | None = None

    def _apply_on_tensors(self, fn: Callable[[Any], None], args: tuple[Any, ...]
                          ) -> tuple[tuple[Any, ...], list[int] | None]:
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in idx]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new = BackwardHookFunction.apply(*tensors)
        new = new if isinstance(new, tuple) else (new,)
        if not new:
            raise RuntimeError(messages.BACKWARD_HOOK_NO_INPUTS)
        fn(next(t.grad_fn for t in new if t.grad_fn is not None
                and t.grad_fn.name() == "BackwardHookFunctionBackward"))
        out = list(args)
        for i, t in zip(idx, new, strict=True):
            out[i] = t
        return tuple(out), idx

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        def user_hook(grad_input: Sequence[Any], _: Any) -> tuple[Any, ...] | None:
            if self.grad_outputs is None:
                return None
            assert self.input_tensors_index is not None
            res = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for hook in self.user_hooks:
                out = hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(messages.backward_hook_grad_count(len(out), len(res)))
                res = out
            self.grad_outputs = None
            return tuple(res[i] for i in self.input_tensors_index)

        res, self.input_tensors_index = self._apply_on_tensors(
            lambda node: node.register_hook(user_hook), args)
        self.n_inputs = len(args)
        return res

    def setup_output_hook(self, result: Any) -> Any:
        def output_hook(_: Any, grad_output: Sequence[Any]) -> tuple[Any, ...] | None:
            assert self.output_tensors_index is not None
            self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_output,
                                                self.n_outputs)
            local = self.grad_outputs
            if self.input_tensors_index is None:
                warnings.warn(messages.FULL_BACKWARD_HOOK_NO_INPUT_GRAD, UserWarning,
                              stacklevel=2)
                grad_inputs = _pack_with_none([], [], self.n_inputs)
                for hook in self.user_hooks:
                    res = hook(self.module, grad_inputs, self.grad_outputs)
                    if res is not None and not (isinstance(res, tuple)
                                                and all(r is None for r in res)):
                        raise RuntimeError(messages.FULL_BACKWARD_HOOK_NO_INPUT_GRAD_RESULT)
                self.grad_outputs = None
            return tuple(local[i] for i in self.output_tensors_index)

        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, self.output_tensors_index = self._apply_on_tensors(
            lambda node: node.register_hook(output_hook), args)
        self.n_outputs = len(args)
        return res if is_tuple else res[0]
