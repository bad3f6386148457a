"""An engine module for containment tests: real torch, except that `exp` raises
KeyboardInterrupt itself (no signal), `sin` raises SystemExit and `cos` MemoryError (each is
that item's error; the run goes on), and `log` is sent SIGINT, as by a user's Ctrl-C, and
`sqrt` SIGTERM, as by a CI job's timeout, and each swallows the KeyboardInterrupt that
follows (the run must end all the same)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Any

import torch


def exp(x: Any) -> Any:
    raise KeyboardInterrupt


def sin(x: Any) -> Any:
    sys.exit(3)


def cos(x: Any) -> Any:
    raise MemoryError("engine_faults: cos ran out of memory\n(a second line)")


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
