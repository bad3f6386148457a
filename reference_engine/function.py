"""Custom autograd.Function: the user writes forward and backward; apply() runs
forward without grad and, if grad mode is on and any input requires grad, makes the
outputs share one ``<Name>Backward`` node whose apply calls the user's backward.

The output rules (an input returned as-is, one marked dirty, a view, a non-differentiable
output) follow torch/csrc/autograd/custom_function.cpp's _wrap_outputs, in
function_outputs.py. Forward mode (the user's jvp) is function_forward.py's.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import engine, forward_ad, messages
from .function_forward import forward_mode
from .function_outputs import UNDEFINED_INPUT, wrap_outputs
from .grad_mode import is_grad_enabled, no_grad
from .graph import Meta, Node, RemovableHandle, node_class
from .ops.common import new
from .saved import SavedVariable
from .tensor import Tensor


class FunctionCtx:
    """Methods available as ``ctx`` in forward/backward."""

    needs_input_grad: tuple[bool, ...]
    _saved_for_forward: tuple[Tensor | None, ...] | None = None

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        self._to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """What `jvp` reads as ctx.saved_tensors (kept only until jvp has run)."""
        self._saved_for_forward = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node *is* the ctx, as in torch (ctx is an instance of MyFnBackward)."""

    _forward_cls: type[Function]
    computes_only_wanted = False
    # engine.validate_outputs refuses a complex grad for a real input from a PyNode
    is_custom_function = True

    def __call__(self, *grads: Any) -> Any:
        # A custom Function's node is a PyNode: unlike the C++ nodes, it cannot be called.
        raise TypeError(messages.not_callable(type(self).__name__))

    def __init__(self) -> None:
        super().__init__([])
        self._to_save: tuple[Tensor | None, ...] = ()
        self._dirty: tuple[Tensor, ...] = ()
        self._non_differentiable: tuple[Tensor, ...] = ()
        self._saved: list[SavedVariable] | None = None
        self._saved_cleared = False   # clear_saved_tensors_on_access: read once already
        self._saved_for_forward = None
        self.materialize_grads = True
        self._is_tensor_input: list[bool] = []
        # Per forward output: its metadata if it is a differentiable tensor output, the
        # metadata to materialize zeros from if it is a non-differentiable tensor, or None
        # for a non-tensor output (which always receives None).
        self._output_info: list[Meta | None] = []

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        if self._saved_for_forward is not None:   # in jvp: python_function.cpp's order
            return tuple(self._saved_for_forward)
        if self._saved is None:
            return tuple(self._to_save)
        if getattr(self._forward_cls, "clear_saved_tensors_on_access", False):
            # python_function.cpp: the first read hands the tensors out and clears them
            if self._saved_cleared:
                raise RuntimeError(messages.SAVED_TENSORS_CLEARED_ON_ACCESS)
            unpacked = tuple(sv.unpack(self) for sv in self._raw_saved_tensors)
            self._saved_cleared = True
            # ... and keeps none of them: the caller's names are their only references
            # (test_clear_saved_tensors_on_access)
            self._saved = []
            return unpacked
        return tuple(sv.unpack(self) for sv in self._raw_saved_tensors)

    @property
    def _raw_saved_tensors(self) -> tuple[SavedVariable, ...]:
        """torch's SavedTensor objects (a saved None is one too); freed after backward."""
        saved = self._saved or []
        if any(sv._released for sv in saved):
            raise RuntimeError(messages.BACKWARD_TWICE)
        return tuple(saved)

    @property
    def saved_variables(self) -> tuple[Tensor | None, ...]:
        # python_function.cpp THPFunction_saved_variables: the old name, with a warning
        warnings.warn(messages.SAVED_VARIABLES_DEPRECATED, DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        # PyNode::apply: undefined grads become zeros unless set_materialize_grads(False).
        if self.materialize_grads:
            grads = [_zeros(info) if g is None and info is not None else g
                     for g, info in zip(grads, self._output_info, strict=False)]
        cls = self._forward_cls
        # torch's BackwardCFunction.apply: the user defines backward or vjp, never both
        if cls.backward is not Function.backward and cls.vjp is not Function.vjp:
            raise RuntimeError(messages.CUSTOM_FUNCTION_BACKWARD_AND_VJP)
        user_fn = cls.vjp if cls.vjp is not Function.vjp else cls.backward
        result = user_fn(self, *grads)
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
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(messages.grad_not_variable(type(g).__name__))
            out.append(g)
        return out

    def release_variables(self) -> None:
        for sv in self._saved or ():
            sv.release()


def _hook_handle(table: dict[int, Any], hook: Callable[..., Any]) -> RemovableHandle:
    handle = RemovableHandle(table)
    table[handle.id] = hook
    return handle


class Function:
    """Subclass with @staticmethod forward(ctx, *args) and backward(ctx, *grads)."""

    _backward_cls: type[BackwardCFunction]
    # torch/autograd/function.py: a subclass sets it True to have its saved tensors read
    # once and cleared
    clear_saved_tensors_on_access = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # its own class, as torch's FunctionMeta makes one per Function: two Functions of one
        # name (a case's redefinition, two tests' `MyOp`) must each keep their backward
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # torch/autograd/function.py: instantiating still works, with a warning
        warnings.warn(messages.function_instantiated(repr(self.__class__)), DeprecationWarning,
                      stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # the legacy style (an instance called on inputs) is refused
        raise RuntimeError(messages.LEGACY_FUNCTION_CALL)

    # An instance is a node without a graph (torch's Function derives from _C._FunctionBase,
    # whose cdata is then empty): no next functions, its class's name, an empty metadata dict
    @property
    def next_functions(self) -> tuple[Any, ...]:
        return ()

    def name(self) -> str:
        return type(self).__name__

    @property
    def metadata(self) -> dict[Any, Any]:
        return self.__dict__.setdefault("_metadata", {})

    def register_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        # torch 2.13 hands back a handle over the instance's own hook dict (_HookMixin's
        # _register_hook): with no graph the hook is never called
        return _hook_handle(self.__dict__.setdefault("_backward_hooks", {}), hook)

    def register_prehook(self, hook: Callable[..., Any]) -> RemovableHandle:
        return _hook_handle(self.__dict__.setdefault("_backward_pre_hooks", {}), hook)

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(messages.CUSTOM_FUNCTION_NO_FORWARD)

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(messages.CUSTOM_FUNCTION_NO_BACKWARD)

    # torch: "vjp and backward are alias of each other"; a subclass overrides one of them
    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Overridden by a Function usable in forward mode: the outputs' tangents."""
        raise NotImplementedError(messages.FWAD_CUSTOM_FUNCTION_NO_JVP)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Overridden by a Function whose forward takes no ctx (torch 2.0's style)."""
        raise NotImplementedError

    @classmethod
    def apply(cls, *args: Any) -> Any:
        if cls.setup_context is not Function.setup_context:
            # torch/autograd/function.py bind_default_args: forward's defaults become inputs
            bound = inspect.signature(cls.forward).bind(*args)
            bound.apply_defaults()
            args = bound.args
        ctx = cls._backward_cls()
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        ctx._is_tensor_input = [isinstance(a, Tensor) for a in args]
        executable = is_grad_enabled() and any(t.requires_grad for t in tensor_args)
        ctx.needs_input_grad = tuple(executable and isinstance(a, Tensor) and a.requires_grad
                                     for a in args)
        if executable:
            ctx.next_edges = [engine.gradient_edge(t) for t in tensor_args]
        # forward runs with neither backward nor forward mode (torch's AutoFwGradMode(false))
        with no_grad(), forward_ad.suspended():
            if cls.setup_context is not Function.setup_context:
                # python_function.cpp: forward(*inputs), then setup_context(ctx, inputs,
                # output) with the output as forward returned it
                outputs = cls.forward(*args)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args)
        single = not isinstance(outputs, tuple)
        outs = wrap_outputs(ctx if executable else None, ctx, tensor_args,
                             (outputs,) if single else outputs)
        # torch saves (and runs saved-tensor pack hooks) only for a node that will run
        try:
            ctx._saved = [SavedVariable(t, is_output=t is not None and any(t is o for o in outs))
                          for t in ctx._to_save] if executable else []
        except BaseException:
            # a pack hook that stops the forward (checkpoint's early stop ends a
            # recomputation so) leaves nothing held: the ctx would keep what it was to save
            ctx._to_save = ctx._dirty = ctx._non_differentiable = ()
            raise
        if forward_ad.active():
            forward_mode(cls, ctx, args, (outputs,) if single else outputs, outs)
        ctx._saved_for_forward = None
        # python_function.cpp frees to_save once saved (or not needed), and dirty_tensors
        # and non_differentiable once read ("we're not going to ever need this"): holding
        # them would keep a dirty input alive with the node (its graph's cycle)
        ctx._to_save = ctx._dirty = ctx._non_differentiable = ()
        return outs[0] if single else outs


def _zeros(meta: Meta) -> Tensor:
    return new(np.zeros(meta.shape), meta.dtype, meta.device)


class InplaceFunction(Function):
    """torch.autograd.function.InplaceFunction: a base class for Functions that may work in
    place (its instances took `inplace`); it defines no forward, so its own apply raises."""


# ---- torch.autograd.function.once_differentiable ---------------------------------------

class DelayedErrorNode(Node):
    """The node once_differentiable hangs its results on: backward through it raises."""

    def name(self) -> str:
        return "torch::autograd::Error"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        raise RuntimeError(messages.ONCE_DIFFERENTIABLE)


Error = node_class("Error", DelayedErrorNode)


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """torch/autograd/function.py: run backward without grad; if grad mode is on and an
    incoming grad requires grad, the results get an Error node so that differentiating
    them again raises."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled():
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        fakes: list[Tensor | None] = []
        for o in outs:
            if o is not None:
                o = o.detach()
                o.requires_grad = True
            fakes.append(o)
        node = Error([engine.gradient_edge(f) if f is not None else (None, 0) for f in fakes])
        results: list[Tensor | None] = []
        for i, f in enumerate(fakes):
            if f is None:
                node.input_metadata.append(UNDEFINED_INPUT)
                results.append(None)
                continue
            node.input_metadata.append(f._meta())
            out = Tensor(f._data, f.dtype, f.device)
            out._set_grad_fn(node, i)
            results.append(out)
        return results[0] if single else tuple(results)

    return wrapper
