"""An engine module for plugin tests: real torch whose `exp` is 1% off in value only."""

from __future__ import annotations

from typing import Any

import torch


def exp(x: Any) -> Any:
    out = torch.exp(x)
    out.data.mul_(1.01)  # through .data: same graph, same version, other values
    return out


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
