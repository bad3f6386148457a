"""Tensor.to (dtype, device, memory format): self where nothing changes, else a copy,
ToCopyBackward0 (ATen's _to_copy). Apart from clone and contiguous (copying.py), which the
views are written on: to's formula takes a complex grad's real part (complex_numbers.real,
itself a view)."""

from __future__ import annotations

from typing import Any

from ... import dtypes, tensor_metadata
from ...autograd_meta import OpSpec, record
from ...dtypes import device, dtype
from ...tensor import Tensor
from .complex_numbers import real
from .copying import layout_copy


def _real(g: Tensor) -> Tensor:
    return real(g)


TO_COPY = OpSpec("ToCopyBackward0", ("self",),
                 # _to_copy_backward: a real source takes the real part (handle_r_to_c)
                 backward=lambda c, g: [to(g if c.dtype.is_complex else _real(g), c.device,
                                           c.dtype)],
                 jvp=lambda c: to(c.self_t, c.result.device, c.result.dtype))


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
    # (_to_copy is a copy_: its complex-to-real warning)
    data = dtypes.cast(layout_copy(self._data, fmt), target_dtype.np, warn=True)
    out = Tensor(data, target_dtype, target_device)
    return record(TO_COPY, out, [self], device=self.device, dtype=self.dtype)
