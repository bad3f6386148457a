"""AsStridedBackward0: the grad_fn a view gets again after its base changed in place, and
the as_strided views torch's backward formulas take of a fresh buffer.

A view's flat positions in its base (views.py's `_view_index`) are all it takes: an
as_strided view of the base at those positions (its strides read off them) has the view's
elements, and its backward scatters a grad back to them. A view whose chain changed the
dtype is remade instead by replaying its view function (views_fn.py) in engine ops: replay.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes, engine, messages
from ...autograd_meta import OpSpec, build_node
from ...grad_mode import set_grad_enabled
from ...tensor import Tensor
from ...views_fn import Step, storage_index
from .. import common
from . import complex_imag, complex_numbers, indexing, inplace, reductions
from .view_making import ViewFn, make_view
from .views import reshape, squeeze

AS_STRIDED = OpSpec("AsStridedBackward0", ("self",),
                    backward=lambda c, g: [as_strided_backward(g, c.index, c.base_shape)])


def regenerate_view_grad_fn(view: Tensor) -> None:
    """torch's VariableHooks::grad_fn: a view whose storage changed since its grad_fn was
    made gets a fresh AsStridedBackward0 pointing at the base's current history."""
    base = view._base
    assert base is not None and view._view_index is not None
    if view._view_fn is not None:
        # torch's view_fn replayed from the base: the grad_fn is its last step's node
        with set_grad_enabled(True):
            node = replay(view._view_fn, base).grad_fn
        assert node is not None
        view._set_grad_fn(node)
        return
    if base.dtype.is_complex and not view.dtype.is_complex:
        # a real view of a complex base (.real, view_as_real): as_strided of the base's real
        # view, as torch replays the view's dtype change (ops/basic/complex_numbers.py's positions
        # are that view's)
        with set_grad_enabled(True):   # also when read under no_grad, as torch builds it
            base = complex_numbers.view_as_real(base)
    node = build_node(AS_STRIDED, [engine.gradient_edge(base)], [base], view,
                      {"index": view._view_index, "base_shape": tuple(base.shape)})
    view._set_grad_fn(node)


def strided_fn(index: np.ndarray) -> ViewFn:
    """The NumPy view of a contiguous array at flat positions `index`. Every view's index is
    affine in its coordinates (offset + sum of coordinate * stride), so its strides can be
    read off the index."""
    offset = int(index.flat[0]) if index.size else 0
    # a view without elements has no stride to read, and needs none
    strides = tuple(int(np.take(index, 1, axis=d).flat[0]) - offset if n > 1 and index.size
                    else 0 for d, n in enumerate(index.shape))

    def pick(a: np.ndarray) -> np.ndarray:
        assert a.flags.c_contiguous, "as_strided of a non-contiguous array"
        return np.lib.stride_tricks.as_strided(a.reshape(-1)[offset:], index.shape,
                                               tuple(s * a.itemsize for s in strides))
    positions = np.arange(int(index.max()) + 1 if index.size else 0)
    assert np.array_equal(pick(positions), index), "a view index that is not affine"
    return pick


def replay(steps: tuple[Step, ...], root: Tensor) -> Tensor:
    """The view remade from `root` (or from any tensor laid out as the root, a grad), in
    engine ops, so that its grad_fn is the last step's node."""
    t = root
    for step in steps:
        if step[0] == "view_as_real":
            t = complex_numbers.view_as_real(t)
        elif step[0] == "view_as_complex":
            t = complex_numbers.view_as_complex(t)
        elif step[0] == "conj":
            t = complex_numbers.conj(t)
        elif step[0] == "neg":
            t = complex_imag._neg_view(t)
        else:
            if not _storage_contiguous(t):
                raise NotImplementedError(messages.VIEW_FN_AS_STRIDED_NOT_MODELLED)
            t = as_strided_view(t, step[1])
    return t


def _storage_contiguous(t: Tensor) -> bool:
    """Whether t's flat positions are its storage's (its own, or its root's from 0)."""
    if t._base is None:
        return bool(t._data.flags.c_contiguous)
    index = storage_index(t)
    return bool(np.array_equal(index.reshape(-1), np.arange(index.size))) and \
        index.size == t._base._data.nbytes // t._data.itemsize


def as_strided_view(t: Tensor, index: np.ndarray, fn: ViewFn | None = None) -> Tensor:
    """t.as_strided(...) at the flat positions `index` of contiguous t (AsStridedBackward0);
    with `fn`, the view fn that picks those positions from t's memory whatever its layout."""
    return make_view(t, fn or strided_fn(index), AS_STRIDED, index=index,
                     base_shape=tuple(t.shape))


def as_strided_backward(g: Tensor, index: np.ndarray, base_shape: tuple[int, ...]) -> Tensor:
    """torch's as_strided_backward for a contiguous input geometry (FunctionsManual.cpp), so
    that its graph under create_graph is torch's: squeeze the grad's size-1 dims
    (SqueezeBackward1), sum its stride-0 dims (SumBackward1), copy it into a zero storage
    through the output geometry (CopySlices) and return the storage viewed with the input
    geometry (AsStridedBackward0)."""
    n = int(np.prod(base_shape, dtype=np.int64))
    if index.size == 0:
        return Tensor(np.zeros(base_shape, g.dtype.np), g.dtype, g.device)
    for d in reversed(range(index.ndim)):
        if index.shape[d] == 1:
            g, index = squeeze(g, d), np.squeeze(index, d)
        elif np.take(index, 1, axis=d).flat[0] == index.flat[0]:   # stride 0: an expand
            g, index = reductions.sum(g, d), np.take(index, 0, axis=d)
    if np.unique(index).size != index.size:
        # an overlapping output geometry (as_strided with overlapping strides): torch
        # index_add_s the flattened grad into the zero storage (IndexAddBackward0)
        storage = Tensor(np.zeros(n, g.dtype.np), g.dtype, g.device)
        positions = common.new(index.reshape(-1), dtypes.int64, g.device)
        storage = indexing.index_add(storage, 0, positions, reshape(g, (-1,)))
        return as_strided_view(storage, np.arange(n).reshape(base_shape))
    storage = Tensor(np.zeros(n, g.dtype.np), g.dtype, g.device)
    inplace.copy_(as_strided_view(storage, index), g)
    return as_strided_view(storage, np.arange(n).reshape(base_shape))

