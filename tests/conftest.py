"""Settings of the test suite's processes (pytest loads this before any test module).

torch runs on one thread in every process of the suite. The suite's parallelism is its
processes: xdist's workers (`pytest -n auto`, one per core) and the pytest and `run`
processes its tests start. torch's own intra-op threads (OpenMP, one per core in each
process) on top of them oversubscribe the cores, and an op whose kernel is parallel then
waits at its barrier for a thread that another process holds the core from:
`opinfo/nn.functional.unfold::cpu-float64` (652 calls of torch's im2col) took 22-24 s of
wall time and 5.5 s of CPU with two threads, 4.4-5.2 s and 1.1 s with one (load 19;
benchmarks/README.md, issue 26). Set in the environment before torch is imported, so that
every process the suite starts inherits it; a value already set is kept (`OMP_NUM_THREADS=2
pytest ...` measures the other way).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.ctrl_c import ctrl_c_raises

os.environ.setdefault("OMP_NUM_THREADS", "1")
if "torch" in sys.modules:  # imported before this file (by a plugin): set it at run time too
    sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

# torch._dynamo is imported here, in every process of the suite, before any test. Tests that
# run pytest in-process (pytester) restore sys.modules afterwards, dropping the modules the
# inner run imported; torch's first `checkpoint` (which every case run's warm-up makes:
# conformance.run.interpreter.WARM_UPS) imports torch._dynamo, and with it
# torch._inductor.test_operators, which registers the `_inductor_test` operator library in
# torch's C++ dispatcher. That registration outlives sys.modules, so the next import of the
# module (by any later checkpoint, compile or dispatch mode in that worker) raised "Only a
# single TORCH_LIBRARY can be used to register the namespace _inductor_test", and every later
# item of the worker that reached dynamo failed (41 items in one CI run).
import torch._dynamo  # noqa: F401


# xdist's default scheduler for `-n` (`load`) hands each worker a first chunk of an eighth of
# the items in collection order and never moves them: gw0's first 1457 items are all of
# tests/conformance (its subprocess, fault-injection and generated-program tests) and a third
# of tests/reference_engine; gw1 takes the rest in refills. When gw0's chunk runs long (load, a
# slow item), gw1 runs out and waits for it: in the whole-suite profile of 0966c41 under load,
# gw0 had run 134 items of its chunk in 1533 s while gw1 ran 5566 (benchmarks/README.md).
# `worksteal` gives each worker half and lets an idle worker take half of the other's pending
# items, so the wait is at most the items in flight. On CPU times alone the two end together
# (benchmarks/xdist_replay.py): this guards against a tail, it does not make items cheaper.
# An explicit `--dist` is kept; without xdist (-p no:xdist) the hook is never called.
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    args = [*config.invocation_params.args, *os.environ.get("PYTEST_ADDOPTS", "").split()]
    if config.getoption("dist") != "load" or any(
            arg == "-d" or arg.startswith("--dist") for arg in args):
        return None
    from xdist.scheduler import WorkStealingScheduling

    return WorkStealingScheduling(config, log)


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """For a test that sends its run SIGINT: Ctrl-C raises KeyboardInterrupt in this process
    and in those it starts, even where the suite was started with SIGINT ignored
    (tests/ctrl_c.py)."""
    with ctrl_c_raises():
        yield
