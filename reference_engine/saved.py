"""SavedVariable: a tensor an op keeps for its backward, checked on every unpack.

The version recorded at save time is compared with the tensor's shared version
counter on unpack, so any in-place write in between is detected exactly as in
torch/csrc/autograd/saved_variable.cpp.

Saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks, and register_hooks on a
grad_fn's `_raw_saved_*`) replace what is kept by whatever `pack(tensor)` returns; `unpack`
turns that back into a tensor when backward needs it. The default hooks are a stack (the
innermost `with` wins), which can be disabled with an error message
(disable_saved_tensors_hooks); torch keeps both per thread, the engine per process.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import forward_ad, messages
from .anomaly_mode import is_anomaly_enabled
from .dtypes import type_string
from .engine import gradient_edge
from .grad_mode import no_grad
from .tensor import Tensor

if TYPE_CHECKING:
    from .graph import Node

Hooks = tuple[Callable[[Any], Any], Callable[[Any], Any]]


# ---- torch._C._autograd's default hooks (SavedTensorDefaultHooks) -----------------------
_default_hooks: list[Hooks] = []
_disabled: dict[str, str | None] = {"message": None}  # None: the hooks are enabled


def push_default_hooks(pack_hook: Callable[[Any], Any],
                       unpack_hook: Callable[[Any], Any]) -> None:
    _check_enabled()
    _default_hooks.append((pack_hook, unpack_hook))


def pop_default_hooks() -> None:
    _default_hooks.pop()


def top_default_hooks(ignore_is_tracing: bool = False) -> Hooks | None:
    return _default_hooks[-1] if _default_hooks else None


def hooks_enabled() -> bool:
    return _disabled["message"] is None


def disabled_error_message() -> str | None:
    return _disabled["message"]


def disable_hooks(message: str, fail_if_non_empty: bool = True) -> None:
    # torch sets the message first, then refuses if hooks are already pushed (the
    # Python context manager's `finally` restores the previous state).
    _disabled["message"] = message
    if fail_if_non_empty and _default_hooks:
        _check_enabled()


def enable_hooks() -> None:
    _disabled["message"] = None


def _check_enabled() -> None:
    message = _disabled["message"]
    if message is not None:
        raise RuntimeError(message)


def short_name(node: Node) -> str:
    """Node::forward_op_name (function.cpp): name() without its "Backward<N>" suffix, N kept
    unless it is 0 ("output 0 of Mul" for MulBackward0, "of Prod1" for ProdBackward1); a
    C++ name (no such suffix) whole."""
    match = re.fullmatch(r"(.*)Backward(\d*)", node.name(), flags=re.S)
    if match is None:
        return node.name()
    stem, number = match.groups()
    return stem if number in ("", "0") else stem + number


class SavedVariable:
    """One saved value; its Python face is torch's SavedTensor (`grad_fn._raw_saved_*`):
    `register_hooks(pack, unpack)`, `data` and `unpack_hook`. `tensor` None is a saved None
    (a custom Function's `save_for_backward(x, None)`). `is_leaf` overrides the tensor's
    own state where the caller saves before giving the tensor its history."""

    def __init__(self, tensor: Tensor | None, is_output: bool,
                 is_leaf: bool | None = None) -> None:
        self._tensor: Tensor | None = tensor
        self._default_constructed = tensor is None
        self._view_grad_fn: weakref.ref[Node] | None = None
        self._released = False
        self._hooks: Hooks | None = None
        self._packed: Any = None
        if tensor is None:
            return
        if forward_ad.record_tangent_graph[0] and forward_ad.suspended_depth \
                and not (tensor.requires_grad or tensor._wrapped_number or tensor._zerotensor):
            # autograd_functional_vmap replays the formulas' graph after the function ran,
            # which may have written a saved primal in place since: its value now is kept
            tensor = _value_copy(tensor)
        if tensor.is_inference():
            raise RuntimeError(messages.INFERENCE_SAVED_FOR_BACKWARD)
        self._saved_version = tensor._version_counter.value
        self._output_nr = tensor._output_nr
        self._is_output = is_output
        # C++ is_leaf() reads the grad_fn_ field (a stale view's grad_fn is not regenerated)
        self._is_leaf = tensor._grad_fn is None if is_leaf is None else is_leaf
        # An input (or a leaf) is kept as the tensor itself; an output is kept as
        # tensor_data(): a new tensor sharing its storage and version counter at save time,
        # so a later `out.data = other` does not reach the saved value (an input does see it).
        self._saved_original = not is_output or self._is_leaf
        self._data: Tensor = tensor if self._saved_original else _tensor_data(tensor)
        if not self._saved_original:
            # ... and only so: holding the output itself would be the cycle output ->
            # grad_fn -> saved output, which torch's SavedVariable avoids (it keeps no
            # grad_fn for an output); the graph of a freed output is freed at once
            self._tensor = self._data
        # save_metadata keeps the tangent (at the current level) of what it does not keep
        # whole, so a backward formula run under the level sees it: forward-over-reverse
        # (a double backward of a dual) differentiates through the saved result
        self._fw = _forward_ad().saved_tangent(tensor)
        hooks = top_default_hooks()
        # torch keeps wrapped numbers (the 3 of `x * 3`) away from the hooks
        if hooks is not None and not tensor._wrapped_number:
            self._saved_original = False
            self._set_hooks_and_pack(hooks, tensor)

    def saved_in_place_on_view(self, grad_fn: Node) -> None:
        """The output of an in-place op on a view (torch's is_inplace_on_view): torch keeps a
        weak reference to the view's grad_fn after the rebase (its AsStridedBackward0, over
        the base's CopySlices) and unpacks the output under it while that node lives. It
        saves the output's tensor_data(), which does not keep the view (nor so its grad_fn)
        alive: the tensor_data alias stands in for the view here."""
        self._view_grad_fn = weakref.ref(grad_fn)
        self._tensor = self._data

    def _output_grad_fn(self, saved_for: Node | None) -> Node | None:
        fn = self._view_grad_fn() if self._view_grad_fn is not None else None
        return saved_for if fn is None else fn

    # ---- torch's SavedTensor API ----------------------------------------------------
    @property
    def data(self) -> Any:
        """The packed object when hooks are set, else the tensor kept; None once freed."""
        if self._hooks is not None:
            return self._packed
        return None if self._released or self._tensor is None else self._data

    @property
    def unpack_hook(self) -> Callable[[Any], Any] | None:
        return None if self._hooks is None else self._hooks[1]

    def __repr__(self) -> str:
        # pybind's default repr, which torch's wrong-argument message quotes
        return f"<torch._C._autograd.SavedTensor object at {id(self):#x}>"

    def register_hooks(self, *args: Any, **kwargs: Any) -> None:
        # pybind checks the arguments (two callables, arg0 and arg1) before the method
        # runs: a refused call changes nothing
        pack_hook, unpack_hook = _two_callables(self, args, kwargs)
        if self._hooks is not None:
            raise RuntimeError(messages.SAVED_HOOKS_ALREADY_SET)
        if self._released:
            raise RuntimeError(messages.SAVED_HOOKS_AFTER_FREE)
        if self._tensor is None:
            raise RuntimeError(messages.SAVED_HOOKS_ON_NONE)
        # the original tensor is handed to pack as a detached alias (same storage and
        # version counter), an output's tensor_data as it is
        self._set_hooks_and_pack((pack_hook, unpack_hook),
                                 self._data.detach() if self._saved_original else self._data)
        self._saved_original = False

    # ---- the engine's side ----------------------------------------------------------
    def _set_hooks_and_pack(self, hooks: Hooks, data: Tensor) -> None:
        """torch's set_hooks_and_pack_data: keep what pack returns (pack runs without grad)
        and what unpacking needs to rebuild the tensor's autograd identity."""
        assert self._tensor is not None
        t = self._tensor
        self._hooks = hooks
        # save_metadata: a leaf is unpacked onto its own AccumulateGrad, an input onto the
        # grad_fn it has now, an output onto the node that saves it (given at unpack)
        # (held weakly, as torch's SavedVariable holds it)
        node = gradient_edge(t)[0] if self._is_leaf else None
        self._accumulator = weakref.ref(node) if node is not None else None
        self._requires_grad = t.requires_grad if self._is_leaf else False
        self._grad_fn = t.grad_fn if not self._is_leaf and not self._is_output else None
        version = data._version_counter.value
        with no_grad():
            self._packed = hooks[0](data)
        if data._version_counter.value != version:
            raise RuntimeError(messages.PACK_HOOK_INPLACE)

    def unpack(self, saved_for: Node | None = None, in_backward: bool = True) -> Tensor | None:
        """The saved value, checked. A saved input that lost its history to detach_() can no
        longer be used by a backward (torch still shows it through grad_fn._saved_*)."""
        if self._default_constructed:
            return None
        if self._released or self._tensor is None:
            raise RuntimeError(messages.BACKWARD_TWICE)
        if self._hooks is not None:
            return self._unpack_hooked(saved_for)
        if (in_backward and not self._is_output and not self._is_leaf
                and self._tensor._grad_fn is None):
            raise RuntimeError(messages.SAVED_TENSOR_DETACHED)
        t = self._data
        current = t._version_counter.value
        if current != self._saved_version:
            # An output was saved without its grad_fn (that would be a cycle), so torch names
            # the node that saved it; an input is named by its grad_fn as it is now.
            producer = self._output_grad_fn(saved_for) if self._is_output else t.grad_fn
            where = f"output {self._output_nr} of {short_name(producer)}" if producer else None
            sizes = messages.sizes(t.shape)
            raise RuntimeError(messages.modified_by_inplace(
                f"{type_string(t.dtype, t.device)} {sizes}", where, current, self._saved_version,
                is_anomaly_enabled()))
        if self._saved_original:
            return t
        # An output is saved without its grad_fn (that would be a reference cycle); torch
        # unpacks it as a new tensor object on every access, aliasing the output's data and
        # version counter, with the saving node restored as its grad_fn.
        return _forward_ad().restore_tangent(
            _variable(t, self._output_grad_fn(saved_for), self._output_nr), self._fw)

    def _unpack_hooked(self, saved_for: Node | None) -> Tensor:
        assert self._hooks is not None
        data = self._hooks[1](self._packed)
        if not isinstance(data, Tensor):
            raise TypeError(messages.unpack_hook_not_tensor(type(data).__name__))
        # make_variable: a new tensor on the unpacked data (and its version counter, not the
        # original's), with the saved autograd identity; no version check through hooks
        if not self._is_leaf:
            return _forward_ad().restore_tangent(
                _variable(data, self._grad_fn if not self._is_output
                          else self._output_grad_fn(saved_for), self._output_nr), self._fw)
        if not self._requires_grad and not data.requires_grad and \
                _forward_ad().restore_tangent(None, self._fw) is None:
            return data   # saved_variable.cpp: "Avoid detaching if we don't need to"
        var = _variable(data, None, 0)
        var._requires_grad = self._requires_grad
        var._accumulator = self._accumulator
        return _forward_ad().restore_tangent(var, self._fw)

    def release(self) -> None:
        self._tensor = None
        self._hooks = None
        self._packed = None
        self._released = True


def _two_callables(saved: SavedVariable, args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> Hooks:
    """pybind's overload resolution of register_hooks(arg0: Callable, arg1: Callable): its
    parameters are unnamed, so only two positional callables are accepted."""
    if kwargs or len(args) != 2 or not all(callable(a) for a in args):
        raise TypeError(messages.register_hooks_incompatible(saved, args, kwargs))
    return args[0], args[1]


def _forward_ad() -> Any:
    return forward_ad


def _value_copy(t: Tensor) -> Tensor:
    """A new tensor holding t's values now (its layout, dtype, device and conj/neg bits),
    without history: clone()'s result, made here since the core does not import ops."""
    copy = Tensor(t._data.copy(order="K"), t.dtype, t.device)
    copy._is_conj, copy._is_neg = t._is_conj, t._is_neg
    return copy


def _tensor_data(t: Tensor) -> Tensor:
    """A new tensor on t's storage and version counter, without autograd history."""
    out = Tensor(t._data, t._dtype, t._device)
    out._version_counter = t._version_counter
    return out


def _variable(data: Tensor, grad_fn: Node | None, output_nr: int) -> Tensor:
    out = _tensor_data(data)
    if grad_fn is not None:
        out._grad_fn, out._output_nr = grad_fn, output_nr
        out._view_version = out._version_counter.value
    return out
