"""Complex numbers (issue 22): complex tensors' views of their parts (real, imag,
view_as_real, view_as_complex), conjugation (conj, resolve_conj, conj_physical), abs,
angle and sgn of complex tensors (the real-to-complex constructors polar and complex:
complex_constructors.py).

Gradients follow PyTorch's convention ("Autograd for Complex Numbers"): the gradient of a
real loss L with respect to z is the conjugate Wirtinger derivative, dL/dz* times 2, so a
formula of a holomorphic f is grad * conj(f'(z)), as derivatives.yaml writes it. Each OpSpec
is one derivatives.yaml entry, its formula in engine ops (create_graph differentiates it
again). A real input that receives a complex gradient keeps its real part (handle_r_to_c),
which engine.validate_outputs does for every node.

Views. `x.real` is torch's select(view_as_real(x), -1, 0) (SelectBackward0 over
ViewAsRealBackward0) and `x.imag` the same at index 1; the data are numpy views of the
complex data, so they share memory, base and version counter with x. Their positions in the
root base (`_view_index`) count the root's real parts (element k's real part is 2k, its
imaginary part 2k + 1): enough for a further view (x.real[0]) and for its shape, and for an
in-place write through such a view into the root's memory (inplace_write.write), whose grad and
regenerated grad_fn follow torch's view function (views_fn.py).

Lazy conjugation. torch's conj() of a complex tensor is a view with the conjugate bit set
(is_conj()), read conjugated, and resolve_conj() materialises it (a clone). Here a conj view
holds the conjugated values as a copy, with the conj bit as an attribute, read again from
its root whenever the root's memory is written (views_fn.refresh_copies), so it shows a
later in-place write to its base as torch's view does; a write through it goes to the
root, conjugated back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import dtypes, messages, views_fn
from ...autograd_meta import OpSpec, record
from ...grad_mode import is_grad_enabled
from ...tensor import Tensor
from .. import creation_meta
from ..common import elementwise_op
from . import copying, views
from .copying import contiguous

# ---- views of the parts ------------------------------------------------------------


def _parts_index(positions: np.ndarray) -> np.ndarray:
    """The positions of a complex tensor's parts in its root's real-part numbering."""
    return np.stack([2 * positions, 2 * positions + 1], axis=-1)


def view_with_data(src: Tensor, data: np.ndarray, dt: dtypes.dtype, index: np.ndarray | None,
          spec: OpSpec, **attrs: Any) -> Tensor:
    """A view of src whose data (another dtype) is `data`: view_making.py's bookkeeping (base,
    version counter, view positions, creation meta), with the positions given."""
    base = src._base if src._base is not None else src
    out = Tensor(data, dt, src.device)
    out._base = base
    out._version_counter = base._version_counter
    out._view_index = index
    out._view_version = base._version_counter.value
    out._view_differentiable = is_grad_enabled()
    if src._base is not None and is_grad_enabled():
        out._view_creation_meta = creation_meta.creation_meta(src)
    out._view_creation_meta = creation_meta.inference_mode_meta(src, out._view_creation_meta)
    kind = _VIEW_FN_KINDS.get(spec.grad_fn)
    if kind is not None:
        out._view_fn = views_fn.for_dtype_change(src, kind)
    if spec.grad_fn in ("ConjBackward0", "NegViewBackward0"):
        views_fn.track_copy(out)   # its data are a copy, refreshed when the base is written
    return record(spec, out, [src], **attrs)


# the views whose metadata change torch replays with a view function (views_fn.py)
_VIEW_FN_KINDS = {"ViewAsRealBackward0": "view_as_real",
                  "ViewAsComplexBackward0": "view_as_complex",
                  "ConjBackward0": "conj", "NegViewBackward0": "neg"}


def view_positions(t: Tensor) -> np.ndarray:
    if t._view_index is not None:
        return t._view_index
    return np.arange(t._data.size).reshape(t._data.shape)


# Forward mode: each spec's `jvp` is derivatives.yaml's `result:` formula for it.
VIEW_AS_REAL = OpSpec("ViewAsRealBackward0", ("self",),
                      backward=lambda c, g: [view_as_complex(_contiguous(g))],
                      jvp=lambda c: view_as_real(resolve_conj(c.self_t)))
VIEW_AS_COMPLEX = OpSpec(
    "ViewAsComplexBackward0", ("self",),
    backward=lambda c, g: [view_as_real(resolve_conj(_contiguous(g)))],
    jvp=lambda c: view_as_complex(c.self_t))


def _contiguous(g: Tensor) -> Tensor:
    return contiguous(g)


def view_as_real(self: Tensor) -> Tensor:
    if not self.dtype.is_complex:
        raise RuntimeError(messages.VIEW_AS_REAL_NOT_COMPLEX)
    if is_conj(self):
        raise RuntimeError(messages.VIEW_AS_REAL_CONJ)
    positions = view_positions(self)
    if self._base is not None and not self._base.dtype.is_complex:
        # a complex view of a real root: its positions are its real parts' (the
        # imaginary part is the next element)
        index = np.stack([positions, positions + 1], axis=-1)
    else:
        index = _parts_index(positions)
    return view_with_data(self, views_fn.parts_view(self._data), dtypes.to_real(self.dtype), index,
                 VIEW_AS_REAL)


def view_as_complex(self: Tensor) -> Tensor:
    if self.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(messages.view_as_complex_dtype(self.dtype.scalar_name))
    if self.ndim == 0 or self.shape[-1] != 2:
        raise RuntimeError(messages.VIEW_AS_COMPLEX_LAST_DIM)
    a = self._data
    # numpy zeroes an empty array's strides (it keeps no layout for it), so an empty tensor
    # is taken as laid out contiguously, as torch makes every empty grad a formula reads here
    if a.size and a.strides[-1] != a.itemsize:
        raise RuntimeError(messages.VIEW_AS_COMPLEX_STRIDE)
    ct = dtypes.to_complex(self.dtype)
    try:   # shares memory where numpy can reinterpret the pairs
        data = a.view(ct.np)[..., 0]
    except ValueError:
        data = a[..., 0] + 1j * a[..., 1]
    # positions only give the view's shape to further views (see the module docstring)
    index = view_positions(self)[..., 0]
    return view_with_data(self, data.astype(ct.np, copy=False), ct, index, VIEW_AS_COMPLEX)


def real(self: Tensor) -> Tensor:
    """Tensor.real / torch.real: a real tensor itself; a complex one's view of its real
    parts, as ATen builds it (select of view_as_real; of a conj view, resolved first)."""
    if not self.dtype.is_complex:
        return self
    return views.select(view_as_real(unconj(self)), -1, 0)


# ---- conjugation ---------------------------------------------------------------------

CONJ = OpSpec("ConjBackward0", ("self",), backward=lambda c, g: [conj(g)],
              jvp=lambda c: conj(c.self_t))
CONJ_PHYSICAL = OpSpec("ConjPhysicalBackward0", ("self",),
                       backward=lambda c, g: [conj_physical(g)],
                       jvp=lambda c: conj_physical(c.self_t))


def is_conj(self: Tensor) -> bool:
    """torch.is_conj: whether self is a conjugate view (the conj bit; a non-tensor is the
    arg parser's TypeError)."""
    if not isinstance(self, Tensor):
        raise TypeError(messages.argument_not_tensor("is_conj", type(self).__name__))
    return bool(getattr(self, "_is_conj", False))


def is_neg(self: Tensor) -> bool:
    """torch.is_neg: whether self is a negative view (the imag of a conj view is one)."""
    return bool(getattr(self, "_is_neg", False))


def unconj(self: Tensor) -> Tensor:
    """self._conj() where self is a conj view (its conj bit cleared): what ATen views the
    parts of."""
    return conj(self) if is_conj(self) else self


def conj(self: Tensor) -> Tensor:
    """torch.conj: a real tensor itself; a complex one's lazily conjugated view (its conj
    bit flipped; conj of a conj view clears it)."""
    if not self.dtype.is_complex:
        return self
    out = view_with_data(self, np.array(np.conj(self._data)), self.dtype, view_positions(self),
                         CONJ)
    out._is_conj = not is_conj(self)
    return out


def resolve_conj(self: Tensor) -> Tensor:
    """A conj view materialised (a clone: CloneBackward0); any other tensor itself."""
    if not is_conj(self):
        return self
    out = copying.clone(self)
    out._is_conj = False
    return out


def conj_physical(self: Tensor) -> Tensor:
    """A real tensor itself; a complex one's conjugate, computed (ConjPhysicalBackward0)."""
    if not self.dtype.is_complex:
        return self
    return elementwise_op(CONJ_PHYSICAL, np.conj, (self,))


# ---- abs, angle, sgn of complex tensors ------------------------------------------------


