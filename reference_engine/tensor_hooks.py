"""A tensor's hooks: retain_grad, register_hook and register_post_accumulate_grad_hook.

Plain functions, bound in Tensor's class body (tensor.py). The hooks run in the engine
(engine.py): a non-leaf's on its grad_fn, a leaf's on the tensor (torch reads a leaf's
hooks from the variable, so a replaced AccumulateGrad still runs them).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import dispatch, messages
from .graph import Hook, RemovableHandle

if TYPE_CHECKING:
    from .tensor import Tensor


def retain_grad(self: Tensor) -> None:
    if not self.requires_grad:
        raise RuntimeError(messages.RETAIN_GRAD_NO_GRAD)
    # torch's C++ is_leaf reads the grad_fn_ field, not the getter that regenerates a
    # view's grad_fn (and refuses a view made under no_grad whose base changed since): such
    # a view is a leaf here, and retain_grad does nothing
    if self._grad_fn is None or self._retains_grad:
        return
    node = self.grad_fn
    assert node is not None

    # held weakly, as torch's retain_grad hook holds a weak_intrusive_ptr to the tensor:
    # the node holding its tensor would be the cycle tensor -> grad_fn -> hook -> tensor,
    # and a tensor the program let go of is freed at once (test_retain_grad_cycle)
    weak_self = weakref.ref(self)

    def retain(grad: Tensor) -> None:
        t = weak_self()
        if t is None:  # torch: nothing to retain into once the tensor is gone
            return
        t._grad = (dispatch.clone(grad) if t._grad is None else dispatch.add(t._grad, grad))

    node.retains_grad_hooks[self._output_nr] = retain
    self._retains_grad = True


def register_hook(self: Tensor, hook: Hook) -> RemovableHandle:
    if not self.requires_grad:
        raise RuntimeError(messages.HOOK_NO_GRAD)
    node = self.grad_fn
    table = self._leaf_hooks if node is None else \
        node.tensor_pre_hooks.setdefault(self._output_nr, {})
    handle = RemovableHandle(table)
    table[handle.id] = hook
    return handle


def register_post_accumulate_grad_hook(self: Tensor, hook: Callable[[Tensor], None]
                                       ) -> RemovableHandle:
    if not self.requires_grad:
        raise RuntimeError(messages.HOOK_NO_GRAD)
    if self.grad_fn is not None:
        raise RuntimeError(messages.POST_ACCUMULATE_NON_LEAF)
    handle = RemovableHandle(self._post_accumulate_grad_hooks)
    self._post_accumulate_grad_hooks[handle.id] = hook
    return handle
