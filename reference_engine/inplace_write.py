"""Writing values into a tensor's memory: through the root's memory for a view with a view
function (another dtype, conj or neg), keeping conj and neg views' copies in step
(views_fn.refresh_copies), after the hooks that must see the tensor before it changes.
In-place ops (inplace.py) and out= overloads (ops/out_overloads.py) write through here."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import dtypes, views_fn
from .tensor import Tensor

# Called with every tensor about to be written in place, before the write: torch's
# allow_mutation_on_saved_tensors (autograd_graph) clones what was saved of it there, as
# torch's _CloneArgBeforeMutateMode does below autograd, once the inputs are saved.
BEFORE_WRITE: list[Callable[[Tensor], None]] = []


def write(t: Tensor, values: np.ndarray) -> None:
    """Store values into t's memory. numpy hands out some views read-only (diagonal): those
    are written through their positions in the base, which is the same memory."""
    for hook in BEFORE_WRITE:
        hook(t)
    if t._view_fn is not None:
        # through a view function's chain (another dtype, conj or neg): the root's memory,
        # read back through the view's bits
        _write_through_view_fn(t, values)
        return
    _write_memory(t, values)
    root = t._base if t._base is not None else t
    if "_copy_views" in root.__dict__:
        views_fn.refresh_copies(root)


def _write_memory(t: Tensor, values: np.ndarray) -> None:
    values = dtypes.fit(values, t.dtype)   # a bfloat16 tensor holds only bfloat16 values
    if t._data.flags.writeable or t._base is None or t._view_index is None:
        t._data[...] = values
        return
    t._base._data.put(t._view_index, values)


def _write_through_view_fn(t: Tensor, values: np.ndarray) -> None:
    """Write through a view with a view function into its (contiguous) root's memory: a real
    view of a complex root at its parts' positions, a complex view of a real root at its
    real parts' positions and the next ones, the values unconjugated (unnegated) first for a
    conj (neg) view. Views sharing that memory see it; conj and neg views, copies, are
    read again."""
    root, index = t._base, t._view_index
    assert root is not None and index is not None
    raw = values
    if t._is_conj:
        raw = np.conj(raw)
    if t._is_neg:
        raw = np.negative(raw)
    if root.dtype is t.dtype:
        root._data.reshape(-1)[index] = raw
    elif root.dtype.is_complex:
        root._data.reshape(-1).view(dtypes.to_real(root.dtype).np)[index] = raw
    else:
        flat = root._data.reshape(-1)
        flat[index] = np.real(raw)
        flat[index + 1] = np.imag(raw)
    views_fn.refresh_copies(root)
