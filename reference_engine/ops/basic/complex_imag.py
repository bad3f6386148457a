"""imag, and the negative view (ATen's _neg_view) that the imag of a conj view is: its
formula is neg, so these sit above elementwise.py, whose formulas conjugate
(complex_numbers.py: the other views of complex tensors, and conjugation)."""

from __future__ import annotations

import numpy as np

from ... import messages
from ...autograd_meta import OpSpec
from ...tensor import Tensor
from . import elementwise, views
from .complex_numbers import is_conj, unconj, view_as_real, view_positions, view_with_data


def imag(self: Tensor) -> Tensor:
    """Tensor.imag / torch.imag: a complex tensor's view of its imaginary parts; of a conj
    view, the negated parts (ATen's _neg_view, NegViewBackward0)."""
    if not self.dtype.is_complex:
        raise RuntimeError(messages.IMAG_NOT_COMPLEX)
    parts = view_as_real(unconj(self))
    if is_conj(self):
        parts = _neg_view(parts)
    return views.select(parts, -1, 1)


NEG_VIEW = OpSpec("NegViewBackward0", ("self",),
                  backward=lambda c, g: [_neg(g)], jvp=lambda c: _neg_view(c.self_t))


def _neg(g: Tensor) -> Tensor:
    return elementwise.neg(g)


def _neg_view(self: Tensor) -> Tensor:
    """ATen's _neg_view: a view read negated (a copy here, as conj's), its neg bit flipped
    (of a negative view, the bit is cleared)."""
    out = view_with_data(self, np.array(np.negative(self._data)), self.dtype,
                         view_positions(self), NEG_VIEW)
    out._is_neg = not self._is_neg
    return out
