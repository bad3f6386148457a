"""An engine module for containment tests: real torch, except that `exp` raises
KeyboardInterrupt itself (no signal), `sin` raises SystemExit, `cos` MemoryError, and `tan` and
`sinh` other BaseExceptions (its own, GeneratorExit). Each is
that item's error, and the run goes on."""

from __future__ import annotations

import sys
from typing import Any

import torch


def exp(x: Any) -> Any:
    raise KeyboardInterrupt


def sin(x: Any) -> Any:
    sys.exit(3)


def cos(x: Any) -> Any:
    raise MemoryError("engine_faults: cos ran out of memory\n(a second line)")


class EngineStop(BaseException):
    """An engine's own BaseException (not an Exception), as `tan` raises it."""


def tan(x: Any) -> Any:
    raise EngineStop("engine_faults: tan stops")


def sinh(x: Any) -> Any:
    raise GeneratorExit


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
