"""Custom autograd.Function: the user writes forward and backward; apply() runs
forward without grad and, if any input requires grad, makes the outputs share one
``<Name>Backward`` node whose apply calls the user's backward."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import engine, messages
from .grad_mode import is_grad_enabled, no_grad
from .graph import Meta, Node, node_class
from .inplace import check_inplace
from .saved import SavedVariable
from .tensor import Tensor


class FunctionCtx:
    """Methods available as ``ctx`` in forward/backward."""

    needs_input_grad: tuple[bool, ...]

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        self._to_save = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node *is* the ctx, as in torch (ctx is an instance of MyFnBackward)."""

    _forward_cls: type[Function]

    def __init__(self) -> None:
        super().__init__([])
        self._to_save: tuple[Tensor | None, ...] = ()
        self._dirty: tuple[Tensor, ...] = ()
        self._non_differentiable: tuple[Tensor, ...] = ()
        self._saved: list[SavedVariable | None] | None = None
        self.materialize_grads = True
        self._is_tensor_input: list[bool] = []

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        if self._saved is None:
            return tuple(self._to_save)
        return tuple(None if sv is None else sv.unpack(self) for sv in self._saved)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        if self.materialize_grads:
            grads = [_zeros(self.input_metadata[i]) if g is None else g
                     for i, g in enumerate(grads)]
        result = self._forward_cls.backward(self, *grads)
        result = result if isinstance(result, tuple) else (result,)
        expected = len(self._is_tensor_input)
        if len(result) > expected and all(r is None for r in result[expected:]):
            result = result[:expected]
        if len(result) != expected:
            raise RuntimeError(messages.wrong_grad_count(self.name(), expected, len(result)))
        out: list[Tensor | None] = []
        for i, (is_tensor, g) in enumerate(zip(self._is_tensor_input, result, strict=False)):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(messages.grad_for_non_tensor(self.name(), i))
                continue
            out.append(g)
        return out

    def release_variables(self) -> None:
        for sv in self._saved or ():
            if sv is not None:
                sv.release()


class Function:
    """Subclass with @staticmethod forward(ctx, *args) and backward(ctx, *grads)."""

    _backward_cls: type[BackwardCFunction]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._backward_cls = node_class(f"{cls.__name__}Backward", BackwardCFunction)
        cls._backward_cls._forward_cls = cls

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def apply(cls, *args: Any) -> Any:
        ctx = cls._backward_cls()
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        ctx._is_tensor_input = [isinstance(a, Tensor) for a in args]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        track = is_grad_enabled() and any(t.requires_grad for t in tensor_args)
        edges = [engine.gradient_edge(t) for t in tensor_args] if track else []
        with no_grad():
            outputs = cls.forward(ctx, *args)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        if track:
            ctx.next_edges = edges
            outs = tuple(_attach(ctx, o, i, tensor_args) if isinstance(o, Tensor) else o
                         for i, o in enumerate(outs))
        ctx._saved = [None if t is None else SavedVariable(t, is_output=any(t is o for o in outs))
                      for t in ctx._to_save]
        return outs[0] if single else outs


def _attach(ctx: BackwardCFunction, out: Tensor, i: int, inputs: list[Tensor]) -> Tensor:
    ctx.input_metadata.append(out._meta())
    if any(out is t for t in ctx._non_differentiable):
        return out
    if any(out is t for t in ctx._dirty):
        check_inplace(out)
        out._set_grad_fn(ctx, i)
        return out
    if any(out is t for t in inputs):
        out = out.detach()   # an input returned as-is becomes a fresh alias with the new history
    out._set_grad_fn(ctx, i)
    return out


def _zeros(meta: Meta) -> Tensor:
    from .ops import new
    return new(np.zeros(meta.shape), meta.dtype, meta.device)
