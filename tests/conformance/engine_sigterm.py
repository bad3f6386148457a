"""An engine module for plugin tests: real torch whose `exp` has the run's process sent
SIGTERM, as a CI job's timeout does."""

from __future__ import annotations

import os
import signal
from typing import Any

import torch


def exp(x: Any) -> Any:
    os.kill(os.getpid(), signal.SIGTERM)
    return torch.exp(x)


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
