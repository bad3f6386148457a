"""torch.autograd.forward_ad: dual levels, dual tensors, and how tangents flow.

A tangent lives on its tensor for one dual level. torch has one level at a time (nesting
is refused), numbered 0 each time; here each entered level is also a fresh `_Level` token,
so exiting it invalidates every tangent made under it at once (torch's level destructor
clears them), without a registry of dual tensors.

How tangents move, as in torch (see autograd_meta.record, views.py and inplace.py):
- an op's result gets the tangent its OpSpec's `jvp` computes from the inputs' tangents
  (`tangent_of`);
- a view made by a view op is a *forward view* of its base: its tangent is not stored but
  read as the same view of the base's tangent (torch's fw_grad on a view), so an in-place
  change of either shows in the other;
- an in-place op on a dual tensor writes the new tangent into the existing one; on a
  forward view whose base has none, the base first gets a zero tangent (torch's
  "Forward Grad View/inplace" note);
- make_dual, unpack_dual's primal and detach() alias without being forward views.
"""

from __future__ import annotations

import contextlib
import inspect
import re
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from . import dispatch, messages, tensor_metadata
from .grad_mode import is_grad_enabled, set_grad_enabled
from .tangent_layout import same_layout, zeros_with_layout_of
from .tensor import Tensor

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]


# grad_fn name -> the forward of an "auto_linear" op (autograd_meta.linear_forward fills it)
LINEAR_FORWARDS: dict[str, Callable[..., Tensor]] = {}


class _Level:
    """One entered dual level (identity only)."""


_current_level = -1          # torch's module global, read by the harness's isolation table
_level: _Level | None = None  # the entered level's token
suspended_depth = 0          # > 0 while a jvp formula runs: its primals show no tangent
# autograd_functional_vmap's recording: formulas run with grad on; saved.py copies primals
record_tangent_graph = [False]
# what unpack_dual gave out during that recording, by the tangent's id: the tangent (weakly)
# and the detached alias given in its place (torch's: vmap's BatchedTensor)
batched_tangents: dict[int, tuple[weakref.ref[Tensor], Tensor]] = {}
# ... and every tensor computed from those aliases during the recording, by id (weakly):
# torch's are batched too, and their data cannot be read (tensor_metadata.BATCHED_CHECK)
batched_values: dict[int, weakref.ref[Tensor]] = {}
# whether unpack_dual's tangents are batched: inside autograd_functional_vmap's calls of the
# function, recorded or per column
tangents_batched = [False]


def is_batched(t: Tensor) -> bool:
    """Whether t stands for vmap's BatchedTensor: given out by unpack_dual, or computed from
    such a tensor, during the recorded call."""
    ref = batched_values.get(id(t))
    return ref is not None and ref() is t


def mark_batched(result: Tensor, inputs: Any) -> None:
    """During the recording, a result computed from a batched tensor is batched too."""
    if batched_values and any(isinstance(t, Tensor) and is_batched(t) for t in inputs):
        batched_values[id(result)] = weakref.ref(result)


tensor_metadata.BATCHED_CHECK.append(is_batched)
tensor_metadata.BATCHED_MARK.append(mark_batched)


def enter_dual_level() -> int:
    global _current_level, _level
    if _level is not None:
        raise RuntimeError(messages.FWAD_NESTED_LEVEL)
    _current_level, _level = 0, _Level()
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    global _current_level, _level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError(messages.FWAD_EXIT_NOT_LAST)
    if level < 0:
        raise RuntimeError(messages.FWAD_LEVEL_NEGATIVE)
    _current_level, _level = -1, None


class dual_level:
    """Context manager (and decorator) entering a dual level for its block."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()

    def __call__(self, fn: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with dual_level():
                return fn(*args, **kwargs)
        return wrapped


class UnpackedDualTensor(NamedTuple):
    primal: Tensor
    tangent: Tensor | None


# ---- a tensor's tangent ------------------------------------------------------------------

def fw_grad(t: Tensor) -> Tensor | None:
    """t's tangent at the current level, or None (torch's _fw_grad)."""
    if _level is None or suspended_depth:
        return None
    own = t._fw
    if own is not None and own[0] is _level:
        return own[1]
    base = t._fw_base
    if base is None:
        return None
    base_t = fw_grad(base)
    if base_t is None:
        return None
    # a forward view's tangent: the same view of its base's tangent, made once per tangent
    cached = t._fw_view_of
    if cached is not None and cached[0] is base_t:
        return cached[1]
    assert t._fw_index is not None
    # torch makes a view's tangent when the view op runs, so in that op's grad mode; made
    # here on first read (perhaps under no_grad, inside an in-place op), it takes the grad
    # mode the view was made in, or a tangent that requires grad would become a no_grad
    # view, refused on use after the in-place update writes it
    made_with_grad = t._view_differentiable if t._base is not None else is_grad_enabled()
    with set_grad_enabled(made_with_grad):
        view_t = _view_at(base_t, t)
    t._fw_view_of = (base_t, view_t)
    return view_t


# a dual tensor's repr shows its tangent (tensor_metadata cannot import this module)
tensor_metadata.TANGENT_READER.append(fw_grad)


def _view_at(tangent: Tensor, view: Tensor) -> Tensor:
    """`view`'s tangent: the view of its forward base's `tangent` that `view` is of that base
    (torch: the view op's formula on the tangent, or, read later, as_strided of it), sharing
    the tangent's memory and version. A tangent with its primal's layout (set_fw_grad's rule)
    takes the view's own view fns; one of another layout (the zeros an in-place op gives a
    view's base) is read at the view's flat (C-order) positions: as a view when contiguous,
    else as a copy (not modelled further)."""
    base, index = view._fw_base, view._fw_index
    assert base is not None and index is not None
    if tangent._data.shape == base._data.shape and tangent._data.strides == base._data.strides:
        return dispatch.as_strided_view(tangent, index, view._fw_fn)
    if tangent._data.flags.c_contiguous:
        return dispatch.as_strided_view(tangent, index)
    return dispatch.gather(tangent, index, "IndexBackward0")


def set_fw_grad(t: Tensor, tangent: Tensor) -> None:
    assert _level is not None
    t._fw = (_level, tangent)


def saved_tangent(t: Tensor) -> tuple[_Level, Tensor] | None:
    """What a SavedVariable keeps of t's tangent (save_metadata's fw_grad_): the tangent
    with its level, or None."""
    tangent = fw_grad(t)
    return None if tangent is None else (_level, tangent)  # type: ignore[return-value]


def restore_tangent(t: Tensor | None, saved: tuple[_Level, Tensor] | None) -> Tensor | None:
    """An unpacked saved tensor `t` given the tangent saved with it, while its level lasts
    (exiting the level clears the saved ForwardGrad too); t None: the tangent alone."""
    if saved is None or saved[0] is not _level:
        return t if t is not None else None
    if t is None:
        return saved[1]
    t._fw = saved
    return t


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """Run a jvp formula: the primals it reads carry no tangent (torch's formulas read
    `self_p`, the primal without its forward grad)."""
    global suspended_depth
    suspended_depth += 1
    try:
        yield
    finally:
        suspended_depth -= 1


def active() -> bool:
    return _level is not None and not suspended_depth


# ---- the API -----------------------------------------------------------------------------

def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError(messages.FWAD_NO_LEVEL)
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(messages.fwad_not_floating("primal", tensor.dtype))
    if not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(messages.fwad_not_floating("tangent", tangent.dtype))
    if level != _current_level:
        raise RuntimeError(messages.FWAD_INVALID_LEVEL)
    if fw_grad(tensor) is not None:
        raise RuntimeError(messages.fwad_already_dual(level))
    if fw_grad(tangent) is not None:
        raise RuntimeError(messages.fwad_tangent_is_dual(level))
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(messages.fwad_size_mismatch(list(tensor.shape), list(tangent.shape)))
    dual = dispatch.make_dual_view(tensor)
    set_fw_grad(dual, _in_layout_of(tensor, tangent))
    return dual


def _in_layout_of(primal: Tensor, tangent: Tensor) -> Tensor:
    """set_fw_grad's layout rule: a tangent without the primal's layout (has_same_meta) is
    copied into a new tensor with it: _new_zeros_with_same_feature_meta (zeros over a
    storage of the primal's storage size, at its offset, with its strides, in the primal's
    options: its dtype, so a float32 tangent of a float64 primal becomes float64 here while
    one with the primal's layout stays float32) given the primal's conj and neg bits, then
    copy_ (so the copy is at version 1, a tangent that requires grad gives it
    CopyBackwards, and a primal whose elements overlap is refused)."""
    if same_layout(tangent, primal):
        return tangent
    copy = Tensor(zeros_with_layout_of(primal, primal.dtype.np), primal.dtype, primal.device)
    with suspended():
        dispatch.copy_(copy, tangent)
    # the bits set after the copy (the engine's copy_ does not write through them; its
    # arrays hold the values as read, so the copy reads as the tangent, as in torch)
    copy._is_conj, copy._is_neg = primal._is_conj, primal._is_neg
    return copy


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = fw_grad(tensor)
    if record_tangent_graph[0] and tangent is not None:
        tangent = _batched(tangent)
    elif tangents_batched[0] and tangent is not None:   # a column's own tangent
        batched_values[id(tangent)] = weakref.ref(tangent)
    return UnpackedDualTensor(dispatch.make_dual_view(tensor, primal=True), tangent)


def _batched(tangent: Tensor) -> Tensor:
    """In autograd_functional_vmap's recorded call, the tangent that call records requires
    grad (the replay needs its graph); torch's is vmap's BatchedTensor, a leaf that does not
    require grad, the same object each time. So the same detached alias is given out."""
    entry = batched_tangents.get(id(tangent))
    if entry is None or entry[0]() is not tangent:
        entry = batched_tangents[id(tangent)] = (weakref.ref(tangent), tangent.detach())
        batched_values[id(entry[1])] = weakref.ref(entry[1])
    return entry[1]


# ---- tangents of ops ------------------------------------------------------------------

class JvpCtx:
    """What a jvp formula sees (autograd_meta's docstring): primals by input name, their
    tangents as `<name>_t` (zeros where none), the result and the op's attributes. `grads`
    evaluates every formula, so a backward formula serves as an auto_element_wise one."""

    def __init__(self, names: Sequence[str], inputs: Sequence[Tensor | None],
                 tangents: Sequence[Tensor | None], result: Tensor,
                 attrs: dict[str, Any]) -> None:
        self.__dict__.update(attrs)
        # every input's tangent, in order (cat and stack take a list under one name)
        self.tangents = [x_t if x_t is not None or x is None else _zero_tangent(x)
                         for x, x_t in zip(inputs, tangents, strict=True)]
        for name, x, x_t in zip(names, inputs, self.tangents, strict=False):
            setattr(self, name, x)
            setattr(self, name + "_t", x_t)
        self.result = result

    @staticmethod
    def grads(*formulas: Any) -> list[Tensor | None]:
        return [f() for f in formulas]


def _zero_tangent(x: Tensor) -> Tensor:
    """The tangent a formula reads for an input without one: torch's generated code gives
    it `_efficientzerotensor` of the input's shape and dtype, a ZeroTensor (contiguous
    zeros that mul, div, add and sub treat as known zeros: ops/zero_tensor.py); a wrapped
    number for a wrapped number (a Python scalar operand, which torch's Scalar overloads
    give no tangent at all), so that it loses to tensors in type promotion as the scalar
    does (a float32 0-d dual plus 0.5 has a float32 tangent, not a float64 one)."""
    zeros = Tensor(np.zeros(tuple(x.shape), dtype=x.dtype.np), x.dtype, x.device)
    zeros._zerotensor = True
    zeros._wrapped_number = x._wrapped_number
    return zeros


def aten_name(grad_fn: str) -> str:
    """The op's name in torch's texts, from its node's: MulBackward0 -> mul."""
    stem = re.sub(r"Backwards?\d*$", "", grad_fn)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", stem).lower()


def tangent_of(spec: Any, inputs: Sequence[Tensor | None], result: Tensor,
               attrs: dict[str, Any]) -> Tensor | None:
    """The result's tangent under spec's jvp, or None when no input has one."""
    tangents = [None if x is None else fw_grad(x) for x in inputs]
    reads = spec.jvp_reads
    if all(t is None for t in tangents) or (reads is not None and all(
            t is None for name, t in zip(spec.inputs, tangents, strict=False) if name in reads)):
        return None
    jvp = spec.jvp
    for arg, op in spec.jvp_whole:
        x = attrs.get(arg)
        if isinstance(x, Tensor) and fw_grad(x) is not None:
            raise NotImplementedError(messages.fwad_not_implemented(op))
    if jvp is None:
        # TORCH_CHECK_NOT_IMPLEMENTED in torch's generated code: a NotImplementedError
        raise NotImplementedError(messages.fwad_not_implemented(aten_name(spec.grad_fn)))
    with suspended(), set_grad_enabled(True) if record_tangent_graph[0] else \
            contextlib.nullcontext():
        c = JvpCtx(spec.inputs, inputs, tangents, result, attrs)
        if jvp == "auto_element_wise":
            # derivatives.yaml's rule: the backward formula given the tangent's conjugate as
            # grad, conjugated (the identity on real tensors)
            t = getattr(c, spec.inputs[0] + "_t")
            if t.dtype.is_complex or result.dtype.is_complex:
                # lazily conjugated, as torch's: the result is a conj view, which
                # set_fw_grad copies (record_tangent)
                out = dispatch.conj(spec.backward(c, dispatch.conj(t))[0])
            else:
                out = spec.backward(c, t)[0]
        elif jvp == "auto_linear":
            # the op itself applied to the tangents (with its attributes that are parameters)
            forward = LINEAR_FORWARDS[spec.grad_fn]
            params = inspect.signature(forward).parameters
            out = forward(*c.tangents,
                          **{k: v for k, v in attrs.items() if k in params})
        else:
            out = jvp(c)
    return out


def record_tangent(spec: Any, inputs: Sequence[Tensor | None], result: Tensor,
                   attrs: dict[str, Any]) -> None:
    """Give a freshly computed result its tangent (a forward view reads its base's)."""
    if result._fw_base is not None or not (result.dtype.is_floating_point
                                           or result.dtype.is_complex):
        return
    t = tangent_of(spec, inputs, result, attrs)
    if t is not None:
        set_result_tangent(result, t)


def set_result_tangent(result: Tensor, t: Tensor) -> None:
    """An op's result gets the tangent its formula gave (torch's _set_fw_grad of generated
    code): `t` itself when it has the result's layout (even a view of an input's tangent,
    as a *_copy op's), else a copy of it with that layout (version 1)."""
    set_fw_grad(result, _in_layout_of(result, t))


def update_inplace(self: Tensor, new: Tensor | None, others: Sequence[Tensor]) -> None:
    """After an in-place op wrote `self`: give it the tangent `new` (the out-of-place
    result's, None if that had none), written into the tangent it already has or reads
    from its forward base."""
    if not self.dtype.is_differentiable:
        return   # torch's isDifferentiableType(self): an integer self gets no tangent
    old = fw_grad(self)
    if new is None:
        if old is None and all(fw_grad(o) is None for o in others):
            return
        new = dispatch.zeros_like(self)   # zero_, fill_: the tangent becomes zeros
    if old is None and self._fw_base is not None:
        base = self._fw_base
        set_fw_grad(base, dispatch.zeros_like(base))
        old = fw_grad(self)
    with suspended():
        if old is None:
            # set_fw_grad's layout rule against self, in the tangent's own dtype (a float32
            # self written from a float64 dual has a float64 tangent, as torch's)
            self._fw = (_level, _in_layout_of(self, new))
        else:
            dispatch.copy_(old, new)
