"""SavedVariable: a tensor an op keeps for its backward, checked on every unpack.

The version recorded at save time is compared with the tensor's shared version
counter on unpack, so any in-place write in between is detected exactly as in
torch/csrc/autograd/saved_variable.cpp.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from . import messages
from .dtypes import type_string

if TYPE_CHECKING:
    from .graph import Node
    from .tensor import Tensor


def short_name(node: Node) -> str:
    # torch 2.13 prints "output 0 of Mul" for MulBackward0 (but keeps C++ names whole).
    return re.sub(r"Backward\d*$", "", node.name())


class SavedVariable:
    def __init__(self, tensor: Tensor, is_output: bool) -> None:
        if tensor.is_inference():
            raise RuntimeError(messages.INFERENCE_SAVED_FOR_BACKWARD)
        self._tensor: Tensor | None = tensor
        self._saved_version = tensor._version_counter.value
        self._output_nr = tensor._output_nr
        self._is_output = is_output
        # An output is saved as tensor_data(): a new tensor sharing its storage at save time,
        # so a later `out.data = other` does not reach the saved value (an input is saved as
        # the tensor itself, and does see it).
        self._output_data = (tensor._data, tensor._dtype, tensor._device)
        self._released = False
        self._was_leaf = tensor._grad_fn is None   # C++ is_leaf(): the grad_fn_ field

    def unpack(self, saved_for: Node, in_backward: bool = True) -> Tensor:
        """The saved tensor, checked. A saved input that lost its history to detach_() can no
        longer be used by a backward (torch still shows it through grad_fn._saved_*)."""
        if self._released or self._tensor is None:
            raise RuntimeError(messages.BACKWARD_TWICE)
        t = self._tensor
        if in_backward and not self._is_output and not self._was_leaf and t._grad_fn is None:
            raise RuntimeError(messages.SAVED_TENSOR_DETACHED)
        current = t._version_counter.value
        if current != self._saved_version:
            # An output was saved without its grad_fn (that would be a cycle), so torch names
            # the node that saved it; an input is named by its grad_fn as it is now.
            producer = saved_for if self._is_output else t.grad_fn
            where = f"output {self._output_nr} of {short_name(producer)}" if producer else None
            sizes = messages.sizes(t.shape)
            raise RuntimeError(messages.modified_by_inplace(
                f"{type_string(t.dtype, t.device)} {sizes}", where, current, self._saved_version))
        if self._is_output:
            # An output is saved without its grad_fn (that would be a reference cycle); torch
            # unpacks it as a new tensor object on every access, aliasing the output's data and
            # version counter, with the saving node restored as its grad_fn.
            from .tensor import Tensor
            out = Tensor(*self._output_data)
            out._version_counter = t._version_counter
            out._grad_fn, out._output_nr = saved_for, self._output_nr
            out._view_version = out._version_counter.value
            return out
        return t

    def release(self) -> None:
        self._tensor = None
        self._released = True
