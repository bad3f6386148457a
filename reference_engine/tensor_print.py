"""How torch prints a tensor: torch/_tensor_str.py at its default print options, on the
tensor's numpy values.

One formatter per tensor (per part of a complex one) picks a mode from the nonzero finite
values: integers ("2."), fixed ("0.6370") or scientific ("1.0000e-05", when the largest is
over 1000 times the smallest, over 1e8, or the smallest under 1e-4); every element is then
padded to the widest. Over 1000 elements print summarised: three at each end of every
dimension, "..." between. Lines wrap at 80 characters, and the suffixes (device, dtype,
grad_fn or requires_grad, tangent) follow the values, each on a new line when it would pass
that width.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from . import dtypes

if TYPE_CHECKING:
    from .tensor import Tensor

PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 4, 1000, 3, 80   # torch's PRINT_OPTS defaults


class _Formatter:
    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        flat = values.reshape(-1)
        if not self.floating:
            self.max_width = max([1, *(len(f"{v}") for v in flat.tolist())])
            return
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return
        magnitude = np.abs(finite).astype(np.float64)
        smallest, largest = magnitude.min(), magnitude.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        self.sci_mode = bool(largest / smallest > 1000.0 or largest > 1.0e8
                             or smallest < 1.0e-4)
        for v in finite.tolist():
            if self.sci_mode:
                width = len(f"{v:.{PRECISION}e}")
            elif self.int_mode:   # the "." that marks a float
                width = len(f"{v:.0f}") + 1
            else:
                width = len(f"{v:.{PRECISION}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value: Any) -> str:
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRECISION}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{PRECISION}f}"
        return (self.max_width - len(text)) * " " + text


Formatters = tuple[_Formatter, _Formatter | None]


def _element(value: Any, formatters: Formatters) -> str:
    real, imag = formatters
    if imag is None:
        return real.format(value)
    imag_text = (imag.format(value.imag) + "j").lstrip()
    # a negative (or -0.) imaginary part carries its own sign
    sep = "" if imag_text[0] in "+-" else "+"
    return real.format(value.real) + sep + imag_text


def _vector(values: np.ndarray, indent: int, summarize: bool, formatters: Formatters) -> str:
    real, imag = formatters
    element_length = real.max_width + 2 + (imag.max_width + 1 if imag is not None else 0)
    per_line = max(1, math.floor((LINEWIDTH - indent) / element_length))
    if summarize and values.shape[0] > 2 * EDGEITEMS:
        data = ([_element(v, formatters) for v in values[:EDGEITEMS].tolist()] + [" ..."]
                + [_element(v, formatters) for v in values[-EDGEITEMS:].tolist()])
    else:
        data = [_element(v, formatters) for v in values.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values: np.ndarray, indent: int, summarize: bool, formatters: Formatters) -> str:
    if values.ndim == 0:
        return _element(values.item(), formatters)
    if values.ndim == 1:
        return _vector(values, indent, summarize, formatters)
    rows = range(values.shape[0])
    if summarize and values.shape[0] > 2 * EDGEITEMS:
        slices = ([_nested(values[i], indent + 1, summarize, formatters)
                   for i in rows[:EDGEITEMS]] + ["..."]
                  + [_nested(values[i], indent + 1, summarize, formatters)
                     for i in rows[-EDGEITEMS:]])
    else:
        slices = [_nested(values[i], indent + 1, summarize, formatters) for i in rows]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(values: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows, which alone choose the formatter's mode."""
    if values.ndim == 0:
        return values
    if values.shape[0] > 2 * EDGEITEMS:
        values = np.concatenate([values[:EDGEITEMS], values[-EDGEITEMS:]])
    if values.ndim == 1:
        return values
    return np.stack([_summarized(row) for row in values])


def values_text(values: np.ndarray, indent: int) -> str:
    if values.size == 0:
        return "[]"
    summarize = values.size > THRESHOLD
    shown = _summarized(values) if summarize else values
    if values.dtype.kind == "c":
        formatters: Formatters = (_Formatter(shown.real), _Formatter(shown.imag))
    else:
        formatters = (_Formatter(shown), None)
    return _nested(values, indent, summarize, formatters)


def tensor_repr(t: Tensor, tangent: Tensor | None) -> str:
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t._device.type != "cpu":
        suffixes.append(f"device='{t._device}'")
    default = dtypes.get_default_dtype()
    default_complex = dtypes.complex128 if default is dtypes.float64 else dtypes.complex64
    if t._data.size == 0:
        # numpy's habit: the shape is shown unless it is (0,); the dtype unless the default
        if t._data.ndim != 1:
            suffixes.append(f"size={tuple(t._data.shape)}")
        if t._dtype is not default:
            suffixes.append(f"dtype={t._dtype}")
    elif t._dtype not in (default, default_complex, dtypes.int64, dtypes.bool_):
        suffixes.append(f"dtype={t._dtype}")
    text = values_text(np.asarray(t._data), indent)
    try:
        grad_fn = t.grad_fn
        name = None if grad_fn is None else grad_fn.name()
    except RuntimeError:   # a view whose grad_fn may not be regenerated (torch: "Invalid")
        name = "Invalid"
    if name is not None:
        suffixes.append(f"grad_fn=<{name}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")
    return _with_suffixes(prefix + text, suffixes, indent)


def _with_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(parts) + ")"
