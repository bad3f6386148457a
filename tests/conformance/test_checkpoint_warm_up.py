"""The first checkpoint of a fresh process frees its graph with its output, as later ones do.

torch's first `torch.utils.checkpoint.checkpoint` of a process imports torch._dynamo
(torch/_compile.py), and the import's frames keep that call's arguments, and so the graph it
builds, in a reference cycle: a case watching a checkpointed graph die
(TestNestedCheckpoint's check_graph_dies) would then depend on when the cycle collector runs.
interpreter.WARM_UPS takes that first call. Each check runs in a fresh Python process, with
the collector off, the only place where "first" is true.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import gc
import sys
import weakref

from conformance.run import interpreter
from conformance.run.engine import load_engine

engine = load_engine("torch")
if sys.argv[1] == "warm":
    interpreter.warm_up(engine)
torch = engine.module
gc.disable()


class Handle:
    pass


def scope():
    x = torch.ones(1, requires_grad=True)
    out = torch.utils.checkpoint.checkpoint(lambda t: t.sin(), x, use_reentrant=False)
    handle = Handle()
    out.grad_fn.metadata[0] = handle
    return weakref.ref(handle)


print("alive" if scope()() is not None else "freed")
"""


@pytest.mark.parametrize("warmth", ["warm", "cold"])
def test_first_checkpoint_of_a_process(warmth: str) -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT, warmth], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    # without the warm-up the first graph outlives its output (the cycle above)
    assert out.strip() == ("freed" if warmth == "warm" else "alive")
