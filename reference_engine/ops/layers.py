"""The layers of torch.nn.functional (registry rows `nn.functional.<name>`): linear."""

from __future__ import annotations

from .. import inplace, views
from ..tensor import Tensor
from . import linalg


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """As ATen: addmm for a 2-D input with bias; other contiguous inputs with bias are
    flattened to 2-D, addmm'd and viewed back; without bias, matmul."""
    if input.ndim == 2 and bias is not None:
        return linalg.addmm(bias, input, views.t(weight))
    if bias is not None and input.is_contiguous():
        flat = views.reshape(input, (-1, input.shape[-1]))
        out = linalg.addmm(bias, flat, views.t(weight))
        return views.view(out, (*input.shape[:-1], weight.shape[0]))
    out = linalg.matmul(input, views.t(weight))
    return out if bias is None else inplace.add_(out, bias)
