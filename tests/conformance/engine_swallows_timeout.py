"""An engine module for the time-limit tests: real torch whose `exp`, `sin` and `cos` never
return, and where the timer's signal lands first in code whose exceptions Python swallows
("Exception ignored in ..."): a gc callback (`exp`, as hypothesis installs one), a `__del__`
(`sin`) and a weakref callback (`cos`). The item must still end at its time limit.

So that the signal lands there and nowhere else, `ones` (the programs' first statement, run
after torch has run them) blocks it, and the swallowing code unblocks it and waits. What
lands there is appended to the file $SWALLOWED_LOG names, for the test to see."""

from __future__ import annotations

import gc
import os
import signal
import time
import weakref
from typing import Any

import torch


def ones(*args: Any, **kwargs: Any) -> Any:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    return torch.ones(*args, **kwargs)


def _swallowed(place: str) -> None:
    """Where the signal lands: a wait no timer of a test outlasts."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})
    try:
        time.sleep(3600)
    except BaseException as e:
        with open(os.environ["SWALLOWED_LOG"], "a") as log:
            log.write(f"{place}: {type(e).__name__}\n")
        raise


def _forever() -> None:
    while True:
        time.sleep(0.05)


def exp(x: Any) -> Any:
    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            _swallowed("gc callback")

    gc.callbacks.append(callback)
    try:
        # the youngest generation only: the callbacks run as for a full collection, but a
        # full one walks every object of the worker (torch, pytest, the collected items),
        # seconds of wall time on a loaded machine between the timeout and the item's end,
        # which the watchdog, 5 s after the limit, does not wait for
        gc.collect(0)
    finally:
        gc.callbacks.remove(callback)
    _forever()


class _Finalised:
    def __del__(self) -> None:
        _swallowed("__del__")


def sin(x: Any) -> Any:
    _Finalised()  # dropped at once: its __del__ runs here
    _forever()


class _Target:
    pass


def cos(x: Any) -> Any:
    target = _Target()
    ref = weakref.ref(target, lambda r: _swallowed("weakref callback"))
    del target  # the callback runs here
    assert ref() is None
    _forever()


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
