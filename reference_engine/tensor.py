"""Tensor: a numpy array plus the autograd state torch keeps on a Variable.

Ops live in ops/, views.py and inplace.py, a layer up; the methods here only delegate
(through dispatch.py's table), so this file reads as the list of state a tensor carries
and the rules on it. Methods that only read metadata or convert (tensor_metadata.py), keep
hooks (tensor_hooks.py), set requires_grad or the gradient slot (tensor_grad.py) or adapt a
call to an op (tensor_operators.py) are plain functions there, bound in the class body here.
"""

from __future__ import annotations

import builtins
import functools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import dispatch, dtypes, messages, tensor_storage
from . import tensor_grad as grad_slot
from . import tensor_hooks as hooks
from . import tensor_metadata as metadata
from . import tensor_operators as operators
from .dtypes import device, dtype
from .grad_mode import is_grad_enabled, is_inference_mode_enabled
from .graph import Hook, Node
from .tensor_metadata import InferenceVersionCounter, Size, VersionCounter
from .warn import warn_once

_OPERANDS = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def _operator(method: Callable[[Tensor, Any], Tensor]) -> Callable[[Tensor, Any], Tensor]:
    """torch's operator slots turn a TypeError into NotImplemented, so an operand that is
    neither a tensor nor a number (None, a str) gets Python's own error ("unsupported
    operand type(s) for +: 'Tensor' and 'NoneType'"), and == None is plain identity."""
    @functools.wraps(method)
    def operator(self: Tensor, other: Any) -> Tensor:
        if not isinstance(self, Tensor):   # a C slot's descriptor refuses another self
            raise TypeError(messages.descriptor_not_applicable(method.__name__,
                                                               type(self).__name__))
        if not isinstance(other, (Tensor, *_OPERANDS)):
            return NotImplemented
        return method(self, other)
    return operator


def _python_operator(method: Callable[[Tensor, Any], Tensor]
                     ) -> Callable[[Tensor, Any], Tensor]:
    """An operator torch/_tensor.py writes in Python (__rsub__, __rdiv__, __pow__, __rpow__,
    __rmod__): _handle_torch_function_and_wrap_type_error_to_not_implemented makes any
    TypeError NotImplemented (Tensor.__rsub__(2, 3) returns it)."""
    @functools.wraps(method)
    def operator(self: Tensor, other: Any) -> Tensor:
        if not isinstance(other, (Tensor, *_OPERANDS)):
            return NotImplemented
        try:
            return method(self, other)
        except TypeError:
            return NotImplemented
    return operator


class Tensor:
    _wrapped_number = False   # a Python number wrapped for an op; loses type promotion
    _zerotensor = False   # ATen's ZeroTensor, a missing tangent in a jvp (ops/zero_tensor.py)
    # The state every tensor starts with, as class attributes: the engine makes a tensor per
    # op, and __init__ then writes only what each tensor owns. Setting one on a tensor
    # (t._grad_fn = node) gives that tensor its own value, as any attribute assignment does.
    _requires_grad = False               # the leaf flag; non-leaves derive it from grad_fn
    _grad_fn: Node | None = None
    # a complex conj view (read conjugated) and ATen's _neg_view (read negated)
    _is_conj = False
    _is_neg = False
    _output_nr = 0
    _grad: Tensor | None = None
    _retains_grad = False
    # Tensor.grad_dtype: "own" follows the tensor's dtype; None allows any (a leaf's setting)
    _grad_dtype: Any = "own"
    # this leaf's AccumulateGrad, made on demand, held weakly (engine.gradient_edge)
    _accumulator: weakref.ref[Node] | None = None
    # resize_'s storage and the array it made _data (ops/storage.py): valid while _data is
    # still that array, so a shrunk tensor grows back into its old values, as torch's does
    _resized_storage: tuple[np.ndarray, np.ndarray] | None = None
    # View tracking: the root base, where this view's elements sit in the base
    # (flat indices, so any chain of views composes), and the version at which
    # grad_fn was last valid (an in-place write elsewhere makes it stale).
    _base: Tensor | None = None
    _view_index: np.ndarray | None = None
    _view_version = 0
    _view_differentiable = False
    # torch's CreationMeta when it is not derived from _view_differentiable: set for
    # views made in a custom Function or by a multi-output op, and inherited by views
    # of such views (ops/creation_meta.py reads it).
    _view_creation_meta: str | None = None
    # torch's view_fn, for a view whose chain changed the dtype (views_fn.py)
    _view_fn: tuple | None = None
    # Forward mode (forward_ad.py): the tangent this tensor holds, with the level it belongs
    # to; for a forward view, its forward base, its flat positions in that base, the view
    # fns that made it from that base, and the view of the base's tangent last made.
    _fw: tuple[object, Tensor] | None = None
    _fw_base: Tensor | None = None
    _fw_index: np.ndarray | None = None
    _fw_fn: Callable[[np.ndarray], np.ndarray] | None = None
    _fw_view_of: tuple[Tensor, Tensor] | None = None

    def __init__(self, data: np.ndarray, dtype: dtype, device: device) -> None:
        # bfloat16 values are float32 storage rounded here, where every result is made
        self._data = dtypes.bfloat16_round(data) if dtype is dtypes.bfloat16 else data
        if self._data.size == 0:   # torch's strides for a tensor of no elements
            self._data = metadata.torch_empty_layout(self._data)
        self._dtype = dtype
        self._device = device
        self._version_counter = (InferenceVersionCounter() if is_inference_mode_enabled()
                                 else VersionCounter())
        # A leaf's tensor hooks live on the tensor, not on its AccumulateGrad (torch reads
        # impl::hooks(variable) lazily): a replaced accumulator still runs them.
        self._leaf_hooks: dict[builtins.int, Hook] = {}
        # register_post_accumulate_grad_hook's hooks, run by AccumulateGrad (engine.py).
        self._post_accumulate_grad_hooks: dict[builtins.int, Callable[[Tensor], None]] = {}

    # ---- autograd state ----------------------------------------------------
    @property
    def grad_fn(self) -> Node | None:
        # torch's VariableHooks::grad_fn: a view whose storage changed since its grad_fn was
        # made gets a fresh one, unless its creation forbids that (inplace.py).
        base = self._base
        if base is not None and self._view_version != self._version_counter.value \
                and (self._grad_fn is not None or base.requires_grad):
            dispatch.handle_view_on_rebase(self, indirect=True)
            dispatch.regenerate_view_grad_fn(self)
        return self._grad_fn

    def _set_grad_fn(self, node: Node, output_nr: builtins.int = 0) -> None:
        old = self._grad_fn
        self._grad_fn, self._output_nr = node, output_nr
        self._view_version = self._version_counter.value
        # retain_grad follows the tensor to its new grad_fn (torch moves it too).
        if self._retains_grad and old is not None and old is not node:
            hook = old.retains_grad_hooks.pop(self._output_nr, None)
            if hook is not None:
                node.retains_grad_hooks[output_nr] = hook

    @property
    def requires_grad(self) -> builtins.bool:
        # A view also requires grad when its base does, even one made under no_grad
        # (DifferentiableViewMeta::requires_grad). It reads the grad_fn_ field, not the
        # grad_fn getter, so it never raises for a view that may not be regenerated.
        return self._requires_grad or self._grad_fn is not None or (
            self._base is not None and self._base.requires_grad)

    @requires_grad.setter
    def requires_grad(self, value: builtins.bool) -> None:
        grad_slot.set_requires_grad(self, value)

    requires_grad_ = grad_slot.requires_grad_

    @property
    def is_leaf(self) -> builtins.bool:
        return self.grad_fn is None

    @property
    def output_nr(self) -> builtins.int:
        return self._output_nr

    # ---- the gradient slot (tensor_grad.py) ----------------------------------------------
    def _set_grad(self, value: Tensor | None) -> None:
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(messages.grad_not_tensor(type(value).__name__))
        grad_slot.set_grad(self, value)

    grad = property(grad_slot.grad, _set_grad)
    _grad_dtype_target = grad_slot.grad_dtype_target
    grad_dtype = property(grad_slot.grad_dtype, grad_slot.set_grad_dtype)

    @property
    def retains_grad(self) -> builtins.bool:
        return self._retains_grad

    volatile = property(grad_slot.volatile)

    # ---- hooks (tensor_hooks.py) -------------------------------------------------------
    retain_grad = hooks.retain_grad
    register_hook = hooks.register_hook
    register_post_accumulate_grad_hook = hooks.register_post_accumulate_grad_hook

    def backward(self, gradient: Tensor | None = None, retain_graph: builtins.bool | None = None,
                 create_graph: builtins.bool = False,
                 inputs: Sequence[Tensor] | Tensor | None = None
                 ) -> None:
        dispatch.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        if metadata.is_batched(self):
            # vmap's BatchedTensor (inside jacobian(forward-mode, vectorize=True)): aten::detach
            # is a view op without a batching rule, and the fallback refuses view ops
            raise RuntimeError(messages.VMAP_DETACH)
        out = Tensor(self._data, self._dtype, self._device)
        out._version_counter = self._version_counter   # detach() aliases: same counter
        return out

    def detach_(self) -> Tensor:
        # a BatchedTensor is refused as a view is (torch 2.13's text, probed)
        if self._base is not None or metadata.is_batched(self):
            raise RuntimeError(messages.DETACH_VIEW_INPLACE)
        self._grad_fn = None
        self._requires_grad = False
        self._base, self._view_index = None, None
        self._fw, self._fw_base = None, None   # forward non-differentiable too
        return self

    __delattr__ = grad_slot.__delattr__

    @property
    def data(self) -> Tensor:
        # .data aliases the values but gets a fresh version counter: writes through it are
        # invisible to autograd's checks, exactly the hazard torch documents.
        out = Tensor(self._data, self._dtype, self._device)
        for mark in metadata.BATCHED_MARK:   # a BatchedTensor's .data is batched too
            mark(out, (self,))
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(messages.data_not_tensor(type(value).__name__))
        if self.requires_grad and not value._dtype.is_differentiable:
            raise RuntimeError(messages.DATA_NOT_FLOAT)
        # torch's VariableHooks::set_data drops the leaf's AccumulateGrad when the dtype or
        # device changes: graphs built before keep the old node (and cast grads to the old
        # dtype), graphs built after get a new one with the new metadata.
        if value._dtype is not self._dtype or value._device != self._device:
            self._accumulator = None
        self._data, self._dtype, self._device = value._data, value._dtype, value._device

    # ---- metadata ------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @property
    def dtype(self) -> dtype:
        return self._dtype

    @property
    def device(self) -> device:
        return self._device

    @property
    def layout(self) -> dtypes.layout:
        return dtypes.strided   # dense tensors only (no sparse or mkldnn layouts)

    @property
    def is_cuda(self) -> builtins.bool:
        return self._device.type == "cuda"

    @property
    def ndim(self) -> builtins.int:
        return self._data.ndim

    # ---- complex numbers (ops/basic/complex_numbers.py) ------------------------------------
    @property
    def real(self) -> Tensor:
        return dispatch.real(self)

    @property
    def imag(self) -> Tensor:
        return dispatch.imag(self)

    def _neg_view(self) -> Tensor:
        return dispatch._neg_view(self)

    @property
    def _version(self) -> builtins.int:
        if self.is_inference():
            raise RuntimeError(messages.INFERENCE_NO_VERSION)
        return self._version_counter.value

    def __float__(self) -> builtins.float:   # here: tests patch this module's warn_once
        warn_if_requires_grad(self)
        return float(dtypes.scalar_in(self.item(), dtypes.float64))

    # ---- metadata and conversion (tensor_metadata.py) ---------------------------------
    size = metadata.size
    dim = metadata.dim
    numel = metadata.numel
    is_floating_point = metadata.is_floating_point
    is_complex = metadata.is_complex
    is_conj = metadata.is_conj
    is_contiguous = metadata.is_contiguous
    stride = metadata.stride
    is_inference = metadata.is_inference
    _is_view = metadata._is_view
    storage = tensor_storage.storage
    _meta = metadata._meta
    item = metadata.item
    tolist = metadata.tolist
    numpy = metadata.numpy
    __len__ = metadata.__len__
    __bool__ = metadata.__bool__
    __int__ = metadata.__int__
    __index__ = metadata.__index__
    __repr__ = metadata.__repr__
    __iter__ = metadata.__iter__

    __hash__ = object.__hash__

    # ---- ops (tensor_operators.py) --------------------------------------------------
    # A method that is its op's forward (self first, same parameters), and its in-place
    # form, is attached from the registry by __init__.py. Bound here are only the
    # adapters: the matrix views, another argument order, varargs shapes, conversions.
    where = operators.where
    cpu = operators.cpu
    cuda = operators.cuda
    long = operators.long
    int = operators.int
    bool = operators.bool
    equal = operators.equal
    eq_ = operators.eq_
    allclose = operators.allclose
    permute = operators.permute
    view = operators.view
    reshape = operators.reshape
    view_as = operators.view_as
    expand = operators.expand
    __getitem__ = operators.__getitem__
    __setitem__ = operators.__setitem__

    T = property(operators.T)
    mT = property(operators.mT)
    mH = property(operators.mH)
    adjoint = operators.adjoint
    H = property(operators.H)

    # ---- Python operators (tensor_operators.py) ----------------------------------------
    __add__ = _operator(operators.__add__)
    __radd__ = _operator(operators.__radd__)
    __sub__ = _operator(operators.__sub__)
    __rsub__ = _python_operator(operators.__rsub__)
    __mul__ = _operator(operators.__mul__)
    __rmul__ = _operator(operators.__rmul__)
    __truediv__ = _operator(operators.__truediv__)
    __rtruediv__ = __rdiv__ = _python_operator(operators.__rtruediv__)
    __pow__ = _python_operator(operators.__pow__)
    __rpow__ = _python_operator(operators.__rpow__)
    __rmod__ = _python_operator(operators.__rmod__)

    @_operator
    def __matmul__(self, other: Tensor) -> Tensor:
        # torch's slot turns matmul's TypeError into NotImplemented: no number operand here
        if not isinstance(other, Tensor):
            return NotImplemented
        return dispatch.matmul(self, other)

    __neg__ = operators.__neg__
    __abs__ = operators.__abs__
    __iadd__ = _operator(operators.__iadd__)
    __isub__ = _operator(operators.__isub__)
    __imul__ = _operator(operators.__imul__)
    __itruediv__ = _operator(operators.__itruediv__)
    __lt__ = _operator(operators.__lt__)
    __le__ = _operator(operators.__le__)
    __gt__ = _operator(operators.__gt__)
    __ge__ = _operator(operators.__ge__)
    __eq__ = _operator(operators.__eq__)  # type: ignore[assignment]
    __ne__ = _operator(operators.__ne__)  # type: ignore[assignment]
    __invert__ = operators.__invert__
    __and__ = _operator(operators.__and__)
    __or__ = _operator(operators.__or__)


# Methods bound from tensor_*.py take a class method's names: a wrong call's TypeError
# prints "Tensor.view() got ...", and pickle finds them by module and qualified name.
for _name, _method in vars(Tensor).items():
    if getattr(_method, "__module__", "").startswith(f"{__package__}.tensor_"):
        _method.__module__, _method.__qualname__ = __name__, f"Tensor.{_name}"


def warn_if_requires_grad(t: Tensor) -> None:
    """torch's warning on converting a tensor that requires grad to a Python scalar, in grad
    mode (python_variable_methods.cpp maybe_warn_requires_grad)."""
    if t.requires_grad and is_grad_enabled():
        warn_once(messages.REQUIRES_GRAD_TO_SCALAR)


def is_tensor(obj: object) -> builtins.bool:
    return isinstance(obj, Tensor)


def is_inference(input: object) -> builtins.bool:
    """torch.is_inference(input): the method as a function, the form torch's tests use; a
    non-tensor is the arg parser's TypeError, as torch's."""
    if not isinstance(input, Tensor):
        raise TypeError(messages.argument_not_tensor("is_inference", type(input).__name__))
    return input.is_inference()

