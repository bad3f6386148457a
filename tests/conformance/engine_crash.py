"""An engine module for plugin tests: real torch whose `exp` kills the worker process."""

from __future__ import annotations

import os
from typing import Any

import torch


def exp(x: Any) -> Any:
    os._exit(3)


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
