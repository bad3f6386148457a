"""How a view is made (torch's as_view, VariableTypeUtils.h): its base, version counter and
flat positions in its root base, its creation meta, its forward view (a tangent read as the
same view of the base's tangent) and its record in the graph. The view ops (views.py and
the families above) are written on make_view.

A view remembers where its elements sit in its root base as flat indices (``_view_index``,
made from `flat_positions`): views.py's docstring says what that one array serves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ... import forward_ad, views_fn
from ...autograd_meta import OpSpec
from ...autograd_meta import record as _record
from ...grad_mode import is_grad_enabled
from ...tensor import Tensor
from .. import creation_meta

ViewFn = Callable[[np.ndarray], np.ndarray]


def make_view(src: Tensor, fn: ViewFn, spec: OpSpec, forward_view: bool = True,
              **attrs: Any) -> Tensor:
    """A view of src through fn; a `forward_view` (every view op's) reads its tangent as the
    same view of its forward base's tangent (forward_ad.py)."""
    if src.is_inference():
        return inference_alias(src, fn)
    base = src._base if src._base is not None else src
    arr = fn(src._data)
    out = Tensor(arr, src.dtype, src.device)
    if arr.size == 0:   # a view's strides are its view fn's (an expand's zeros too), not the
        out._data = arr   # contiguous ones Tensor() gives an array of NumPy's zero strides
    # a view of a conj (neg) view reads conjugated (negated) too, as in torch
    out._is_conj, out._is_neg = src._is_conj, src._is_neg
    out._base = base
    out._version_counter = base._version_counter
    parent = src._view_index if src._view_index is not None else flat_positions(base)
    # (a complex view of a real root holds every other position: a strided array, which
    # the view fns of as_strided read as laid out contiguously; an expanded index, with a
    # zero stride, is never made contiguous: that would materialise the expansion)
    dense = parent.flags.c_contiguous or 0 in parent.strides
    out._view_index = fn(parent if dense else np.ascontiguousarray(parent))
    out._view_fn = views_fn.for_plain_view(src, out)
    out._view_version = base._version_counter.value
    out._view_differentiable = is_grad_enabled()
    if src._base is not None and is_grad_enabled():   # torch's propagate_creation_meta
        out._view_creation_meta = creation_meta.creation_meta(src)
    out._view_creation_meta = creation_meta.inference_mode_meta(src, out._view_creation_meta)
    if forward_view:
        set_forward_view(out, src, fn)
    return _record(spec, out, [src], **attrs)


def set_forward_view(out: Tensor, src: Tensor, fn: ViewFn) -> None:
    """Make out, fn's view of src, a forward view: its tangent is read from its forward base
    (forward_ad.fw_grad) at its positions there."""
    parent = src._fw_index if src._fw_base is not None else None
    out._fw_base = src._fw_base if src._fw_base is not None else src
    out._fw_index = fn(parent if parent is not None else flat_positions(src))
    out._fw_fn = then(src._fw_fn if src._fw_base is not None else None, fn)
    if forward_ad.active():
        # torch makes a view's tangent when the view op runs: read now, it is cached, so an
        # in-place view op on the base later (d.t_()) restrides the base's tangent, not this
        forward_ad.fw_grad(out)


def then(first: ViewFn | None, fn: ViewFn) -> ViewFn:
    """fn after first: a forward view's chain of view fns from its forward base."""
    if first is None:
        return fn
    return lambda a: fn(first(a))


def inference_alias(src: Tensor, fn: ViewFn) -> Tensor:
    """An inference tensor has no autograd metadata, so torch tracks no view of it (in or
    out of inference mode): the result shares its memory but is a plain inference tensor,
    a leaf without _base that does not require grad."""
    data = fn(src._data)
    if not data.flags.writeable and src._data.flags.writeable:
        # numpy hands out diagonal() and broadcast_to() read-only; with no _base to write
        # through, the alias writes its memory directly. An expanded alias is written only
        # by the ops that may write overlapping memory (zero_, fill_): every other in-place
        # op refuses it first (inplace.apply_inplace), as torch's TensorIterator does.
        data.flags.writeable = True
    out = Tensor(data, src.dtype, src.device)
    out._version_counter = src._version_counter
    return out


def flat_positions(t: Tensor) -> np.ndarray:
    return np.arange(t._data.size).reshape(t._data.shape)
