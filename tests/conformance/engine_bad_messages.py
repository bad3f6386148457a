"""An engine module for containment tests: real torch, except that its errors' messages
cannot be read. `exp`'s exception's `__str__` raises, `tan`'s returns an int, `sqrt`'s
recurses, and `sinh` and `cosh` raise a BaseException and a MemoryError whose `__str__`
raises. Each is that item's error or divergence, never the harness's crash."""

from __future__ import annotations

from typing import Any

import torch


class StrRaises(RuntimeError):
    def __str__(self) -> str:
        raise ValueError("engine_bad_messages: no text")


class StrNotText(RuntimeError):
    def __str__(self) -> Any:
        return 5


class StrRecurses(RuntimeError):
    def __str__(self) -> str:
        return str(self)


class BaseStrRaises(BaseException):
    def __str__(self) -> str:
        raise ValueError("engine_bad_messages: no text")


class MemoryStrRaises(MemoryError):
    def __str__(self) -> str:
        raise ValueError("engine_bad_messages: no text")


def exp(x: Any) -> Any:
    raise StrRaises


def tan(x: Any) -> Any:
    raise StrNotText


def sqrt(x: Any) -> Any:
    raise StrRecurses


def sinh(x: Any) -> Any:
    raise BaseStrRaises


def cosh(x: Any) -> Any:
    raise MemoryStrRaises


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
