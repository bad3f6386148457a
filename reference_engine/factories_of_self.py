"""Tensor.new_tensor, Tensor.new_empty, torch.empty_like, Tensor.type() and type_as: the factories
and the conversion named after a tensor's options (torch/csrc/utils/tensor_new.cpp,
tensor_types.cpp, python_variable_methods.cpp THPVariable_type). Bound onto Tensor below:
tensor.py cannot import the factories."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import dtypes, messages
from .dtypes import device, dtype
from .factories import _check_input, _finish, _from_array, sized_by_name, tensor
from .legacy_tensor_types import TensorType
from .ops.basic import to_copy
from .ops.common import in_layout_of
from .tensor import Tensor
from .tensor_operators import shape_args


def new_tensor(self: Tensor, data: Any, dtype: dtype | None = None,
               device: device | str | None = None, requires_grad: bool = False) -> Tensor:
    """torch.tensor's data in self's dtype and device unless given (tensor_new.cpp
    new_tensor: internal_new_from_data without type inference, so [1, 2] of a float64 self
    is float64); a tensor given is copied, detached, with new_tensor's own warning."""
    dt, dev = dtype or self.dtype, device or self.device
    if isinstance(data, Tensor):
        warnings.warn(messages.NEW_TENSOR_COPY_CONSTRUCT_WARNING, UserWarning, stacklevel=2)
        return _from_array(data._data, dt, dev, requires_grad)
    return tensor(data, dtype=dt, device=dev, requires_grad=requires_grad)


def new_empty(self: Tensor, *size: Any, dtype: dtype | None = None,
              device: device | str | None = None, requires_grad: bool = False,
              **named: Any) -> Tensor:
    """Contiguous, of self's dtype and device unless given; its memory, uninitialised in
    torch, is zeros here (a case fills it before a snapshot reads it). The size may be
    given by name (`size=(2, 3)`), as torch's parser allows."""
    size = sized_by_name(size, named, "new_empty")
    dt = dtype or self.dtype
    return _finish(np.zeros(shape_args(size), dt.np), dt, device or self.device, requires_grad)


def empty_like(t: Tensor, dtype: dtype | None = None, device: device | str | None = None,
               requires_grad: bool = False) -> Tensor:
    """torch.empty_like: t's shape and layout (MemoryFormat::Preserve), t's dtype and device
    unless given; zeros here for torch's uninitialised memory, as new_empty."""
    _check_input("empty_like", t)
    return in_layout_of(_finish(np.zeros(t.shape, (dtype or t.dtype).np), dtype or t.dtype,
                                device or t.device, requires_grad), t)


def _type_string(dt: dtype, dev: device) -> str:
    """torch::utils::options_to_string: `torch.FloatTensor`, `torch.cuda.FloatTensor`."""
    return f"torch.{'' if dev.type == 'cpu' else dev.type + '.'}{dt.tensor_type}"


def _options_from_string(name: str) -> tuple[dtype, str]:
    """tensor_types.cpp options_from_string: `torch.Tensor` is the default dtype on the CPU;
    else one of the legacy type names, or torch's ValueError."""
    if name == "torch.Tensor":
        return dtypes.get_default_dtype(), "cpu"
    for dt in dtypes.ALL:
        for dev in ("cpu", "cuda"):
            if _type_string(dt, device(dev)) == name:
                return dt, dev
    raise ValueError(messages.invalid_tensor_type(name))


def type_(self: Tensor, dtype: Any = None, non_blocking: bool = False,
          **kwargs: Any) -> Any:
    """Tensor.type(): the type string of self's options; Tensor.type(t): self converted as
    .to() converts it (self itself when nothing changes), t a torch.dtype (self's device
    kept) or a type string (its device too: `torch.FloatTensor` is the CPU's)."""
    if dtype is None:
        return _type_string(self.dtype, self.device)
    memory_format = kwargs.get("memory_format")
    extra = {} if memory_format is None else {"memory_format": memory_format}
    if isinstance(dtype, dtypes.dtype):
        return to_copy.to(self, dtype=dtype, non_blocking=non_blocking, **extra)
    if isinstance(dtype, TensorType):  # a legacy class: its type string
        dtype = _type_string(dtype.dtype, device("cpu"))
    if not isinstance(dtype, str):
        raise TypeError(messages.TENSOR_TYPE_ARGUMENT)
    dt, dev = _options_from_string(dtype)
    target = self.device if dev == self.device.type else device(dev)
    return to_copy.to(self, device=target, dtype=dt, non_blocking=non_blocking, **extra)


def type_as(self: Tensor, other: Any) -> Tensor:
    """ATen's type_as, `self.to(other.options())`: other's dtype and device (self itself when
    neither changes; ToCopyBackward0 otherwise)."""
    if not isinstance(other, Tensor):
        raise TypeError(messages.argument_must_be_tensor("type_as", "other", 1,
                                                         type(other).__name__))
    return to_copy.to(self, dtype=other.dtype, device=other.device)


Tensor.new_tensor = new_tensor  # type: ignore[attr-defined]
Tensor.type_as = type_as  # type: ignore[attr-defined]
Tensor.new_empty = new_empty  # type: ignore[attr-defined]
Tensor.type = type_  # type: ignore[attr-defined]
