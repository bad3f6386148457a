"""The engine under test (--engine), loaded once per process: case items, OpInfo items and
the generated-program fixture share it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conformance.run.engine import Engine, load_engine

ENGINES: dict[str, Engine] = {}


def configured_engine(config: pytest.Config) -> Engine:
    name = config.getoption("--engine")
    cached = ENGINES.get(name)
    # pytester's in-process runs drop the modules they imported when they end: an engine
    # first imported inside one is imported again, or its lazy imports would build a second
    # copy of its classes beside the first and fail later items (isinstance checks)
    if cached is None or sys.modules.get(name) is not cached.module:
        # the invocation directory, also in xdist workers: `--engine my_engine` finds
        # my_engine.py there, as the printed rerun commands expect
        ENGINES[name] = load_engine(name, Path(config.invocation_params.dir))
    return ENGINES[name]
