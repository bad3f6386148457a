"""Anomaly mode: torch.autograd.detect_anomaly / set_detect_anomaly and their two flags.

torch keeps two process-global flags (c10 AnomalyMode: enabled, check_nan). While enabled,
each node made records the Python stack of the forward call that made it (and, for a node
made by a backward, the node whose backward was running: its parent); when a backward fails
at a node, the engine warns with that stack (python_anomaly_mode.cpp, print_stack); with the
NaN check on, a node whose output holds a NaN fails (engine.cpp, evaluate_function).
"""

from __future__ import annotations

import os
import traceback
import warnings
from typing import Any

from . import messages

_flags = {"enabled": False, "check_nan": True}
# The nodes whose backward is running, innermost last: a node made meanwhile is their child.
running: list[Any] = []
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    _flags["enabled"], _flags["check_nan"] = bool(enabled), bool(check_nan)


def is_anomaly_enabled() -> bool:
    return _flags["enabled"]


def is_anomaly_check_nan_enabled() -> bool:
    return _flags["check_nan"]


class detect_anomaly:
    """Enables anomaly mode inside its block; warns when made (torch/autograd/anomaly_mode.py)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn(messages.ANOMALY_ENABLED, UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Sets anomaly mode when made (a function call or a context manager); leaving the
    block restores the flags as they were."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


def record(node: Any) -> None:
    """What a node made in anomaly mode keeps: the stack of the Python code that made it
    (the engine's own frames left out, as torch's C++ frames are absent from its stack)
    and the node whose backward made it."""
    frames = [f for f in traceback.extract_stack()[:-1]
              if not os.path.abspath(f.filename).startswith(_PACKAGE)]
    node._anomaly_stack = "".join(traceback.format_list(frames))
    node._anomaly_parent = running[-1] if running else None


def print_stack(node: Any) -> None:
    """torch's PyAnomalyMetadata::print_stack: one warning for the failing node, then one
    for each node whose backward made it."""
    name = node.name()
    stack = getattr(node, "_anomaly_stack", None)
    if stack is None:
        warnings.warn(messages.anomaly_no_forward_info(name), UserWarning, stacklevel=2)
        return
    warnings.warn(messages.anomaly_forward_trace(name, stack), UserWarning, stacklevel=2)
    parent = getattr(node, "_anomaly_parent", None)
    while parent is not None:
        stack = getattr(parent, "_anomaly_stack", None)
        if stack is None:
            break
        warnings.warn(messages.anomaly_parent_trace(parent.name(), stack), UserWarning,
                      stacklevel=2)
        parent = getattr(parent, "_anomaly_parent", None)
