"""The shipped compiled autograd adapter: it finds compiled autograd's divergences, agrees
where compiled autograd does, and refuses a backend it does not know."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conformance.case.loader import load_case
from conformance.run.engine import load_engine
from conformance.run.runner import DIVERGES, PASS, Item, run_item

ROOT = Path(__file__).resolve().parents[2]
NAME = "conformance.engines.compiled_autograd"


def _item(path: str) -> Item:
    return Item(load_case(ROOT / path), "cpu", "float32")


def test_the_adapter_finds_the_hook_order_divergence_and_passes_elsewhere() -> None:
    engine = load_engine(NAME)
    result = run_item(_item("cases/hooks/hook_on_multi_output_node_outputs.yaml"), engine)
    assert result.verdict == DIVERGES and result.divergence is not None
    assert result.divergence.field == "events"
    assert result.divergence.expected == ["lambda@3:24", "lambda@4:24"]
    assert result.divergence.actual == ["lambda@4:24", "lambda@3:24"]
    # a case with hooks, a backward and its .grad checks: compiled autograd agrees
    ok = run_item(_item("cases/retain_graph/backward_twice.yaml"), engine)
    assert ok.verdict == PASS, ok.reason


def test_a_reentrant_backward_in_a_hook_runs_as_compiled_autograd_runs_it() -> None:
    # A hook's body runs a nested backward while compiled autograd's graph runs (under its
    # own _disable()): the adapter must not switch compiled autograd on again around the
    # hook's statements, which made this item fail with "Trying to run compiled autograd
    # within another compiled autograd call", an error plain torch does not give.
    engine = load_engine(NAME)
    result = run_item(
        _item("cases/test_autograd/reentrant/test_reentrant_with_non_leaf_variable_hook.yaml"),
        engine)
    assert result.verdict == PASS, result.divergence


def test_an_unknown_backend_is_refused_with_the_choices() -> None:
    env = {**os.environ, "CONFORMANCE_CA_BACKEND": "fast", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", f"import {NAME}"], env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert "none, eager, aot_eager, inductor" in done.stderr
