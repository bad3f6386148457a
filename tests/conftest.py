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
