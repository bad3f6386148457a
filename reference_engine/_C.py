"""torch._C's few autograd entry points the harness reads and restores between runs
(conformance/isolation.py): the stack of saved-tensor default hooks and its disabled state."""

from __future__ import annotations

from types import SimpleNamespace

from . import saved

_autograd = SimpleNamespace(
    _push_saved_tensors_default_hooks=saved.push_default_hooks,
    _pop_saved_tensors_default_hooks=saved.pop_default_hooks,
    _top_saved_tensors_default_hooks=saved.top_default_hooks,
    _saved_tensors_hooks_is_enabled=saved.hooks_enabled,
    _saved_tensors_hooks_disable=saved.disable_hooks,
    _saved_tensors_hooks_enable=saved.enable_hooks,
    _saved_tensors_hooks_get_disabled_error_message=saved.disabled_error_message,
    SavedTensor=saved.SavedVariable,   # what grad_fn._raw_saved_* hold
)
