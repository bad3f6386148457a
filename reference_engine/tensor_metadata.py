"""What a tensor is made of besides autograd: its shape (Size), the version counter it
shares with its views, and the methods that read its metadata and convert it to Python
values.

The methods are plain functions, bound in Tensor's class body (tensor.py); the properties
stay there (mypy reads a property only where it is written).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes, messages, tensor_print
from .grad_mode import is_grad_enabled, is_inference_mode_enabled
from .graph import Meta

if TYPE_CHECKING:
    from .tensor import Tensor


def dense(a: np.ndarray) -> bool:
    """is_non_overlapping_and_dense: the strides, sorted, step through memory one element
    after another (dims of size 0 and 1 aside, as c10's _compute_non_overlapping_and_dense
    stops at the first of them in its sorted order)."""
    expected = a.itemsize
    for stride, size in sorted((st, n) for st, n in zip(a.strides, a.shape, strict=True)
                               if n > 1):
        if stride != expected:
            return False
        expected *= size
    return True


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """c10's contiguous strides (computeStrides, empty_cpu's): row-major, with each dim of
    size 0 counted as size 1, so torch.zeros(2, 0, 3) has strides (3, 3, 1)."""
    strides: list[int] = []
    step = 1
    for n in reversed(shape):
        strides.insert(0, step)
        step *= builtins.max(n, 1)
    return tuple(strides)


def torch_empty_layout(a: np.ndarray) -> np.ndarray:
    """`a`, an array of no elements, with torch's contiguous strides where NumPy gave it its
    own: NumPy allocates every array with a dim of size 0 with zero strides, torch with
    contiguous ones. An array with other strides (a view's) is returned as it is."""
    if a.size or any(a.strides):
        return a
    strides = tuple(st * a.itemsize for st in contiguous_strides(a.shape))
    out = np.ndarray(a.shape, a.dtype, buffer=a, strides=strides)
    out.flags.writeable = a.flags.writeable
    return out


class Size(tuple[int, ...]):
    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        return math.prod(self)


class VersionCounter:
    """Shared by a tensor, its views and its detach()es: one per storage family."""

    __slots__ = ("value",)   # one per tensor made: no attribute dict
    # True while code runs below torch's ADInplaceOrView layer, where in-place writes bump
    # no version (a selective-checkpoint policy: utils/checkpoint_selective.py)
    below_inplace_or_view = False

    def __init__(self) -> None:
        self.value = 0

    def bump(self) -> None:
        if not VersionCounter.below_inplace_or_view:
            self.value += 1


class InferenceVersionCounter(VersionCounter):
    """The counter of an inference tensor (and its views and detach()es). torch's inference
    tensors track no version at all: in-place writes are only allowed inside inference mode."""

    __slots__ = ()

    def bump(self) -> None:
        if not is_inference_mode_enabled():
            raise RuntimeError(messages.INFERENCE_INPLACE_OUTSIDE)


def size(self: Tensor, dim: builtins.int | None = None) -> Any:
    return self.shape if dim is None else self.shape[dim]


def dim(self: Tensor) -> builtins.int:
    return self._data.ndim


def numel(self: Tensor) -> builtins.int:
    return int(self._data.size)


def is_floating_point(self: Tensor) -> builtins.bool:
    return self._dtype.is_floating_point


def is_complex(self: Tensor) -> builtins.bool:
    return self._dtype.is_complex


def is_conj(self: Tensor) -> builtins.bool:
    return self._is_conj


def in_format(a: np.ndarray, memory_format: Any) -> builtins.bool:
    """is_contiguous(memory_format): row-major, or for channels_last row-major over
    (N, H, W, C)."""
    if memory_format is dtypes.channels_last:
        return a.ndim == 4 and builtins.bool(np.moveaxis(a, 1, -1).flags.c_contiguous)
    return builtins.bool(a.flags.c_contiguous)


def is_contiguous(self: Tensor, memory_format: Any = None) -> builtins.bool:
    return in_format(self._data, memory_format)


def stride(self: Tensor, dim: builtins.int | None = None) -> Any:
    """Element strides, as torch reports them (0 along a dimension `expand` repeats;
    numpy views keep torch's layouts)."""
    strides = tuple(s // self._data.itemsize for s in self._data.strides)
    return strides if dim is None else strides[dim]


def is_inference(self: Tensor) -> builtins.bool:
    # Views and detach()es share their source's counter, so a view of a normal tensor
    # taken inside inference mode is normal, as in torch.
    return isinstance(self._version_counter, InferenceVersionCounter)


def _is_view(self: Tensor) -> builtins.bool:
    return self._base is not None


def _meta(self: Tensor) -> Meta:
    return Meta(tuple(self._data.shape), self._dtype, self._device)


# Whether a tensor stands for vmap's BatchedTensor (forward_ad.is_batched, put here as
# TANGENT_READER is): inside jacobian(strategy="forward-mode", vectorize=True), a tangent
# unpack_dual gives, or a tensor computed from it. Its data cannot be read: aten::item and
# aten::is_nonzero have no batching rule (LegacyBatchedFallback.cpp: they return no tensor),
# and tolist() reads a data pointer a BatchedTensorImpl has not (checked before the numel).
BATCHED_CHECK: list[Callable[[Tensor], bool]] = []
# ... and how a tensor made from such a tensor outside an op (`.data`) is marked batched too
# (forward_ad.mark_batched)
BATCHED_MARK: list[Callable[[Tensor, Any], None]] = []


def is_batched(self: Tensor) -> bool:
    return any(check(self) for check in BATCHED_CHECK)


def _refuse_batched(self: Tensor, op: str | None) -> None:
    if is_batched(self):
        raise RuntimeError(messages.NO_STORAGE_DATA_POINTER if op is None
                           else messages.vmap_no_fallback(op))


def item(self: Tensor) -> Any:
    _refuse_batched(self, "item")
    if self.numel() != 1:
        raise RuntimeError(messages.item_numel(self.numel()))
    return self._data.reshape(()).item()


def tolist(self: Tensor) -> Any:
    _refuse_batched(self, None)
    return self._data.tolist()


def numpy(self: Tensor) -> np.ndarray:
    # torch/csrc/utils/tensor_numpy.cpp tensor_to_numpy: refused for a tensor that requires
    # grad while grad mode is on (under no_grad it converts)
    if self.requires_grad and is_grad_enabled():
        raise RuntimeError(messages.NUMPY_REQUIRES_GRAD)
    if is_batched(self):   # it detaches: a view op, batched
        raise RuntimeError(messages.VMAP_DETACH)
    if self.dtype.bits != 8 * self._data.itemsize:   # bfloat16: NumPy has no such type
        raise TypeError(messages.numpy_unsupported_scalar_type(self.dtype.scalar_name))
    return np.array(self._data, copy=True)


def __len__(self: Tensor) -> builtins.int:
    if self.ndim == 0:
        raise TypeError(messages.LEN_OF_0D)
    return int(self._data.shape[0])


def __bool__(self: Tensor) -> builtins.bool:
    _refuse_batched(self, "is_nonzero")
    return bool(self.item())


def __int__(self: Tensor) -> builtins.int:
    # a complex: c10's checked_convert; a float becomes a Python int, which cannot overflow
    # (THPVariable_integral_scalar's packDoubleAsInt: an infinity is Python's OverflowError)
    value = self.item()
    return int(dtypes.scalar_in(value, dtypes.int64) if isinstance(value, complex) else value)


def __index__(self: Tensor) -> builtins.int:
    # THPVariable_index: an integral (or bool) tensor of one element, else a TypeError
    # (a tuple * a tensor, a list indexed by a float tensor)
    if self._dtype.category > 1 or self.numel() != 1:
        raise TypeError(messages.INDEX_NOT_INTEGER)
    return int(self.item())


# How a tensor's tangent is read: forward_ad.fw_grad, put here by forward_ad when it is
# first imported (it imports tensor, so importing it here would close an import circle);
# before that no tensor has a tangent.
TANGENT_READER: list[Callable[[Tensor], Tensor | None]] = []


def __repr__(self: Tensor) -> str:
    # torch/_tensor_str.py: a dual tensor shows its tangent
    tangent = next((t for read in TANGENT_READER if (t := read(self)) is not None), None)
    return tensor_print.tensor_repr(self, tangent)


def __iter__(self: Tensor) -> Any:
    return (self[i] for i in range(len(self)))
