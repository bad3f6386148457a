"""In-place changes of a tensor's size or storage: Tensor.resize_, resize_as_ and set_.

None is differentiable (torch refuses to resize a tensor that requires grad, and gives set_
on one in grad mode a NotImplemented node, which the engine does not model: it refuses).
What they do to autograd state is their point (test_resize_version_bump,
test_parameter_resize, test_grad_to_node_set): resize_ bumps the version only when the size
changes (ADInplaceOrView's resize_); set_ bumps it always and gives a leaf a new
AccumulateGrad, so a graph built before keeps the old one (torch.autograd.grad to the tensor
then finds it unused, to the gradient edge taken before still works).

A NumPy array stands for a tensor's storage: resize_ keeps a shrunk tensor's storage (a
later growth within it finds the old values, as torch's does) and grows it by a copy into a
larger one, whose new elements are zeros where torch's are uninitialised memory (a case
does not read them). Other tensors sharing the old storage (a detach(), a view) keep it,
where torch's storage object is reallocated under all of them: not modelled, nor resize_ of
a view or of a non-contiguous tensor to another size, nor set_ on a view (NotImplementedError).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import messages
from ..grad_mode import is_grad_enabled, is_inference_mode_enabled
from ..tensor import Tensor
from .basic.inplace import check_inplace


def _sizes(args: tuple[Any, ...]) -> tuple[int, ...]:
    """resize_'s `*sizes`: ints, or one sequence of ints (torch's IntArrayRef parsing)."""
    if not args:
        raise TypeError(messages.RESIZE_MISSING_SIZE)
    if len(args) == 1 and isinstance(args[0], tuple | list):
        args = tuple(args[0])
    for a in args:
        if isinstance(a, builtins.bool) or not isinstance(a, builtins.int):
            raise TypeError(messages.resize_size_type(type(a).__name__))
    if any(a < 0 for a in args):
        raise RuntimeError(messages.RESIZE_NEGATIVE)
    return tuple(args)


def _resize(self: Tensor, shape: tuple[int, ...]) -> Tensor:
    # an inference tensor outside inference mode refuses any in-place update first
    if self.is_inference() and not is_inference_mode_enabled():
        raise RuntimeError(messages.INFERENCE_INPLACE_OUTSIDE)
    # VariableTypeManual's resize_, an Autograd kernel: inference mode skips it
    if self.requires_grad and not is_inference_mode_enabled():
        raise RuntimeError(messages.RESIZE_REQUIRES_GRAD)
    if tuple(self.shape) == shape:   # no resize: no version bump
        return self
    data = self._data
    if self._base is not None or not data.flags.c_contiguous:
        raise NotImplementedError(messages.RESIZE_NOT_MODELLED)
    kept = self._resized_storage
    storage = kept[0] if kept is not None and kept[1] is data else data.reshape(-1)
    n = int(np.prod(shape, dtype=np.int64))
    if n > storage.size:
        grown = np.zeros(n, dtype=data.dtype)
        grown[:storage.size] = storage
        storage = grown
    self._data = storage[:n].reshape(shape)
    self._resized_storage = (storage, self._data)
    self._version_counter.bump()
    return self


def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    return _resize(self, _sizes(sizes))


def resize_as_(self: Tensor, the_template: Any, memory_format: Any = None) -> Tensor:
    if not isinstance(the_template, Tensor):
        raise TypeError(messages.resize_as_template_type(type(the_template).__name__))
    return _resize(self, tuple(the_template.shape))


def set_(self: Tensor, source: Any = None) -> Tensor:
    if source is None:
        source = Tensor(np.empty((0,), dtype=self._data.dtype), self._dtype, self._device)
    if not isinstance(source, Tensor):
        raise TypeError(messages.set_invalid_arguments(type(source).__name__))
    if source._dtype is not self._dtype:
        raise RuntimeError(messages.set_dtype(source._dtype.cpp_name, self._dtype.cpp_name))
    check_inplace(self, [source])
    if is_grad_enabled() and (self.requires_grad or source.requires_grad):
        raise NotImplementedError(messages.SET_GRAD_NOT_MODELLED)
    if self._base is not None:
        raise NotImplementedError(messages.SET_VIEW_NOT_MODELLED)
    self._data = source._data
    self._version_counter.bump()
    self._accumulator = None
    return self
