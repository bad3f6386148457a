"""Fixtures shared by the harness's tests."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture
def no_cycle_collector() -> Iterator[None]:
    # Only reference counting frees: what a cycle holds stays, as it may between two
    # collections of a real run, so a freeing test measures the engine, not the collector.
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
