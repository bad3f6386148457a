"""An engine module for the OpInfo items' tests: a copy of the reference engine whose mul
backward (MulBackward0) returns its first gradient with the wrong sign
(conformance/gen/fault_injection.py)."""

from __future__ import annotations

from typing import Any

from conformance.gen.fault_injection import WrongSign, engine_copy

_module = engine_copy("opinfo_wrong_mul_engine")
WrongSign(_module, frozenset({"MulBackward0"}))


def __getattr__(name: str) -> Any:
    return getattr(_module, name)
