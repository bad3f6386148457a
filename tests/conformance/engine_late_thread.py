"""An engine module for the thread check: real torch, except that its `exp` starts a thread
that waits until the engine's next run has begun (a later item: `conformance_reset` is
called before each run) and then sets torch's print precision to 2. Deterministic: the
change lands inside the next item's run whatever the timing, unless the thread is stopped."""

from __future__ import annotations

import threading
import time
from typing import Any

import torch

RUNS = [0]


def conformance_reset() -> None:
    RUNS[0] += 1


def _late(started_in: int) -> None:
    while RUNS[0] == started_in:
        time.sleep(0.001)
    torch.set_printoptions(precision=2)


def exp(x: Any) -> Any:
    threading.Thread(target=_late, args=(RUNS[0],), daemon=True, name="late").start()
    return torch.exp(x)


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
