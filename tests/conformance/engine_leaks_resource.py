"""An engine module for the harness's warning record: real torch, except that its `torch.exp`
gives a ResourceWarning (as the garbage collector does when it frees an unclosed file of
anything in the process, at whatever statement it runs)."""

from __future__ import annotations

import warnings
from typing import Any

import torch


def exp(x: Any) -> Any:
    warnings.warn("unclosed file <_io.TextIOWrapper name='x'>", ResourceWarning, stacklevel=2)
    return torch.exp(x)


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
