"""Engine modules for the time-limit tests: real torch whose `exp` never returns."""

from __future__ import annotations

import time
from typing import Any

import torch


def exp(x: Any) -> Any:
    # A Python loop: the item timer's signal interrupts it.
    while True:
        time.sleep(0.05)


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
