"""torch.isin: a bool tensor, never differentiable (test_non_differentiable_ops)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes, messages
from ..tensor import Tensor
from .common import common_device, new, parse, wrap

_KW = ", *, bool assume_unique = False, bool invert = False, Tensor out = None"


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    # one of the two may be a Python number (torch's Scalar overloads), not both
    parse("isin", (elements, test_elements), f"Tensor elements, Tensor test_elements{_KW}",
          f"Number element, Tensor test_elements{_KW}",
          f"Tensor elements, Number test_element{_KW}")
    a, b = wrap(elements), wrap(test_elements)
    for t in (a, b):
        if t._dtype is dtypes.bool_ or t._dtype.is_complex:
            raise RuntimeError(messages.isin_unsupported_dtype(t._dtype.scalar_name))
    dev = common_device([a, b])
    found = np.isin(a._data, b._data, assume_unique=assume_unique, invert=invert)
    return new(found, dtypes.bool_, dev)
