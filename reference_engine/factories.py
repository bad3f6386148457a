"""Tensor factories. They honour the default dtype and device, like torch's."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from . import dtypes, messages, python_scalars, tensor_metadata
from .dtypes import device, dtype
from .grad_mode import no_grad
from .ops.basic import to_copy
from .ops.basic.inplace import copy_
from .ops.common import in_layout_of
from .tensor import Tensor, warn_if_requires_grad
from .tensor_operators import shape_args

_rng = {"gen": np.random.default_rng(0)}


def manual_seed(seed: int) -> None:
    _rng["gen"] = np.random.default_rng(seed)


def _finish(arr: np.ndarray, dt: dtype, dev: device | str | None, requires_grad: bool,
            order: Literal["C", "K"] = "C") -> Tensor:
    t = Tensor(np.array(arr, dtype=dt.np, order=order), dt,
               dtypes.get_default_device() if dev is None else device(dev))
    if requires_grad:
        t.requires_grad_(True) if dt.is_differentiable else _reject()
    return t


def _reject() -> None:
    raise RuntimeError(messages.ONLY_FLOAT_REQUIRE_GRAD)


def _infer_dtype(data: Any) -> dtype:
    if isinstance(data, np.ndarray | np.generic):
        return dtypes.from_numpy(data.dtype)
    flat = np.asarray(data, dtype=object).reshape(-1).tolist() if not isinstance(
        data, bool | int | float) else [data]
    if flat and all(isinstance(v, bool | np.bool_) for v in flat):
        return dtypes.bool_
    if all(isinstance(v, bool | int | np.integer) for v in flat) and flat:
        return dtypes.int64
    if any(isinstance(v, complex | np.complexfloating) for v in flat):
        return dtypes.get_default_complex_dtype()
    return dtypes.get_default_dtype()


def tensor(data: Any, dtype: dtype | None = None, device: device | str | None = None,
           requires_grad: bool = False) -> Tensor:
    if isinstance(data, Tensor):
        warnings.warn(messages.COPY_CONSTRUCT_WARNING, UserWarning, stacklevel=2)
        return _from_array(data._data, dtype or data.dtype, device or data.device,
                           requires_grad)
    if isinstance(data, np.ndarray):
        return _from_array(data, dtype or dtypes.from_numpy(data.dtype), device, requires_grad)
    elements = data
    if isinstance(data, list | tuple) and any(isinstance(v, Tensor) for v in data):
        for v in data:
            if isinstance(v, Tensor):
                warn_if_requires_grad(v)  # torch converts each element as float() does
        data = [_scalar(v) if isinstance(v, Tensor) else v for v in data]
    arr = np.asarray(data)
    dt = dtype or _infer_dtype(data)
    if not dt.is_complex:
        arr = _stored(elements, arr.shape, dt)
    return _finish(arr, dt, device, requires_grad)


def _stored(data: Any, shape: tuple[int, ...], dt: dtype) -> np.ndarray:
    """torch.tensor's elements stored one by one into dt (python_scalars.store_scalar); a
    tensor in the list is read by float() for a floating dtype (its complex overflow text),
    else by __index__ (an integer tensor of one element only)."""
    if isinstance(data, list | tuple) and any(isinstance(v, Tensor) for v in data):
        # (torch.tensor reads tensors at the top level of its list only: a 1-d list then)
        flat = [dtypes.scalar_in(_scalar(v), dtypes.float64)
                if isinstance(v, Tensor) and dt.is_floating_point else v for v in data]
    else:
        flat = np.asarray(data, dtype=object).reshape(-1).tolist()
    if not _plain(flat, dt):
        flat = [python_scalars.store_scalar(v, dt) for v in flat]
    with np.errstate(all="ignore"):   # a float past the dtype's range is inf, as in torch
        return np.array(flat, dtype=dt.np).reshape(shape)


def _plain(flat: list[Any], dt: dtype) -> bool:
    """Whether every number is already what store_scalar stores (floats for a floating
    dtype, ints in range for an integer one), the usual case, which skips its per-number
    calls."""
    if dt.is_floating_point:
        return all(type(v) is float for v in flat)
    if dt.category != 1 or not all(type(v) is int for v in flat):
        return False
    info = np.iinfo(dt.np)
    return not flat or (info.min <= min(flat) and max(flat) <= info.max)


def _from_array(a: np.ndarray, dt: dtype, dev: device | str | None,
                requires_grad: bool) -> Tensor:
    """torch.tensor of an array or a tensor (tensor_new.cpp internal_new_from_data): the
    array's strides (tensor_from_numpy), copied into dt with MemoryFormat::Preserve, which
    keeps a non-overlapping and dense layout, an empty array's strides included (NumPy's
    zeros too), and makes any other row-major; complex values follow copy_'s rule."""
    src = a if tensor_metadata.dense(a) else np.ascontiguousarray(a)
    values = dtypes.cast(src, dt.np, warn=True)
    t = _finish(values, dt, dev, requires_grad, order="K")
    if values.size == 0:
        t._data = values   # as it is: Tensor() gives zero strides contiguous ones
    return t


def _scalar(v: Tensor) -> Any:
    """A tensor inside torch.tensor's list is read as a number (tensor_new.cpp stores it as a
    scalar): one element, whatever its shape; more is Tensor.item()'s ValueError."""
    if v._data.size != 1:
        raise ValueError(messages.ONE_ELEMENT_TENSORS_ONLY)
    return v._data.reshape(()).item()


def _sized(fill: Any, size: tuple[Any, ...], dtype: dtype | None, device: device | str | None,
           requires_grad: bool) -> Tensor:
    shape = shape_args(size)
    return _finish(np.full(shape, fill), dtype or dtypes.get_default_dtype(), device,
                   requires_grad)


def zeros(*size: Any, dtype: dtype | None = None, device: device | str | None = None,
          requires_grad: bool = False) -> Tensor:
    return _sized(0, size, dtype, device, requires_grad)


def ones(*size: Any, dtype: dtype | None = None, device: device | str | None = None,
         requires_grad: bool = False) -> Tensor:
    return _sized(1, size, dtype, device, requires_grad)


def empty(*size: Any, dtype: dtype | None = None, device: device | str | None = None,
          requires_grad: bool = False) -> Tensor:
    return _sized(0, size, dtype, device, requires_grad)


def empty_strided(size: Sequence[int], stride: Sequence[int], dtype: dtype | None = None,
                  device: device | str | None = None, requires_grad: bool = False) -> Tensor:
    """A tensor of the given sizes and strides over a storage just large enough (torch's
    empty_strided; its memory, uninitialised in torch, is zeros here: a case fills it
    before it is observed)."""
    shape, strides = shape_args((size,)), tuple(int(s) for s in stride)
    dt = dtype or dtypes.get_default_dtype()
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) \
        if all(shape) else 0
    flat = np.zeros(extent, dt.np)
    arr = np.lib.stride_tricks.as_strided(
        flat, shape, tuple(s * flat.itemsize for s in strides), writeable=True)
    t = Tensor(arr, dt, dtypes.get_default_device() if device is None else dtypes.device(device))
    if requires_grad:
        t.requires_grad_(True) if dt.is_differentiable else _reject()
    return t


def full(size: Sequence[int], fill_value: Any, dtype: dtype | None = None,
         device: device | str | None = None, requires_grad: bool = False) -> Tensor:
    dt = dtype or (_infer_dtype(fill_value))
    return _finish(np.full(tuple(size), fill_value), dt, device, requires_grad)


def _check_input(function: str, t: Any) -> None:
    # torch's argument parser refuses anything but a Tensor (None included) with a TypeError.
    if not isinstance(t, Tensor):
        raise TypeError(messages.argument_not_tensor(function, type(t).__name__))


def _like(function: str, t: Tensor, fill: Any, dtype: dtype | None,
          device: device | str | None, requires_grad: bool) -> Tensor:
    _check_input(function, t)
    # MemoryFormat::Preserve, the default: torch.zeros_like(x.t()) is transposed
    return in_layout_of(_finish(np.full(t.shape, fill), dtype or t.dtype, device or t.device,
                                requires_grad), t)


def zeros_like(t: Tensor, dtype: dtype | None = None, device: device | str | None = None,
               requires_grad: bool = False) -> Tensor:
    return _like("zeros_like", t, 0, dtype, device, requires_grad)


def ones_like(t: Tensor, dtype: dtype | None = None, device: device | str | None = None,
              requires_grad: bool = False) -> Tensor:
    return _like("ones_like", t, 1, dtype, device, requires_grad)


def as_tensor(data: Any, dtype: dtype | None = None,
              device: device | str | None = None) -> Tensor:
    """torch.as_tensor: a tensor as it is when neither dtype nor device changes it (the
    same object, graph kept), else its .to(...) (ToCopyBackward0); other data as
    torch.tensor makes it."""
    if isinstance(data, Tensor):
        return to_copy.to(data, device=device, dtype=dtype)
    return tensor(data, dtype=dtype, device=device)


def full_like(t: Tensor, fill_value: Any, dtype: dtype | None = None,
              device: device | str | None = None, requires_grad: bool = False) -> Tensor:
    """torch.full_like: t's shape and layout, its dtype by default; the value through
    checked_convert (a complex number with an imaginary part into a real dtype raises)."""
    _check_input("full_like", t)
    return _like("full_like", t, dtypes.scalar_in(fill_value, dtype or t.dtype), dtype,
                 device, requires_grad)


# Tensor.new_zeros / new_ones / new_full: contiguous, of self's dtype and device unless
# given (bound onto Tensor at the end of this module: tensor.py cannot import it)
def _new_sized(self: Tensor, fill: Any, size: tuple[Any, ...], dtype: dtype | None,
               device: device | str | None, requires_grad: bool) -> Tensor:
    dt = dtype or self.dtype
    return _finish(np.full(shape_args(size), dtypes.scalar_in(fill, dt)), dt,
                   device or self.device, requires_grad)


def sized_by_name(size: tuple[Any, ...], named: dict[str, Any], function: str
                  ) -> tuple[Any, ...]:
    """`*size`, or the `size=` torch's parser also accepts (a method of `*size` cannot name
    a keyword `size` in Python); any other name is Python's TypeError, as torch's."""
    if "size" in named:
        if size:
            raise TypeError(messages.argument_given_twice(function, "size"))
        size = (named.pop("size"),)
    if not size:
        raise TypeError(messages.missing_size_argument(function))
    if named:
        raise TypeError(messages.unexpected_keyword(function, next(iter(named))))
    return size


def new_zeros(self: Tensor, *size: Any, dtype: dtype | None = None,
              device: device | str | None = None, requires_grad: bool = False,
              **named: Any) -> Tensor:
    return _new_sized(self, 0, sized_by_name(size, named, "new_zeros"), dtype, device,
                      requires_grad)


def new_ones(self: Tensor, *size: Any, dtype: dtype | None = None,
             device: device | str | None = None, requires_grad: bool = False,
             **named: Any) -> Tensor:
    return _new_sized(self, 1, sized_by_name(size, named, "new_ones"), dtype, device,
                      requires_grad)


def new_full(self: Tensor, size: Sequence[int], fill_value: Any, dtype: dtype | None = None,
             device: device | str | None = None, requires_grad: bool = False) -> Tensor:
    return _new_sized(self, fill_value, (size,), dtype, device, requires_grad)


def arange(start: float, end: float | None = None, step: float = 1, dtype: dtype | None = None,
           device: device | str | None = None, requires_grad: bool = False) -> Tensor:
    if end is None:
        start, end = 0, start
    ints = all(isinstance(v, int) for v in (start, end, step))
    dt = dtype or (dtypes.int64 if ints else dtypes.get_default_dtype())
    return _finish(np.arange(start, end, step), dt, device, requires_grad)


def linspace(start: float, end: float, steps: int, dtype: dtype | None = None,
             device: device | str | None = None, requires_grad: bool = False) -> Tensor:
    """`steps` values from start to end by ATen's CPU formula, in the result's dtype
    (float64 for an integer one): start + step * i over the first half, end - step *
    (steps - 1 - i) over the rest, so both ends are exact. ATen's vectorised loop rounds a
    block's base and each lane's offset apart, so a float value may differ from torch's by
    an ulp (within the traces' tolerance; measured: linspace(0, 1.0, steps=100))."""
    if steps < 0:
        raise RuntimeError(messages.LINSPACE_NEGATIVE_STEPS)
    dt = dtype or dtypes.get_default_dtype()
    calc = np.dtype(np.float64 if dt.np.kind in "iub" else dt.np)
    first, last = np.asarray(start, calc), np.asarray(end, calc)
    step = (last - first) / np.asarray(max(steps - 1, 1), calc)
    i = np.arange(steps).astype(calc)
    half = np.arange(steps) < steps // 2
    with np.errstate(all="ignore"):
        values = np.where(half, first + step * i,
                          last - step * (np.asarray(steps - 1, calc) - i))
    return _finish(np.asarray(values if steps != 1 else np.full(1, first)), dt, device,
                   requires_grad)


def rand(*size: Any, dtype: dtype | None = None, device: device | str | None = None,
         requires_grad: bool = False) -> Tensor:
    arr = _rng["gen"].random(shape_args(size))
    return _finish(arr, dtype or dtypes.get_default_dtype(), device, requires_grad)


def randn(*size: Any, dtype: dtype | None = None, device: device | str | None = None,
          requires_grad: bool = False) -> Tensor:
    arr = _rng["gen"].standard_normal(shape_args(size))
    return _finish(arr, dtype or dtypes.get_default_dtype(), device, requires_grad)


def rand_like(t: Tensor, dtype: dtype | None = None, device: device | str | None = None,
              requires_grad: bool = False) -> Tensor:
    _check_input("rand_like", t)
    # empty_like(t) (MemoryFormat::Preserve) filled in place: in t's layout
    return in_layout_of(rand(*t.shape, dtype=dtype or t.dtype, device=device or t.device,
                             requires_grad=requires_grad), t)


def randn_like(t: Tensor, dtype: dtype | None = None, device: device | str | None = None,
               requires_grad: bool = False) -> Tensor:
    _check_input("randn_like", t)
    return in_layout_of(randn(*t.shape, dtype=dtype or t.dtype, device=device or t.device,
                              requires_grad=requires_grad), t)


def uniform_(t: Tensor, low: float, high: float) -> Tensor:
    """In-place fill from U(low, high): used by nn init, so it bumps the version."""
    values = _rng["gen"].uniform(low, high, t.shape)
    with no_grad():
        return copy_(t, Tensor(dtypes.cast(values, t.dtype.np), t.dtype, t.device))


Tensor.new_zeros = new_zeros  # type: ignore[attr-defined]
Tensor.new_ones = new_ones  # type: ignore[attr-defined]
Tensor.new_full = new_full  # type: ignore[attr-defined]
