"""torch's view_fn (ViewInfo::view_fn_): how a view is remade from its root base when as_strided
cannot remake it, because some view on the way changed the dtype (view_as_real,
view_as_complex).

torch gives such a view a function replaying its chain from the root: the dtype change
itself, preceded by an as_strided of the root with the parent's geometry (a parent that is a
plain view), and followed, for each later plain view, by an as_strided with that view's own
geometry (ViewInfo::chain). An in-place view op (transpose_) leaves it as it was, so the
replay then misses it: torch's known bug that test_autograd_inplace_views_cross_dtype pins.
The function (views_strided.replay) remakes the view's grad_fn after its base changed (its
last step's node), and CopySlices takes the view's slice of the base's grad with it.

A step is ("as_strided", index), the flat positions in the storage counted in that step's
dtype, or ("view_as_real",) / ("view_as_complex",). Positions (view_making.py's `_view_index`)
count a complex root's parts when the view is real, and a real root's elements when the view
is complex; `storage_index` turns them into the view's own units.
"""

from __future__ import annotations

import weakref

import numpy as np

from .tensor import Tensor

Step = tuple  # ("as_strided", np.ndarray) | ("view_as_real",) | ("view_as_complex",)


def storage_index(t: Tensor) -> np.ndarray:
    """t's flat positions in its root's storage, counted in t's own dtype."""
    assert t._base is not None and t._view_index is not None
    if t.dtype.is_complex and not t._base.dtype.is_complex:
        return t._view_index // 2   # a real root's elements, two to a complex element
    return t._view_index


def for_dtype_change(src: Tensor, kind: str) -> tuple[Step, ...]:
    """The view_fn of view_as_real/view_as_complex/conj/_neg_view of src
    (ViewInfo::chain)."""
    if src._base is None:
        return ((kind,),)
    prefix = src._view_fn or (("as_strided", storage_index(src)),)
    return (*prefix, (kind,))


def for_plain_view(src: Tensor, out: Tensor) -> tuple[Step, ...] | None:
    """The view_fn of a plain view `out` of src: src's, then out's own geometry."""
    if src._view_fn is None:
        return None
    return (*src._view_fn, ("as_strided", storage_index(out)))


# ---- conj and neg views: copies kept in step with their root --------------------------

def track_copy(view: Tensor) -> None:
    """Register a conj or neg view, whose data are a copy of its root's values read
    conjugated (negated), so that a write to the root's memory refreshes it."""
    root = view._base
    assert root is not None
    root.__dict__.setdefault("_copy_views", weakref.WeakSet()).add(view)


def read_through(view: Tensor) -> np.ndarray:
    """A view's values read from its root's memory at its positions, through its bits."""
    root, index = view._base, view._view_index
    assert root is not None and index is not None
    if root.dtype.is_complex and not view.dtype.is_complex:
        values = parts_view(root._data).reshape(-1)[index]
    else:
        values = np.asarray(root._data).reshape(-1)[index]
    if view._is_conj:
        values = np.conj(values)
    if view._is_neg:
        values = np.negative(values)
    return values.astype(view._data.dtype, copy=False)


def refresh_copies(root: Tensor) -> None:
    """After a write to root's memory: its conj and neg views read it again (in place, so
    their own views, numpy views of their data, follow)."""
    for view in list(root.__dict__.get("_copy_views", ())):
        view._data[...] = read_through(view)


def parts_view(a: np.ndarray) -> np.ndarray:
    """A complex array's (..., 2) real view sharing its memory, whatever its strides (an
    array, never a numpy scalar, whose .real would be a copy)."""
    assert isinstance(a, np.ndarray)
    real = a.real
    return np.lib.stride_tricks.as_strided(
        real, (*a.shape, 2), (*real.strides, real.itemsize), writeable=False)
