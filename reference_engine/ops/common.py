"""What every op family uses: making a result tensor (new, wrap), argument handling
(dims, dtype promotion, devices, broadcasting), the elementwise kernel with torch's memory
layout, torch's argument parser for the Tensor / Number overloads, and the
flat-index plumbing views and in-place writes are built on."""

from __future__ import annotations

import builtins
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes, messages, tensor_metadata
from ..autograd_meta import OpSpec, record
from ..dtypes import device, dtype
from ..tensor import Tensor

Number = int | float | bool

# ---- tensor construction and argument handling -----------------------------------


def new(arr: Any, dt: dtype, dev: device, order: str = "C") -> Tensor:
    if isinstance(arr, np.ndarray | np.generic) and arr.dtype == dt.np:
        # a copy without a cast: nothing can overflow, so no errstate is needed
        return Tensor(np.array(arr, dtype=dt.np, order=order), dt, dev)  # type: ignore[call-overload]
    with np.errstate(all="ignore"):  # a cast that overflows gives inf, silently, in torch
        return Tensor(np.array(arr, dtype=dt.np, order=order), dt, dev)  # type: ignore[call-overload]


def _result_order(ts: Sequence[Tensor], shape: tuple[int, ...]) -> list[int] | None:
    """The memory order TensorIterator gives an elementwise result: its dims from the
    innermost out (None: contiguous). TensorIterator::reorder_dimensions sorts the dims by
    the inputs' strides, broadcast to the result's shape: an input with a broadcast (0)
    stride in either of two dims says nothing about them, the first input that tells them
    apart decides, equal strides put the smaller dim inside. So a transposed input gives a
    transposed result, also where another input broadcasts (`x.t() * y` for a `y` of shape
    (3,)), and reshaping it copies. Found by the generator: `(x.t() * 2).reshape(-1)` is an
    UnsafeViewBackward0 in torch, and with a broadcast operand too."""
    ndim = len(shape)
    if ndim < 2:
        return None
    strides = []   # each input's strides in the result's dims, 0 where it broadcasts
    for t in ts:
        data = t._data
        pad = ndim - data.ndim
        strides.append([0] * pad + [0 if n == 1 and shape[pad + i] != 1 else st
                                    for i, (n, st) in enumerate(zip(data.shape, data.strides,
                                                                    strict=True))])

    def should_swap(d0: int, d1: int) -> int:
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))   # innermost first: contiguous
    for i in range(1, ndim):   # ATen's insertion sort, ambiguous comparisons kept in place
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    sized = [d for d in perm if shape[d] != 1]   # dims of size 1 do not change the layout
    return None if sized == sorted(sized, reverse=True) else perm


def _laid_out(arr: np.ndarray, order: list[int]) -> np.ndarray:
    """`arr`'s values in memory order `order` (innermost dim first)."""
    outer = order[::-1]
    # (an empty buffer needs torch's strides before the transpose permutes them)
    buf = tensor_metadata.torch_empty_layout(
        np.empty(tuple(arr.shape[d] for d in outer), dtype=arr.dtype))
    out = buf.transpose([outer.index(d) for d in range(arr.ndim)])
    out[...] = arr
    return out


def floating_kernel(kernel: str, t: Tensor) -> None:
    """A kernel AT_DISPATCH compiles for floating dtypes only: on an integer or bool tensor
    torch raises NotImplementedError naming the kernel (elu_cpu on a Long)."""
    if not t.dtype.is_floating_point:
        raise NotImplementedError(messages.kernel_not_implemented(kernel, t.dtype.scalar_name))


def wrap(x: Any) -> Tensor:
    """A Python number becomes a 0-dim 'wrapped number' tensor, as torch does, so that
    it can be saved (x * 2 saves the 2) yet loses to tensors in type promotion."""
    if isinstance(x, Tensor):
        return x
    dt = dtypes.scalar_dtype(x)
    t = Tensor(np.array(x, dtype=dt.np), dt, dtypes.CPU)
    t._wrapped_number = True
    return t


def result_dtype(ts: Sequence[Tensor]) -> dtype:
    if len({t._dtype for t in ts}) == 1:   # one dtype promotes to itself, whatever the ranks
        return ts[0]._dtype
    return dtypes.result_type(
        [t._dtype for t in ts if not t._wrapped_number and t._data.ndim > 0],
        [t._dtype for t in ts if not t._wrapped_number and t._data.ndim == 0],
        [t._dtype for t in ts if t._wrapped_number])


def common_device(ts: Sequence[Tensor]) -> device:
    # 0-dim cpu tensors (and wrapped numbers) may join any device, like torch's scalars.
    first: device | None = None
    for t in ts:
        if t._data.ndim == 0 and t._device.type == "cpu":
            continue
        if first is None:
            first = t._device
        elif t._device is not first and t._device != first:
            raise RuntimeError(messages.devices_differ(str(first), str(t._device)))
    return dtypes.CPU if first is None else first


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    if a == b or not a:   # the common cases: nothing to broadcast, nothing to check
        return tuple(b)
    n = builtins.max(len(a), len(b))
    out = []
    for i in range(n - 1, -1, -1):
        ia, ib = len(a) - n + i, len(b) - n + i
        sa = a[ia] if ia >= 0 else 1
        sb = b[ib] if ib >= 0 else 1
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(messages.broadcast_mismatch(sa, sb, i))
        out.append(sa if sb == 1 else sb)
    return tuple(reversed(out))


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast shape of several, folded left as ATen's TensorIterator and infer_size
    fold them, so a mismatch is torch's error naming the shape so far as tensor a (NumPy's
    np.broadcast_shapes raises its own ValueError)."""
    out: tuple[int, ...] = ()
    for shape in shapes:
        out = broadcast_shape(out, tuple(shape))
    return out


def wrap_dim(dim: int, ndim: int) -> int:
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(messages.dim_out_of_range(-n, n - 1, dim))
    return dim % n


# torch returns inf/nan silently; so do we. (np.errstate as a decorator sets the state per
# call without making a context object each time: this runs for every op.)
@np.errstate(all="ignore")
def compute_on(fn: Callable[..., Any], *arrays: np.ndarray) -> Any:
    return fn(*arrays)


def elementwise_op(spec: OpSpec | None, fn: Callable[..., Any], args: Sequence[Any],
                   out_dtype: dtype | None = None, compute_dtype: dtype | None = None,
                   **attrs: Any) -> Tensor:
    ts = [wrap(a) for a in args]
    dev = common_device(ts)
    dt = compute_dtype or result_dtype(ts)
    shape: tuple[int, ...] = ()
    for t in ts:
        shape = broadcast_shape(shape, t._data.shape)
    # (astype(copy=False) would return an operand of that dtype as it is, at a method call's cost)
    arrays = [t._data if t._data.dtype == dt.np else t._data.astype(dt.np) for t in ts]
    out = iterator_result(compute_on(fn, *arrays), out_dtype or dt, dev, ts)
    return out if spec is None else record(spec, out, ts, **attrs)


def iterator_result(arr: Any, dt: dtype, dev: device, ts: Sequence[Tensor]) -> Tensor:
    """`arr`, the values of an elementwise kernel over the inputs `ts`, in the memory order
    TensorIterator gives its result (_result_order)."""
    shape = np.shape(arr)
    # TensorIterator's FastSetupType::CONTIGUOUS: operands of one shape that are all
    # contiguous, as every tensor of no elements is, give a contiguous result
    fast = 0 in shape and all(t._data.shape == shape for t in ts)
    order = None if fast else _result_order(ts, shape)
    out = new(arr, dt, dev)
    if order is not None:
        out = Tensor(_laid_out(out._data, order), dt, dev)
    return out


def written_in_place(t: Tensor, times: int = 1) -> Tensor:
    """Mark t as written in place `times` times by the kernel that made it: torch formulas
    such as at::zeros(...).scatter_(...) leave the grad they return at _version 1 (or 2)."""
    for _ in range(times):
        t._version_counter.bump()
    return t


def in_loss_storage(out: Tensor, numel: int) -> Tensor:
    """`out` (a reduced loss, 0-d) moved into a storage of `numel` elements (the unreduced
    loss's, at least one), as torch's mse_loss, smooth_l1_loss, soft_margin_loss and
    binary_cross_entropy reduce into the tensor that held the unreduced loss: observable
    where set_fw_grad copies a tangent into the result's layout (its storage size too)."""
    storage = np.zeros(max(numel, 1), dtype=out._data.dtype)
    storage[0] = out._data
    out._data = storage[:1].reshape(())
    return out


def float_dtype(t: Tensor) -> dtype:
    return t.dtype if t.dtype.is_differentiable else dtypes.get_default_dtype()


def zeros_scalar(like: Tensor) -> Tensor:
    return new(0, like.dtype, like.device)


def in_layout_of(out: Tensor, t: Tensor) -> Tensor:
    """`out` (a fresh tensor of t's shape) laid out as empty_like(t) lays out its result with
    MemoryFormat::Preserve, torch's default: t's strides where t is non-overlapping and dense,
    else infer_dense_strides' (t's dims sorted by stride, as TensorIterator sorts them:
    `_result_order` of t alone). A transposed t gives transposed zeros."""
    order = _result_order([t], tuple(out.shape))
    if order is not None:
        out._data = _laid_out(out._data, order)
    return out


def zeros_like(t: Tensor) -> Tensor:
    """at::zeros_like(t), as derivatives.yaml's and FunctionsManual's formulas call it: in t's
    layout (`in_layout_of`), so a transposed input's zero gradient is transposed too."""
    return in_layout_of(new(np.zeros(t.shape), t.dtype, t.device), t)


def zeros_contiguous(t: Tensor) -> Tensor:
    """Contiguous zeros of t's shape: at::zeros_like(t, LEGACY_CONTIGUOUS_MEMORY_FORMAT) and
    t.new_zeros(t.sizes()), which formulas also call (pow_backward's exponent 0, div's
    rounded jvp)."""
    return new(np.zeros(t.shape), t.dtype, t.device)


def info_zeros(t: Tensor, shape: tuple[int, ...] | None = None) -> Tensor:
    """derivatives.yaml's `zeros_like(<input>)` (copysign's and nextafter's other, eq_'s
    self and other): load_derivatives saves the input's TypeAndSize and calls its zeros(),
    at::zeros of its sizes: contiguous whatever the input's layout, and at _version 1 (the
    zero_ that fills it). `zeros_like(grad)` is not rewritten so: that is `zeros_like`.
    `shape`: the input's, where only a tensor of another shape (the grad) is at hand."""
    return written_in_place(new(np.zeros(t.shape if shape is None else shape), t.dtype,
                                t.device))


# ---- index plumbing shared by views and in-place writes --------------------------------
# A view or index result is described by flat indices into its source, so every backward
# of selecting elements is one scatter-add, and every backward of a scatter is a gather.

def _gather_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    return [scatter_add(g, c.index, c.source_shape, c.grad_name, c.distinct)]


def _scatter_backward(c: Any, g: Tensor) -> list[Tensor | None]:
    return [gather(g, c.index, c.back_name, c.scatter_name, c.distinct)]


def gather(self: Tensor, index: np.ndarray, name: str, grad_name: str = "IndexPutBackward0",
           distinct: bool = False, indices: Sequence[Tensor] = ()) -> Tensor:
    """self.flatten()[index] - the copy-semantics index op (torch's x[mask] / x[[0, 1]]), and
    the backward of a view's backward (`grad_name` the scatter its own backward makes).
    `indices`: the index tensors torch's IndexBackward0 saves (x[...]'s advanced items, as
    tensors), which pack hooks see in order; the positions themselves are `index`."""
    names = tuple(f"indices_{k}" for k in range(len(indices)))
    spec = OpSpec(name, ("self",), {"self": names} if names else {}, _gather_backward,
                  saves_indices=name == "IndexBackward0", save_order=names,
                  jvp=lambda c: gather(c.self_t, c.index, name, grad_name, distinct))  # auto_linear
    out = new(self._data.reshape(-1)[index], self.dtype, self.device)
    return record(spec, out, [self], index=index, source_shape=tuple(self.shape),
                  grad_name=grad_name, distinct=distinct, **dict(zip(names, indices,
                                                                     strict=True)))


def scatter_add(self: Tensor, index: np.ndarray, shape: Sequence[int], name: str,
                distinct: bool = False, back_name: str = "IndexBackward0") -> Tensor:
    """zeros(shape) with self's elements added at flat positions index. With `distinct`
    positions (a select or slice: each element once) they are written, as ATen's
    select_backward/slice_backward copy into the zeros: 0 + -0.0 would lose the sign.
    Its backward gathers the positions again, as the node `back_name` (for a view's
    backward, torch's SliceBackwardBackward0 and the like, the view op itself)."""
    spec = OpSpec(name, ("self",), backward=_scatter_backward,
                  jvp=lambda c: scatter_add(c.self_t, index, shape, name, distinct, back_name))
    flat = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=self.dtype.np)
    values = np.broadcast_to(self._data, index.shape).reshape(-1)
    if distinct:
        flat[index.reshape(-1)] = values
    else:
        np.add.at(flat, index.reshape(-1), values)
    return record(spec, new(flat.reshape(tuple(shape)), self.dtype, self.device), [self],
                  index=index, scatter_name=name, back_name=back_name, distinct=distinct)
INDEX_PUT = OpSpec(
    "IndexPutBackward0", ("self", "values"),
    backward=lambda c, g: c.grads(lambda: index_put(g, c.index, zeros_scalar(g)),
                                  lambda: gather(g, c.index, "IndexBackward0")),
    saves_indices=True,
    jvp=lambda c: index_put(c.self_t, c.index, c.values_t))


def index_put(self: Tensor, index: np.ndarray, values: Tensor) -> Tensor:
    """Out-of-place: a copy of self with positions index overwritten by values."""
    arr = np.array(self._data, copy=True)
    arr.reshape(-1)[index.reshape(-1)] = np.broadcast_to(values._data, index.shape).reshape(-1)
    return record(INDEX_PUT, new(arr, self.dtype, self.device), [self, values], index=index)


# ---- torch's argument parser for the Tensor / Number overloads ---------------------------

OUT = ", *, Tensor out = None"   # the out= keyword in a signature torch's parser prints


def parse(name: str, args: tuple[Any, ...], *signatures: str) -> None:
    """Refuse, with torch's TypeError, arguments matching none of the signatures (each
    `Tensor a, Number b[, *, Tensor out = None]`, only its two positional types read)."""
    def takes(kind: str, x: Any) -> bool:
        if kind == "Tensor":
            return isinstance(x, Tensor)
        return isinstance(x, numbers.Number)
    for sig in signatures:
        kinds = [p.split()[0] for p in sig.split(",")[:2]]
        if all(takes(k, a) for k, a in zip(kinds, args, strict=True)):
            return
    got = tuple("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)
    raise TypeError(messages.invalid_combination(
        name, got, tuple((s, "*" not in s and s.count(",") + 1 == len(args))
                         for s in signatures)))


def check_tensor_or_number(name: str, self: Any, other: Any, param: str = "other") -> None:
    parse(name, (self, other), f"Tensor input, Tensor {param}{OUT}",
          f"Tensor input, Number {param}{OUT}")


def no_jvp(name: str) -> Callable[[Any], Any]:
    """derivatives.yaml gives the op no forward formula: forward mode raises torch's
    TORCH_CHECK_NOT_IMPLEMENTED text, naming the ATen op (not the node's stem)."""
    def jvp(c: Any) -> Any:
        raise NotImplementedError(messages.fwad_not_implemented(name))
    return jvp
