"""torch's CreationMeta: how a view was made, which decides whether it may be modified in
place (ops/basic/inplace.py's handle_view_on_rebase reads it). Below the basic ops: a view
records it when made (ops/basic/view_making.py, ops/basic/complex_numbers.py,
views_multi_output.py), and custom Functions (function.py) when they return one."""

from __future__ import annotations

from ..grad_mode import is_inference_mode_enabled
from ..tensor import Tensor

# torch's CreationMeta: how a view was made decides whether it may be modified in place.
DEFAULT = "DEFAULT"
NO_GRAD_MODE = "NO_GRAD_MODE"
MULTI_OUTPUT_NODE = "MULTI_OUTPUT_NODE"   # views_multi_output.py makes such views
IN_CUSTOM_FUNCTION = "IN_CUSTOM_FUNCTION"
INFERENCE_MODE = "INFERENCE_MODE"


def creation_meta(t: Tensor) -> str:
    if t._view_creation_meta is not None:
        return t._view_creation_meta
    return DEFAULT if t._view_differentiable else NO_GRAD_MODE


def inference_mode_meta(src: Tensor, meta: str | None) -> str | None:
    """torch's get_creation_meta_in_mode and propagate_creation_meta for inference mode: a
    view made inside it is INFERENCE_MODE, and so is any view of such a view."""
    if is_inference_mode_enabled() or (src._base is not None
                                       and creation_meta(src) == INFERENCE_MODE):
        return INFERENCE_MODE
    return meta
