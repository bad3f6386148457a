"""The in-place forms of the scatter family (scatter_, scatter_add_, index_add_, index_fill_,
index_copy_, masked_scatter_, put_): torch's checks on self and the operands, then the
out-of-place op's result written into self (inplace.py's rules)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..autograd_meta import OpSpec
from ..grad_mode import no_grad
from ..tensor import Tensor
from . import common
from .basic import indexing
from .basic.inplace import apply_inplace, check_inplace
from .masked import MASKED_SCATTER, masked_scatter
from .put_take import PUT, put
from .scatter import INDEX_COPY, index_copy


def _check_first(self: Tensor, *operands: Any) -> None:
    """VariableType's check_inplace (a leaf that requires grad, ...) comes before the
    kernel's own checks (a source of another dtype): the forms below compute out of place
    first, so they check here."""
    check_inplace(self, [o for o in operands if isinstance(o, Tensor)])


def _inplace(spec: OpSpec, fn: Callable[..., Tensor], others: Callable[..., list[Tensor]],
             attrs: Callable[..., dict[str, Any]]) -> Callable[..., Tensor]:
    def op_(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        _check_first(self, *others(*args, **kwargs))
        with no_grad():
            r = fn(self, *args, **kwargs)
        return apply_inplace(self, spec, r, others(*args, **kwargs), **attrs(self, *args,
                                                                              **kwargs))
    op_.__name__ = op_.__qualname__ = fn.__name__ + "_"
    return op_


index_copy_ = _inplace(INDEX_COPY, index_copy, lambda dim, index, source: [source],
                       lambda self, dim, index, source: {
                           "dim": common.wrap_dim(dim, self.ndim), "index": index})
masked_scatter_ = _inplace(MASKED_SCATTER, masked_scatter, lambda mask, source: [source],
                           lambda self, mask, source: {
                               "mask": mask, "source_sym_sizes": tuple(source.shape)})


def _wrapped(self: Tensor, dim: int) -> int:
    return common.wrap_dim(dim, self.ndim)


def scatter_(self: Tensor, dim: int, index: Tensor, src: Any) -> Tensor:
    _check_first(self, src)
    with no_grad():
        r = indexing.scatter(self, dim, index, src)
    attrs: dict[str, Any] = {"dim": _wrapped(self, dim), "index": index}
    if isinstance(src, Tensor):
        return apply_inplace(self, indexing.SCATTER, r, [src], **attrs)
    return apply_inplace(self, indexing.SCATTER_VALUE, r, [], **attrs)


def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    _check_first(self, src)
    with no_grad():
        r = indexing.scatter_add(self, dim, index, src)
    return apply_inplace(self, indexing.SCATTER_ADD, r, [src], dim=_wrapped(self, dim),
                         index=index)


def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1
               ) -> Tensor:
    _check_first(self, source)
    with no_grad():
        r = indexing.index_add(self, dim, index, source, alpha=alpha)
    return apply_inplace(self, indexing.INDEX_ADD, r, [source], dim=_wrapped(self, dim),
                         index=index, alpha=alpha)


def index_fill_(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    _check_first(self, value)
    fill = indexing.index_fill_value(self, index, value)
    # an index out of bounds raises with what the kernel filled before it written into self
    indexing.fill_until_out_of_bounds(self, _wrapped(self, dim), index, fill, self._data)
    with no_grad():
        r = indexing.index_fill(self, dim, index, value)
    attrs: dict[str, Any] = {"dim": _wrapped(self, dim), "index": index}
    if isinstance(value, Tensor):
        return apply_inplace(self, indexing.INDEX_FILL_TENSOR, r, [value], **attrs)
    return apply_inplace(self, indexing.INDEX_FILL, r, [], **attrs)


def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    _check_first(self, source)
    with no_grad():
        r = put(self, index, source, accumulate)
    return apply_inplace(self, PUT, r, [source], index=index, accumulate=accumulate)
