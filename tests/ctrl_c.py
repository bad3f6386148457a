"""Ctrl-C as a terminal delivers it, for the tests that send their run SIGINT.

A process started in the background by a non-interactive shell (`pytest ... &` in a script,
as a long profile of the suite is started) inherits SIGINT ignored (SIG_IGN), and so do the
processes it starts. Python then installs no KeyboardInterrupt handler, a SIGINT does
nothing, and a test that checks what a Ctrl-C does to a run sees the run pass: the five
Ctrl-C items of test_faulty_engines.py and test_report_run.py exited OK instead of
INTERRUPTED in the whole-suite profile of 8792e21 (benchmarks/README.md), and pass once the
handler is Python's own again. Python's handler, not SIG_DFL, in this process: a child's
exec resets a handled signal to SIG_DFL, and its Python then installs its own handler, as
in a terminal.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def ctrl_c_raises() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt here and in the processes started inside, even where
    this process inherited it ignored; the handler before is restored after."""
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
