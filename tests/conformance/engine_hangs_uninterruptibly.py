"""An engine module for the watchdog test: real torch whose `exp` blocks the timer's signal
and then waits forever, as a hang inside C code would: only the watchdog can end it."""

from __future__ import annotations

import signal
import threading
from typing import Any

import torch


def exp(x: Any) -> Any:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    threading.Event().wait()


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
