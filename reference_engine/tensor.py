"""Tensor: a numpy array plus the autograd state torch keeps on a Variable.

Ops live in ops/, views.py and inplace.py; the methods here only delegate, so
this file reads as the list of state a tensor carries and the rules on it.
"""

from __future__ import annotations

import builtins
import functools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import dtypes, messages
from .dtypes import device, dtype
from .grad_mode import is_grad_enabled, is_inference_mode_enabled
from .graph import Hook, Meta, Node, RemovableHandle
from .warn import warn_once


class Size(tuple[int, ...]):
    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        return math.prod(self)


class VersionCounter:
    """Shared by a tensor, its views and its detach()es: one per storage family."""

    __slots__ = ("value",)   # one per tensor made: no attribute dict

    def __init__(self) -> None:
        self.value = 0

    def bump(self) -> None:
        self.value += 1


class InferenceVersionCounter(VersionCounter):
    """The counter of an inference tensor (and its views and detach()es). torch's inference
    tensors track no version at all: in-place writes are only allowed inside inference mode."""

    __slots__ = ()

    def bump(self) -> None:
        if not is_inference_mode_enabled():
            raise RuntimeError(messages.INFERENCE_INPLACE_OUTSIDE)


_OPERANDS = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def _operator(method: Callable[[Tensor, Any], Tensor]) -> Callable[[Tensor, Any], Tensor]:
    """torch's operator slots turn a TypeError into NotImplemented, so an operand that is
    neither a tensor nor a number (None, a str) gets Python's own error ("unsupported
    operand type(s) for +: 'Tensor' and 'NoneType'"), and == None is plain identity."""
    @functools.wraps(method)
    def operator(self: Tensor, other: Any) -> Tensor:
        if not isinstance(other, (Tensor, *_OPERANDS)):
            return NotImplemented
        return method(self, other)
    return operator


class Tensor:
    _wrapped_number = False   # a Python number wrapped for an op; loses type promotion
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
    _accumulator: Node | None = None     # this leaf's AccumulateGrad, made on demand
    # View tracking: the root base, where this view's elements sit in the base
    # (flat indices, so any chain of views composes), and the version at which
    # grad_fn was last valid (an in-place write elsewhere makes it stale).
    _base: Tensor | None = None
    _view_index: np.ndarray | None = None
    _view_version = 0
    _view_differentiable = False
    # torch's CreationMeta when it is not derived from _view_differentiable: set for
    # views made in a custom Function or by a multi-output op, and inherited by views
    # of such views (inplace.creation_meta reads it).
    _view_creation_meta: str | None = None
    # Forward mode (forward_ad.py): the tangent this tensor holds, with the level it belongs
    # to; for a forward view, its forward base and its flat positions in that base, and the
    # view of the base's tangent last made.
    _fw: tuple[object, Tensor] | None = None
    _fw_base: Tensor | None = None
    _fw_index: np.ndarray | None = None
    _fw_view_of: tuple[Tensor, Tensor] | None = None

    def __init__(self, data: np.ndarray, dtype: dtype, device: device) -> None:
        self._data = data
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
            from .inplace import handle_view_on_rebase
            from .views import regenerate_view_grad_fn
            handle_view_on_rebase(self, indirect=True)
            regenerate_view_grad_fn(self)
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
        self._set_requires_grad(value, messages.ONLY_FLOAT_REQUIRE_GRAD_SETTER)

    def requires_grad_(self, requires_grad: builtins.bool = True) -> Tensor:
        # torch's requires_grad_ only refuses to turn tracking *off* on a non-leaf; turning it
        # on there is a no-op (the attribute setter refuses both).
        if not self.is_leaf and requires_grad:
            return self
        self._set_requires_grad(requires_grad, messages.ONLY_FLOAT_REQUIRE_GRAD_METHOD)
        return self

    def _set_requires_grad(self, value: builtins.bool, dtype_message: str) -> None:
        if not self.is_leaf:
            raise RuntimeError(messages.NON_LEAF_REQUIRES_GRAD_TRUE if value
                               else messages.NON_LEAF_REQUIRES_GRAD_FALSE)
        if value and not self._dtype.is_differentiable:
            raise RuntimeError(dtype_message)
        if value and self.is_inference() and not is_inference_mode_enabled():
            raise RuntimeError(messages.INFERENCE_REQUIRES_GRAD_OUTSIDE)
        self._requires_grad = bool(value)

    @property
    def is_leaf(self) -> builtins.bool:
        return self.grad_fn is None

    @property
    def output_nr(self) -> builtins.int:
        return self._output_nr

    @property
    def grad(self) -> Tensor | None:
        # TensorBase::grad() uses the C++ is_leaf(), which reads the grad_fn_ field (no
        # regeneration, so no error for a multi-output view whose base changed), and only
        # warns when there is no grad to return.
        if self._grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(messages.NON_LEAF_GRAD_ACCESS, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(messages.grad_not_tensor(type(value).__name__))
            if value is self:
                raise RuntimeError(messages.GRAD_IS_SELF)
            if value._dtype is not self._dtype:
                raise RuntimeError(messages.grad_wrong_dtype(value._dtype.cpp_name,
                                                             self._dtype.scalar_name))
            if value._device != self._device:
                raise RuntimeError(messages.grad_wrong_device(value._device.type,
                                                              self._device.type))
            if value.shape != self.shape:
                raise RuntimeError(messages.grad_wrong_size(messages.sizes(value.shape),
                                                            messages.sizes(self.shape)))
        self._grad = value

    @property
    def retains_grad(self) -> builtins.bool:
        return self._retains_grad

    @property
    def volatile(self) -> builtins.bool:
        """Removed from torch long ago: always False, with a warning every time it is read."""
        warnings.warn(messages.VOLATILE_REMOVED, UserWarning, stacklevel=2)
        return False

    def retain_grad(self) -> None:
        if not self.requires_grad:
            raise RuntimeError(messages.RETAIN_GRAD_NO_GRAD)
        if self.is_leaf or self._retains_grad:
            return
        node = self.grad_fn
        assert node is not None

        def retain(grad: Tensor) -> None:
            from .ops.copying import clone
            from .ops.elementwise import add
            self._grad = clone(grad) if self._grad is None else add(self._grad, grad)

        node.retains_grad_hooks[self._output_nr] = retain
        self._retains_grad = True

    def register_hook(self, hook: Hook) -> RemovableHandle:
        if not self.requires_grad:
            raise RuntimeError(messages.HOOK_NO_GRAD)
        node = self.grad_fn
        table = self._leaf_hooks if node is None else \
            node.tensor_pre_hooks.setdefault(self._output_nr, {})
        handle = RemovableHandle(table)
        table[handle.id] = hook
        return handle

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]
                                           ) -> RemovableHandle:
        if not self.requires_grad:
            raise RuntimeError(messages.HOOK_NO_GRAD)
        if self.grad_fn is not None:
            raise RuntimeError(messages.POST_ACCUMULATE_NON_LEAF)
        handle = RemovableHandle(self._post_accumulate_grad_hooks)
        self._post_accumulate_grad_hooks[handle.id] = hook
        return handle

    def backward(self, gradient: Tensor | None = None, retain_graph: builtins.bool | None = None,
                 create_graph: builtins.bool = False,
                 inputs: Sequence[Tensor] | Tensor | None = None
                 ) -> None:
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        out = Tensor(self._data, self._dtype, self._device)
        out._version_counter = self._version_counter   # detach() aliases: same counter
        return out

    def detach_(self) -> Tensor:
        if self._base is not None:
            raise RuntimeError(messages.DETACH_VIEW_INPLACE)
        self._grad_fn = None
        self._requires_grad = False
        self._base, self._view_index = None, None
        self._fw, self._fw_base = None, None   # forward non-differentiable too
        return self

    @property
    def data(self) -> Tensor:
        # .data aliases the values but gets a fresh version counter: writes through it are
        # invisible to autograd's checks, exactly the hazard torch documents.
        return Tensor(self._data, self._dtype, self._device)

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

    def size(self, dim: builtins.int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    @property
    def dtype(self) -> dtype:
        return self._dtype

    @property
    def device(self) -> device:
        return self._device

    @property
    def is_cuda(self) -> builtins.bool:
        return self._device.type == "cuda"

    @property
    def ndim(self) -> builtins.int:
        return self._data.ndim

    def dim(self) -> builtins.int:
        return self._data.ndim

    def numel(self) -> builtins.int:
        return int(self._data.size)

    def is_floating_point(self) -> builtins.bool:
        return self._dtype.is_floating_point

    # ---- complex numbers (ops/complex_numbers.py) ------------------------------------
    def is_complex(self) -> builtins.bool:
        return self._dtype.is_complex

    def is_conj(self) -> builtins.bool:
        return self._is_conj

    @property
    def real(self) -> Tensor:
        return complex_numbers.real(self)

    @property
    def imag(self) -> Tensor:
        return complex_numbers.imag(self)

    def is_contiguous(self) -> builtins.bool:
        return bool(self._data.flags.c_contiguous)

    def stride(self, dim: builtins.int | None = None) -> Any:
        """Element strides, as torch reports them (0 along a dimension `expand` repeats;
        numpy views keep torch's layouts)."""
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[dim]

    @property
    def _version(self) -> builtins.int:
        if self.is_inference():
            raise RuntimeError(messages.INFERENCE_NO_VERSION)
        return self._version_counter.value

    def is_inference(self) -> builtins.bool:
        # Views and detach()es share their source's counter, so a view of a normal tensor
        # taken inside inference mode is normal, as in torch.
        return isinstance(self._version_counter, InferenceVersionCounter)

    def _is_view(self) -> builtins.bool:
        return self._base is not None

    def _meta(self) -> Meta:
        return Meta(tuple(self._data.shape), self._dtype, self._device)

    # ---- conversion ----------------------------------------------------------
    def item(self) -> Any:
        if self.numel() != 1:
            raise RuntimeError(messages.item_numel(self.numel()))
        return self._data.reshape(()).item()

    def tolist(self) -> Any:
        return self._data.tolist()

    def numpy(self) -> np.ndarray:
        return np.array(self._data, copy=True)

    def __len__(self) -> builtins.int:
        if self.ndim == 0:
            raise TypeError(messages.LEN_OF_0D)
        return int(self._data.shape[0])

    def __bool__(self) -> builtins.bool:
        return bool(self.item())

    def __float__(self) -> builtins.float:
        warn_if_requires_grad(self)
        return float(self.item())

    def __int__(self) -> builtins.int:
        return int(self.item())

    def __index__(self) -> builtins.int:
        # THPVariable_index: an integral (or bool) tensor of one element, else a TypeError
        # (a tuple * a tensor, a list indexed by a float tensor)
        if self._dtype.category > 1 or self.numel() != 1:
            raise TypeError(messages.INDEX_NOT_INTEGER)
        return int(self.item())

    def __repr__(self) -> str:
        body = np.array2string(np.asarray(self._data), separator=", ", precision=4)
        extras = []
        if self._device.type != "cpu":
            extras.append(f"device='{self._device}'")
        if self._dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
            extras.append(f"dtype={self._dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return f"tensor({', '.join([body, *extras])})"

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    __hash__ = object.__hash__

    # ---- ops --------------------------------------------------------------------
    # A method that is its op's forward (self first, same parameters), and its in-place
    # form, is attached from the registry by __init__.py. Written here are only the
    # adapters: another argument order, varargs shapes, conversions.
    def where(self, condition: Tensor, other: Any) -> Tensor:
        return comparisons.where(condition, self, other)

    def cpu(self) -> Tensor:
        if self._device == dtypes.CPU:
            return self  # what copying.to returns for a tensor already there, without parsing
        return copying.to(self, device("cpu"))

    def cuda(self) -> Tensor:
        return copying.to(self, device("cuda"))

    def long(self) -> Tensor:
        return copying.to(self, dtypes.int64)

    def int(self) -> Tensor:
        return copying.to(self, dtypes.int32)

    def bool(self) -> Tensor:
        return copying.to(self, dtypes.bool_)

    def equal(self, other: Tensor) -> builtins.bool:
        return comparisons.equal(self, other)

    def allclose(self, other: Tensor, rtol: builtins.float = 1e-05,
                 atol: builtins.float = 1e-08) -> builtins.bool:
        return comparisons.allclose(self, other, rtol, atol)

    @property
    def T(self) -> Tensor:
        if self.ndim == 0:
            warn_once(messages.NUMPY_T_0D)
        elif self.ndim != 2:
            warn_once(messages.NUMPY_T_NOT_MATRIX)
        return views.permute(self, tuple(reversed(range(self.ndim))))

    @property
    def mT(self) -> Tensor:
        if self.ndim < 2:
            raise RuntimeError(messages.matrix_property("mT", self.ndim))
        return views.transpose(self, -2, -1)

    @property
    def mH(self) -> Tensor:
        """The adjoint of a real tensor is its transpose (the engine has no complex dtype)."""
        if self.ndim < 2:
            raise RuntimeError(messages.matrix_property("mH", self.ndim))
        return views.transpose(self, -2, -1)

    @property
    def H(self) -> Tensor:
        if self.ndim != 2:
            raise RuntimeError(messages.h_not_matrix(self.ndim))
        return views.transpose(self, 0, 1)

    def permute(self, *dims: Any) -> Tensor:
        return views.permute(self, _shape_args(dims))

    def view(self, *shape: Any) -> Tensor:
        return views.view(self, _shape_args(shape))

    def reshape(self, *shape: Any) -> Tensor:
        return views.reshape(self, _shape_args(shape))

    def view_as(self, other: Tensor) -> Tensor:
        return views.view(self, tuple(other.shape))

    def expand(self, *sizes: Any) -> Tensor:
        return views.expand(self, _shape_args(sizes))

    def __getitem__(self, index: Any) -> Tensor:
        return views_indexing.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        inplace_ops.setitem(self, index, value)

    # ---- Python operators -----------------------------------------------------
    @_operator
    def __add__(self, other: Any) -> Tensor:
        return ops.add(self, other)

    @_operator
    def __radd__(self, other: Any) -> Tensor:
        return ops.add(self, other)

    @_operator
    def __sub__(self, other: Any) -> Tensor:
        return ops.sub(self, other)

    @_operator
    def __rsub__(self, other: Any) -> Tensor:
        return ops.rsub(self, other)

    @_operator
    def __mul__(self, other: Any) -> Tensor:
        return ops.mul(self, other)

    @_operator
    def __rmul__(self, other: Any) -> Tensor:
        return ops.mul(self, other)

    @_operator
    def __truediv__(self, other: Any) -> Tensor:
        return ops.div(self, other)

    @_operator
    def __rtruediv__(self, other: Any) -> Tensor:
        # torch computes scalar / x as reciprocal(x) * scalar (ReciprocalBackward0, MulBackward0)
        return ops.mul(ops.reciprocal(self), other)

    @_operator
    def __pow__(self, exponent: Any) -> Tensor:
        return ops.pow(self, exponent)

    @_operator
    def __rpow__(self, base: Any) -> Tensor:
        return ops.pow(base, self)

    @_operator
    def __matmul__(self, other: Tensor) -> Tensor:
        # torch's slot turns matmul's TypeError into NotImplemented: no number operand here
        if not isinstance(other, Tensor):
            return NotImplemented
        return linalg.matmul(self, other)

    def __neg__(self) -> Tensor:
        return ops.neg(self)

    def __abs__(self) -> Tensor:
        return ops.abs(self)

    @_operator
    def __iadd__(self, other: Any) -> Tensor:
        return inplace_ops.add_(self, other, 1)

    @_operator
    def __isub__(self, other: Any) -> Tensor:
        return inplace_ops.sub_(self, other, 1)

    @_operator
    def __imul__(self, other: Any) -> Tensor:
        return inplace_ops.mul_(self, other)

    @_operator
    def __itruediv__(self, other: Any) -> Tensor:
        return inplace_ops.div_(self, other)

    @_operator
    def __lt__(self, other: Any) -> Tensor:
        return comparisons.compare(self, other, np.less)

    @_operator
    def __le__(self, other: Any) -> Tensor:
        return comparisons.compare(self, other, np.less_equal)

    @_operator
    def __gt__(self, other: Any) -> Tensor:
        return comparisons.compare(self, other, np.greater)

    @_operator
    def __ge__(self, other: Any) -> Tensor:
        return comparisons.compare(self, other, np.greater_equal)

    @_operator
    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return comparisons.compare(self, other, np.equal)

    @_operator
    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return comparisons.compare(self, other, np.not_equal)

    def __invert__(self) -> Tensor:
        return comparisons.logical_not(self)

    @_operator
    def __and__(self, other: Any) -> Tensor:
        return comparisons.compare(self, other, np.logical_and)

    @_operator
    def __or__(self, other: Any) -> Tensor:
        return comparisons.compare(self, other, np.logical_or)


def _shape_args(args: tuple[Any, ...]) -> tuple[int, ...]:
    """Accept both f(2, 3) and f((2, 3)) like torch."""
    if len(args) == 1 and isinstance(args[0], tuple | list):
        return tuple(int(a) for a in args[0])
    return tuple(int(a) for a in args)


def warn_if_requires_grad(t: Tensor) -> None:
    """torch's warning on converting a tensor that requires grad to a Python scalar, in grad
    mode (python_variable_methods.cpp maybe_warn_requires_grad)."""
    if t.requires_grad and is_grad_enabled():
        warn_once(messages.REQUIRES_GRAD_TO_SCALAR)


def is_tensor(obj: object) -> builtins.bool:
    return isinstance(obj, Tensor)


HookFn = Callable[[Tensor], Tensor | None]

# Imported last: these modules import Tensor from here, and Tensor's methods only
# need them at call time.
from . import inplace_ops, views, views_indexing  # noqa: E402
from .ops import comparisons, complex_numbers, copying, linalg  # noqa: E402
from .ops import elementwise as ops  # noqa: E402

