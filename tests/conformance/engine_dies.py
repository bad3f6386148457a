"""An engine module for the black-box tests: real torch, except ops that end or stop their
process where no Python code runs to report it. `exp` hangs in C holding the GIL (the timer's
signal handler never runs: only the watchdog ends it), `sin` segfaults, `cos` is killed with
SIGKILL (as the kernel's OOM killer kills), `log` calls os._exit(3)."""

from __future__ import annotations

import ctypes
import os
import signal
from typing import Any

import torch

_WITH_THE_GIL = ctypes.PyDLL(None)  # the process's C library; PyDLL calls keep the GIL


def exp(x: Any) -> Any:
    mutex = ctypes.create_string_buffer(64)  # zeroed: an unlocked default pthread mutex
    _WITH_THE_GIL.pthread_mutex_lock(mutex)
    _WITH_THE_GIL.pthread_mutex_lock(mutex)  # a default mutex locked again: waits forever


def sin(x: Any) -> Any:
    return ctypes.string_at(0)  # reads address 0: SIGSEGV


def cos(x: Any) -> Any:
    os.kill(os.getpid(), signal.SIGKILL)


def log(x: Any) -> Any:
    os._exit(3)


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
