"""The legacy tensor classes, `torch.FloatTensor` and its kin (torch/csrc/tensor/
python_tensor.cpp): one class per dtype of the CPU, whose instances (`isinstance`) are the
CPU tensors of that dtype, whether they require grad or not, and whose call is the legacy
constructor (torch/csrc/utils/tensor_new.cpp, legacy_tensor_generic_ctor_new):

- no argument: an empty tensor, shape (0,);
- sizes (ints, or one torch.Size): a tensor of that shape; torch's memory is uninitialised,
  zeros here (as new_empty's: a case fills it before reading it);
- one sequence of numbers: a tensor of that data, of the class's dtype.

`Tensor.type(cls)` converts to the class's dtype (its type string, as THPVariable_type reads
it from the class). A tensor or storage argument, and keywords other than `device`, are not
modelled (NotImplementedError names the form, never a silent result)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes, messages
from .factories import _finish
from .factories import tensor as _tensor
from .tensor import Size, Tensor


class TensorType(type):
    """The metaclass: torch's `torch.tensortype`."""

    dtype: dtypes.dtype

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and \
            obj.device.type == "cpu"

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:
        device = kwargs.pop("device", None)
        if kwargs or (device is not None and dtypes.device(device).type != "cpu"):
            raise NotImplementedError(messages.legacy_constructor_keywords_not_modelled(
                cls.__name__, sorted(kwargs) or ["device"]))
        if len(args) == 1 and isinstance(args[0], Size):
            args = tuple(args[0])
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            shape = args if args else (0,)
            return _finish(np.zeros(shape, cls.dtype.np), cls.dtype, dtypes.CPU, False)
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            return _tensor(args[0], dtype=cls.dtype)
        raise NotImplementedError(messages.legacy_constructor_arguments_not_modelled(
            cls.__name__, ", ".join(type(a).__name__ for a in args)))


def _make(dt: dtypes.dtype) -> TensorType:
    cls = TensorType(dt.tensor_type, (), {"__module__": "torch"})
    cls.dtype = dt
    return cls


# torch's CPU legacy classes (no complex ones: torch has none)
FloatTensor = _make(dtypes.float32)
DoubleTensor = _make(dtypes.float64)
HalfTensor = _make(dtypes.float16)
BFloat16Tensor = _make(dtypes.bfloat16)
ByteTensor = _make(dtypes.uint8)
CharTensor = _make(dtypes.int8)
ShortTensor = _make(dtypes.int16)
IntTensor = _make(dtypes.int32)
LongTensor = _make(dtypes.int64)
BoolTensor = _make(dtypes.bool_)
NAMES = ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
         "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor")
