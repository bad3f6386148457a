"""An engine module for plugin tests: real torch whose `exp` raises KeyboardInterrupt, as an
engine stopped by Ctrl-C (or one that raises it itself) does."""

from __future__ import annotations

from typing import Any

import torch


def exp(x: Any) -> Any:
    raise KeyboardInterrupt


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
