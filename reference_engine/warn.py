"""torch's two ways of giving a warning: TORCH_WARN, every time, and TORCH_WARN_ONCE
(c10/util/Exception.h), once per process and call site, unless warn-always is set
(`torch.set_warn_always(True)`), which makes each TORCH_WARN_ONCE a TORCH_WARN and leaves
its once-state as it was. The harness runs every engine under warn-always, so that whether a
statement warns does not depend on what ran before it in the process."""

from __future__ import annotations

import warnings

_always = {"on": False}
# The TORCH_WARN_ONCE sites that have warned, by message (each message is one site of
# torch's; float() and complex() share one site, maybe_warn_requires_grad).
_given: set[str] = set()


def set_warn_always(b: bool, /) -> None:
    _always["on"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _always["on"]


def warn_once(message: str, stacklevel: int = 3) -> None:
    """TORCH_WARN_ONCE(message): a UserWarning, the first time in the process or under
    warn-always."""
    if not _always["on"]:
        if message in _given:
            return
        _given.add(message)
    warnings.warn(message, UserWarning, stacklevel=stacklevel)
