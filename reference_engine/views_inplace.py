"""Metadata-only in-place views of a plain tensor (t_, transpose_, squeeze_, unsqueeze_):
the tensor itself is restrided, its version bumped and its history rebased."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import engine, forward_ad, messages
from .autograd_meta import OpSpec, build_node
from .grad_mode import is_grad_enabled
from .ops import common
from .ops.basic import inplace
from .ops.basic.view_making import ViewFn, make_view, then
from .ops.basic.views import ALIAS, squeeze, t, transpose, unsqueeze_to
from .tensor import Tensor

# ---- metadata-only in-place views of a plain tensor: t_, transpose_, squeeze_, unsqueeze_ ----

T1 = OpSpec("TBackward1", ("self",), backward=lambda c, g: [t(g)])
TRANSPOSE1 = OpSpec("TransposeBackward1", ("self",),
                    backward=lambda c, g: [transpose(g, c.dim0, c.dim1)])
SQUEEZE3 = OpSpec("SqueezeBackward3", ("self",),
                  backward=lambda c, g: [unsqueeze_to(g, range(len(c.self_sym_sizes)),
                                                      c.self_sym_sizes)])
SQUEEZE5 = OpSpec("SqueezeBackward5", ("self",),
                  backward=lambda c, g: [unsqueeze_to(g, c.dim, c.self_sym_sizes)])
UNSQUEEZE1 = OpSpec("UnsqueezeBackward1", ("self",), backward=lambda c, g: [squeeze(g, c.dim)])


def restride_(self: Tensor, fn: ViewFn, spec: OpSpec, **attrs: Any) -> Tensor:
    """Change self's shape/strides in place: version bump, history rebased onto spec.

    On a view (torch's inplace-view ops re-view the base): the view keeps its base and its
    creation meta, only its geometry changes, and it is checked like any in-place op on a
    view (views made under no_grad, by a multi-output op or in a custom Function refuse)."""
    inplace.check_inplace(self)
    # torch's generated kernel collects self's edge only when it records a node (grad mode
    # on and self requiring grad): under no_grad it never reads grad_fn, whose getter
    # raises for a no_grad view modified in place since (handle_view_on_rebase, indirect)
    recording = is_grad_enabled() and self.requires_grad
    edge = engine.gradient_edge(self) if recording else (None, 0)
    old = Tensor(self._data, self.dtype, self.device)
    tangent = forward_ad.fw_grad(self)
    self._data = fn(self._data)
    if self._view_index is not None:
        self._view_index = fn(self._view_index)
    # The tangent is restrided with it, in place, as torch's formula for these ops does
    # (`self_t.squeeze_()`): the tangent the program holds changes shape and its version
    # bumps. A forward view's tangent is a view of its base's, recomputed from its
    # positions: those are restrided, and the base tangent's version bumps.
    if self._fw_index is not None:
        self._fw_index, self._fw_view_of = fn(self._fw_index), None
        self._fw_fn = then(self._fw_fn, fn)
        if tangent is not None:
            tangent._version_counter.bump()
    elif tangent is not None:
        restride_(tangent, fn, spec, **attrs)
    elif self._fw is not None:  # a tangent of an exited level: kept as it was
        level, stale = self._fw
        self._fw = (level, make_view(stale, fn, ALIAS))
    self._version_counter.bump()
    if edge[0] is not None and is_grad_enabled():
        node = build_node(spec, [edge], [old], self, attrs)
        self._set_grad_fn(node)
    return self


def t_(self: Tensor) -> Tensor:
    if self.ndim > 2:
        raise RuntimeError(messages.t_dims(self.ndim))
    return restride_(self, np.transpose, T1)


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    d0, d1 = common.wrap_dim(dim0, self.ndim), common.wrap_dim(dim1, self.ndim)
    return restride_(self, lambda a: np.swapaxes(a, d0, d1), TRANSPOSE1, dim0=d0, dim1=d1)


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    d = common.wrap_dim(dim, self.ndim + 1)
    return restride_(self, lambda a: np.expand_dims(a, d), UNSQUEEZE1, dim=d)


def squeeze_dim_(self: Tensor, dim: int) -> Tensor:
    """In-place squeeze of one dim (SqueezeBackward4), as Tensor.squeeze_(dim) and ATen's
    matmul use it."""
    sizes = tuple(self.shape)
    d = common.wrap_dim(dim, self.ndim)
    keep = self.shape[d] != 1
    return restride_(self, lambda a: a if keep else np.squeeze(a, d), SQUEEZE4, dim=(d,),
                     self_sym_sizes=sizes)


SQUEEZE4 = OpSpec("SqueezeBackward4", ("self",),
                  backward=lambda c, g: [unsqueeze_to(g, c.dim, c.self_sym_sizes)])


def squeeze_(self: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    sizes = tuple(self.shape)
    if dim is None:
        return restride_(self, np.squeeze, SQUEEZE3, self_sym_sizes=sizes)
    if isinstance(dim, int):
        return squeeze_dim_(self, dim)
    ds = tuple(common.wrap_dim(d, self.ndim) for d in dim)
    drop = tuple(d for d in ds if sizes[d] == 1)
    return restride_(self, lambda a: np.squeeze(a, drop) if drop else a, SQUEEZE5, dim=ds,
                      self_sym_sizes=sizes)

