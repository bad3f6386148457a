"""An engine module for containment tests: real torch, except that `exp` ends its process with
os._exit, `sin` segfaults and `cos` raises MemoryError."""

from __future__ import annotations

import ctypes
import os
from typing import Any

import torch


def exp(x: Any) -> Any:
    os._exit(3)


def sin(x: Any) -> Any:
    return ctypes.string_at(0)  # reads address 0: SIGSEGV


def cos(x: Any) -> Any:
    raise MemoryError("engine_killers: cos ran out of memory")


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
