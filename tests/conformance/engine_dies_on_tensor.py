"""An engine module for the black-box test of generated programs: real torch, except that
`tensor` (a generated program's first statement makes its tensors with it) calls
os._exit(5)."""

from __future__ import annotations

import os
from typing import Any

import torch


def tensor(*args: Any, **kwargs: Any) -> Any:
    os._exit(5)


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
