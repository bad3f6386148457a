"""clone, contiguous and to (dtype, device, memory format): copies, ToCopyBackward0 and
CloneBackward0."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import dtypes, messages, tensor_metadata
from ...autograd_meta import OpSpec, linear_forward, record
from ...dtypes import device, dtype
from ...tensor import Tensor

# ---- copying, converting -------------------------------------------------------

CLONE = OpSpec("CloneBackward0", ("self",), jvp="auto_linear")


def _real(g: Tensor) -> Tensor:
    from .complex_numbers import real
    return real(g)
TO_COPY = OpSpec("ToCopyBackward0", ("self",),
                 # _to_copy_backward: a real source takes the real part (handle_r_to_c)
                 backward=lambda c, g: [to(g if c.dtype.is_complex else _real(g), c.device,
                                           c.dtype)],
                 jvp=lambda c: to(c.self_t, c.result.device, c.result.dtype))


@linear_forward(CLONE)
def clone(self: Tensor, *, memory_format: Any = None) -> Tensor:
    # preserve_format (the default) keeps a non-overlapping and dense tensor's strides
    fmt = dtypes.preserve_format if memory_format is None else memory_format
    return record(CLONE, Tensor(_layout(self._data, fmt), self.dtype, self.device), [self])


def in_format(self: Tensor, memory_format: Any = None) -> bool:
    """Tensor.is_contiguous(memory_format=...)."""
    return tensor_metadata.in_format(self._data, memory_format)


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """self when already laid out in memory_format (row-major by default), else a clone in
    it (CloneBackward0), as torch's contiguous."""
    fmt = memory_format or dtypes.contiguous_format
    return self if in_format(self, fmt) else clone(self, memory_format=fmt)


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Tensor.to(device, dtype, non_blocking, copy, *, memory_format) and its other forms:
    self itself where nothing changes (to_will_alias), else a copy (ToCopyBackward0) in
    the memory format asked for."""
    target_device, target_dtype = self.device, self.dtype
    for a in [*args, kwargs.get("device"), kwargs.get("dtype")]:
        if isinstance(a, dtype):
            target_dtype = a
        elif isinstance(a, Tensor):
            target_device, target_dtype = a.device, a.dtype
        elif isinstance(a, str | device):
            target_device = device(a)
    flags = [a for a in args if isinstance(a, bool)]   # non_blocking, copy
    copy = kwargs.get("copy", flags[1] if len(flags) > 1 else False)
    fmt = kwargs.get("memory_format", dtypes.preserve_format)
    if target_device == self.device and target_dtype is self.dtype and not copy \
            and (fmt is dtypes.preserve_format or tensor_metadata.in_format(self._data, fmt)):
        return self
    dtypes.real_cast_warning(self.dtype, target_dtype)   # (_to_copy is a copy_)
    src = _layout(self._data, fmt)
    data = (src.real if self.dtype.is_complex and not target_dtype.is_complex else src) \
        .astype(target_dtype.np, order="K")
    out = Tensor(data, target_dtype, target_device)
    return record(TO_COPY, out, [self], device=self.device, dtype=self.dtype)




dense = tensor_metadata.dense   # (sorting and the layout contract read it here too)


def _layout(a: np.ndarray, fmt: Any) -> np.ndarray:
    """An array holding a's values in the layout of a copy in memory format fmt: preserve
    keeps a non-overlapping and dense layout (ATen's empty_strided with self's strides),
    any other layout becomes row-major; channels_last is row-major over (N, H, W, C)."""
    if fmt is dtypes.channels_last:
        if a.ndim != 4:
            raise RuntimeError(messages.CHANNELS_LAST_RANK)
        return np.moveaxis(np.array(np.moveaxis(a, 1, -1), order="C"), -1, 1)
    if fmt is dtypes.preserve_format and dense(a):
        return np.array(a, order="K")
    return np.array(a, order="C")   # (np.ascontiguousarray makes a 0-d array 1-d)


# They import this module; used at call time.
