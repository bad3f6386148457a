"""An engine module for plugin tests: real torch whose `exp` sends its own process SIGINT, as
a user's Ctrl-C does, and whose `log` and `sqrt` are sent SIGINT and SIGTERM (a CI job's
timeout) and swallow the KeyboardInterrupt that follows. Each time the run must end,
interrupted, whatever the engine did."""

from __future__ import annotations

import contextlib
import os
import signal
from typing import Any

import torch


def exp(x: Any) -> Any:
    os.kill(os.getpid(), signal.SIGINT)
    return torch.exp(x)


def log(x: Any) -> Any:
    with contextlib.suppress(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
    return torch.log(x)


def sqrt(x: Any) -> Any:
    with contextlib.suppress(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)
    return torch.sqrt(x)


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
