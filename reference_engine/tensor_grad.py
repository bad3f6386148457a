"""A tensor's autograd flag and gradient slot: setting `requires_grad` (torch's refusals),
reading `.grad` (the non-leaf warning), the checks of assigning it, `grad_dtype`, the dtype a
leaf's grad must have, and `del` of these attributes (`del x.grad` is assigning None).

Plain functions, bound in Tensor's class body (tensor.py), which checks that an assigned
grad is a tensor at all. Bound directly as properties, so a warning's stack level points at
the program's line, as torch's does.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from . import messages
from .dtypes import dtype
from .grad_mode import is_inference_mode_enabled

if TYPE_CHECKING:
    from .tensor import Tensor


def set_requires_grad(self: Tensor, value: bool) -> None:
    _set_requires_grad(self, value, messages.ONLY_FLOAT_REQUIRE_GRAD_SETTER)


def requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
    # torch's requires_grad_ only refuses to turn tracking *off* on a non-leaf; turning it
    # on there is a no-op (the attribute setter refuses both).
    if not self.is_leaf and requires_grad:
        return self
    _set_requires_grad(self, requires_grad, messages.ONLY_FLOAT_REQUIRE_GRAD_METHOD)
    return self


def _set_requires_grad(self: Tensor, value: bool, dtype_message: str) -> None:
    if not self.is_leaf:
        raise RuntimeError(messages.NON_LEAF_REQUIRES_GRAD_TRUE if value
                           else messages.NON_LEAF_REQUIRES_GRAD_FALSE)
    if value and not self._dtype.is_differentiable:
        raise RuntimeError(dtype_message)
    if value and self.is_inference() and not is_inference_mode_enabled():
        raise RuntimeError(messages.INFERENCE_REQUIRES_GRAD_OUTSIDE)
    self._requires_grad = bool(value)


def grad(self: Tensor) -> Tensor | None:
    # TensorBase::grad() uses the C++ is_leaf(), which reads the grad_fn_ field (no
    # regeneration, so no error for a multi-output view whose base changed), and only
    # warns when there is no grad to return.
    if self._grad_fn is not None and not self._retains_grad and self._grad is None:
        warnings.warn(messages.NON_LEAF_GRAD_ACCESS, UserWarning, stacklevel=2)
    return self._grad


def set_grad(self: Tensor, value: Tensor | None) -> None:
    """Assign a grad (already known to be a tensor or None) after torch's checks."""
    if value is not None:
        if value is self:
            raise RuntimeError(messages.GRAD_IS_SELF)
        want = grad_dtype_target(self)
        if want is not None and value._dtype is not want:
            raise RuntimeError(messages.grad_wrong_dtype(value._dtype.cpp_name,
                                                         want.scalar_name))
        if value._device != self._device:
            raise RuntimeError(messages.grad_wrong_device(value._device.type,
                                                          self._device.type))
        if value.shape != self.shape:
            raise RuntimeError(messages.grad_wrong_size(messages.sizes(value.shape),
                                                        messages.sizes(self.shape)))
    self._grad = value


def grad_dtype_target(self: Tensor) -> dtype | None:
    """The dtype a grad must have (AccumulateGrad casts to it): the tensor's own unless
    grad_dtype was set; None: any."""
    return self._dtype if self._grad_dtype == "own" else self._grad_dtype


def grad_dtype(self: Tensor) -> dtype | None:
    if not self.is_leaf:
        raise RuntimeError(messages.GRAD_DTYPE_NON_LEAF_GET)
    return grad_dtype_target(self)


def set_grad_dtype(self: Tensor, value: dtype | None) -> None:
    # torch's setter reads .grad first (so a non-leaf warns as a .grad read does)
    grad = self.grad
    if not self.is_leaf:
        raise RuntimeError(messages.GRAD_DTYPE_NON_LEAF_SET)
    if value is not None and not isinstance(value, dtype):
        raise RuntimeError(messages.grad_dtype_type(type(value).__name__))
    if value is not None and grad is not None and grad._dtype is not value:
        raise RuntimeError(messages.grad_dtype_has_grad(value.scalar_name,
                                                        grad._dtype.cpp_name))
    self._grad_dtype = value
    node = self._accumulator() if self._accumulator is not None else None
    if node is not None:
        node.grad_dtype = value  # type: ignore[attr-defined]


# torch's refusals of `del x.<attribute>` (python_variable.cpp)
_UNDELETABLE: dict[str, str] = {"data": messages.DELETE_DATA,
                                "requires_grad": messages.DELETE_REQUIRES_GRAD,
                                "_grad_fn": messages.DELETE_GRAD_FN,
                                "_backward_hooks": messages.DELETE_BACKWARD_HOOKS}


def __delattr__(self: Tensor, name: str) -> None:
    if name == "grad":   # `del x.grad` is assigning None
        self.grad = None
    elif name in _UNDELETABLE:
        raise RuntimeError(_UNDELETABLE[name])
    else:
        object.__delattr__(self, name)


def volatile(self: Tensor) -> bool:
    """Removed from torch long ago: always False, with a warning every time it is read."""
    warnings.warn(messages.VOLATILE_REMOVED, UserWarning, stacklevel=2)
    return False
