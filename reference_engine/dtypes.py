"""dtype and device objects, type promotion, and the process-wide defaults."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import messages
from .warn import warn_once


class dtype:
    """A torch dtype: knows its numpy twin and the names torch prints for it."""

    def __init__(self, name: str, np_dtype: Any, scalar_name: str, cpp_name: str,
                 tensor_type: str, category: int, bits: int | None = None) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        # the width torch gives it; bfloat16 is held in float32 storage (bfloat16_round)
        self.bits = bits if bits is not None else 8 * self.np.itemsize
        self.scalar_name = scalar_name      # "Float", used in ATen messages
        self.cpp_name = cpp_name            # "float", caffe2 TypeMeta name
        self.tensor_type = tensor_type      # "FloatTensor", used in version errors
        # 0 bool < 1 integer < 2 floating < 3 complex (promotion order)
        self.category = category
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        # what autograd differentiates: floating point and complex dtypes
        self.is_differentiable = category >= 2

    @property
    def itemsize(self) -> int:
        return int(self.np.itemsize)

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    __str__ = __repr__


bool_ = dtype("bool", np.bool_, "Bool", "bool", "BoolTensor", 0)
uint8 = dtype("uint8", np.uint8, "Byte", "unsigned char", "ByteTensor", 1)
int8 = dtype("int8", np.int8, "Char", "signed char", "CharTensor", 1)
int16 = dtype("int16", np.int16, "Short", "short int", "ShortTensor", 1)
int32 = dtype("int32", np.int32, "Int", "int", "IntTensor", 1)
int64 = dtype("int64", np.int64, "Long", "long int", "LongTensor", 1)
float16 = dtype("float16", np.float16, "Half", "c10::Half", "HalfTensor", 2)
float32 = dtype("float32", np.float32, "Float", "float", "FloatTensor", 2)
float64 = dtype("float64", np.float64, "Double", "double", "DoubleTensor", 2)
# bfloat16, which NumPy lacks: float32 values rounded to bfloat16's 8 bits of mantissa
# (round to nearest even, c10::round_to_nearest_even) wherever a bfloat16 tensor is made or
# written, as torch's CPU kernels compute a bfloat16 result in float and round it once.
bfloat16 = dtype("bfloat16", np.float32, "BFloat16", "c10::BFloat16", "BFloat16Tensor", 2,
                 bits=16)
complex64 = dtype("complex64", np.complex64, "ComplexFloat", "c10::complex<float>",
                  "ComplexFloatTensor", 3)
complex128 = dtype("complex128", np.complex128, "ComplexDouble", "c10::complex<double>",
                   "ComplexDoubleTensor", 3)
# bfloat16 after float32, so that float32 storage maps back to float32 (from_numpy)
ALL = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64, bfloat16, complex64,
       complex128)
# a complex dtype and the real dtype of its parts (c10::toRealValueType / toComplexType)
_PARTS = {complex64: float32, complex128: float64}
_COMPLEX = {part: c for c, part in _PARTS.items()}


def to_real(d: dtype) -> dtype:
    """The dtype of a complex dtype's parts (what .real, .abs() give); others unchanged."""
    return _PARTS.get(d, d)


def to_complex(d: dtype) -> dtype:
    """The complex dtype whose parts are `d` (float32 -> complex64); complex unchanged."""
    return d if d.is_complex else _COMPLEX[d]


def get_default_complex_dtype() -> dtype:
    """complex64 under a float32 default dtype, complex128 under float64, as in torch."""
    return to_complex(get_default_dtype())


def from_numpy(np_dtype: Any) -> dtype:
    for d in ALL:
        if d.np == np.dtype(np_dtype):
            return d
    if np.dtype(np_dtype).kind == "f":
        return float32 if np.dtype(np_dtype).itemsize < 4 else float64
    if np.dtype(np_dtype).kind in "iu":
        return int64
    if np.dtype(np_dtype).kind == "c":
        return complex64 if np.dtype(np_dtype).itemsize < 16 else complex128
    raise TypeError(messages.unsupported_numpy_dtype(np_dtype))


class memory_format:
    """A memory format (torch.contiguous_format, ...): the layout a copy is made in
    (ops.basic.to_copy.to); only a label here."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class layout:
    """A tensor layout (torch.strided): the engine's tensors are all dense and strided,
    so torch.strided is the one layout, a label that Tensor.layout returns."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")


class device:
    """A device label. Computation always happens in numpy; the label only travels."""

    type: str
    index: int | None

    def __init__(self, spec: str | device, index: int | None = None) -> None:
        if isinstance(spec, device):
            self.type, self.index = spec.type, spec.index
            return
        kind, _, idx = str(spec).partition(":")
        if kind not in ("cpu", "cuda"):
            raise RuntimeError(messages.bad_device_string(spec))
        self.type = kind
        if idx:
            index = int(idx)
        # torch resolves a bare "cuda" to the current device when a tensor is placed.
        self.index = index if index is not None else (0 if kind == "cuda" else None)

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = device("cpu")

_defaults: dict[str, Any] = {"dtype": float32, "device": CPU}


def set_default_dtype(d: dtype) -> None:
    _defaults["dtype"] = d


def get_default_dtype() -> dtype:
    return _defaults["dtype"]


def set_default_device(d: device | str | None) -> None:
    _defaults["device"] = CPU if d is None else device(d)


def get_default_device() -> device:
    return _defaults["device"]


def type_string(d: dtype, dev: device) -> str:
    """'torch.FloatTensor' / 'torch.cuda.FloatTensor', as torch's toString() prints them."""
    return f"torch.cuda.{d.tensor_type}" if dev.type == "cuda" else f"torch.{d.tensor_type}"


def _wider(a: dtype, b: dtype) -> dtype:
    """c10::promoteTypes of two dtypes of one priority group."""
    if a.is_complex or b.is_complex:
        # complex wins, with the wider precision of the two (float64 + complex64 is complex128)
        parts = [to_real(d) for d in (a, b) if d.category >= 2]
        return to_complex(max(parts, key=lambda d: d.itemsize))
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.bits == b.bits and a is not b and a.is_floating_point:
        return float32   # float16 with bfloat16: neither holds the other (promoteTypes)
    if {a, b} == {uint8, int8}:
        return int16     # neither holds the other's range (promoteTypes: u1 with i1 is i2)
    return a if a.bits >= b.bits else b


def _combine(higher: dtype, lower: dtype, scalars: bool) -> dtype:
    """ATen's combine_categories: a group of lower priority (0-dim tensors, then Python
    numbers) that brings a higher category. A Python number counts as the default dtype
    of its category (int64, the default floating or complex dtype)."""
    if scalars:
        lower = {1: int64, 2: get_default_dtype(), 3: get_default_complex_dtype()
                 }.get(lower.category, lower)
    if lower.is_complex and higher.is_floating_point:
        return to_complex(higher)   # the precision of the higher-priority floats is kept
    return lower


def result_type(dims: list[dtype], zero_dims: list[dtype], scalars: list[dtype]) -> dtype:
    """torch's promotion: dimensioned tensors outrank 0-dim tensors, which outrank Python
    numbers; a lower rank only matters when it brings a higher category
    (bool<int<float<complex)."""
    result: dtype | None = None
    for group in (dims, zero_dims, scalars):
        if not group:
            continue
        best = group[0]
        for d in group[1:]:
            best = _wider(best, d)
        if result is None:
            result = best
        elif best.category > result.category:
            result = _combine(result, best, group is scalars)
    assert result is not None
    return result


def scalar_dtype(value: Any) -> dtype:
    """The dtype torch gives a wrapped Python number before promotion."""
    if isinstance(value, bool | np.bool_):
        return bool_
    if isinstance(value, int | np.integer):
        return int64
    if isinstance(value, complex | np.complexfloating):
        return complex128
    return float64


def bfloat16_round(arr: Any) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16, ties to even (c10's
    round_to_nearest_even: add 0x7FFF plus the lowest kept bit, drop the low 16 bits); NaN
    stays NaN. Returns `arr` itself when it already holds bfloat16 values, so a view keeps
    sharing its base's memory."""
    a = np.asarray(arr, dtype=np.float32)
    bits = a.view(np.uint32)
    if not np.any(bits & np.uint32(0xFFFF)):
        return a
    with np.errstate(over="ignore"):
        rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) \
            & np.uint32(0xFFFF0000)
    out = rounded.view(np.float32)
    return np.where(np.isnan(a), np.float32(np.nan), out).astype(np.float32)


def fit(arr: Any, d: dtype) -> Any:
    """`arr`'s values as dtype `d` holds them: bfloat16's rounding; others unchanged."""
    return bfloat16_round(arr) if d is bfloat16 else arr


def complex_values_into(arr: np.ndarray, np_dtype: Any, warn: bool = False) -> np.ndarray:
    """The one rule for complex values stored into a dtype that is not complex (copy_,
    _to_copy, fill_ with a tensor, torch.tensor of an array, the engine's own casts): c10's
    static_cast keeps the real part, and bool is whether the number is non-zero. Where torch
    copies (copy_impl), a destination other than bool also gets its once-per-process
    UserWarning (`warn`). Any other array is returned as it is."""
    if not np.iscomplexobj(arr) or np.issubdtype(np_dtype, np.complexfloating):
        return arr
    if np.dtype(np_dtype) == np.bool_:
        return arr != 0
    if warn:
        warn_once(messages.COMPLEX_TO_REAL_CAST, stacklevel=4)
    return arr.real


def cast(arr: np.ndarray, np_dtype: Any, warn: bool = False) -> np.ndarray:
    """arr's values as np_dtype, in arr's layout (order "K", which an array of no elements
    keeps too: NumPy would give it zero strides); like torch, out-of-range values become inf
    without a warning, and complex values follow complex_values_into (`warn`: copy_'s
    warning)."""
    arr = complex_values_into(arr, np_dtype, warn)
    if arr.size == 0:
        out_dtype = np.dtype(np_dtype)
        return np.ndarray(arr.shape, out_dtype, buffer=np.empty(0, out_dtype),
                          strides=tuple(st // arr.itemsize * out_dtype.itemsize
                                        for st in arr.strides))
    if arr.dtype == np_dtype:   # a copy without a cast: nothing can overflow
        return arr.astype(np_dtype)
    with np.errstate(all="ignore"):
        return arr.astype(np_dtype)


def _overflows(value: Any, dt: dtype) -> bool:
    """c10::overflows<T>(value) for a real number: an integer dtype holds no inf or NaN and
    nothing past its range; a floating one takes inf and NaN, and nothing finite past its
    largest value; bool takes anything."""
    if dt is bool_ or isinstance(value, bool | np.bool_):
        return False
    if dt is uint8 and isinstance(value, int | np.integer):
        return not -255 <= value <= 255   # c10 lets a negative integer wrap (-1 is 255)
    if dt.category == 1:
        info = np.iinfo(dt.np)
        return value != value or not info.min <= value <= info.max
    largest = BFLOAT16_MAX if dt is bfloat16 else float(np.finfo(to_real(dt).np).max)
    return (isinstance(value, int) or np.isfinite(value)) and abs(value) > largest


# bfloat16's largest finite value, (2 - 2^-7) * 2^127 (NumPy's float32 storage holds more)
BFLOAT16_MAX = (2 - 2 ** -7) * 2.0 ** 127


def scalar_in(value: Any, dt: dtype) -> Any:
    """c10's checked_convert of a Scalar into dt (fill_, masked_fill_, float() and int() of a
    complex tensor, ...): a value past dt's range, or a complex number with an imaginary part
    into a real dtype, is torch's overflow error (bool takes anything); a complex number
    without one is its real part."""
    name = messages.CHECKED_CONVERT_NAMES.get(dt.scalar_name)
    if isinstance(value, complex | np.complexfloating):
        if dt is bool_:
            return bool(value)
        lost = value.imag != 0 and not dt.is_complex
        if name is not None and (lost or _overflows(value.real, dt)
                                 or _overflows(value.imag, dt)):
            raise RuntimeError(messages.value_overflow(name))
        return value if dt.is_complex else value.real
    if name is not None and _overflows(value, dt):
        raise RuntimeError(messages.value_overflow(name))
    if dt is uint8 and isinstance(value, int | np.integer):
        return int(value) % 256
    return value
