"""The shipped torch.compile adapter: it compiles the ops a statement calls (their grad_fn is
AOTAutograd's), leaves the harness's own work eager, agrees with torch where torch.compile
does, and refuses a backend it does not know."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conformance.case.loader import load_case
from conformance.run.engine import load_engine
from conformance.run.runner import MASKED, Item, run_item

ROOT = Path(__file__).resolve().parents[2]
NAME = "conformance.engines.torch_compile"


def _item(path: str) -> Item:
    return Item(load_case(ROOT / path), "cpu", "float32")


def test_ops_in_a_statement_are_compiled_and_others_are_not() -> None:
    engine = load_engine(NAME)
    module = engine.module
    module.conformance_reset()
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with module.conformance_statement():
        y = torch.sin(x) * 2          # a function and an operator, both compiled
        z = x.detach().sin()           # no input requires grad: eager
    assert type(y.grad_fn).__name__ == "CompiledFunctionBackward"
    assert z.grad_fn is None
    outside = torch.sin(x)             # outside a statement: torch itself
    assert type(outside.grad_fn).__name__ == "SinBackward0"
    y.sum().backward()                 # through the compiled backward graphs
    assert torch.allclose(x.grad, 2 * torch.cos(x.detach()))


def test_in_place_ops_stay_eager_even_where_they_are_registry_rows() -> None:
    """`fill_`, `zero_`, `copy_` and `as_strided_` are rows of the vocabulary: compiled, the
    program's own tensor would not be the one changed (a compiled function returns a new
    tensor), so like every `_` form they run eagerly."""
    module = load_engine(NAME).module
    module.conformance_reset()
    assert {"fill_", "zero_", "copy_", "as_strided_"}.isdisjoint(module.COMPILED)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    eager = (x * 1).fill_(3.0)          # outside a statement: torch itself
    with module.conformance_statement():
        y = x * 1                       # compiled
        y.fill_(3.0)                    # eager: torch's own node, on y itself
    assert type(y.grad_fn).__name__ == type(eager.grad_fn).__name__ != \
        "CompiledFunctionBackward"
    assert y._version == 1 and y.tolist() == [3.0, 3.0]


def test_an_op_met_on_many_shapes_is_compiled_every_time() -> None:
    """Past dynamo's recompile limit (8) the op's fullgraph function would fail ("Dynamo
    recompile limit exceeded"): the ninth shape of `sin` in one run is compiled too."""
    module = load_engine(NAME).module
    module.conformance_reset()
    nodes = []
    with module.conformance_statement():
        for n in range(1, 10):
            nodes.append(type(torch.sin(torch.ones(n, requires_grad=True)).grad_fn).__name__)
    assert nodes == ["CompiledFunctionBackward"] * 9


def test_a_case_runs_compiled_with_only_the_graph_fields_masked() -> None:
    engine = load_engine(NAME)
    result = run_item(_item("cases/retain_graph/backward_twice.yaml"), engine)
    # Every op's grad_fn is CompiledFunctionBackward: masked (never a pass), and nothing else
    # differs.
    assert result.verdict == MASKED, result.reason
    assert "CompiledFunctionBackward" in result.reason, result.reason


def test_an_unknown_backend_is_refused_with_the_choices() -> None:
    env = {**os.environ, "CONFORMANCE_TC_BACKEND": "fast", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", f"import {NAME}"], env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode != 0
    assert "aot_eager, inductor" in done.stderr


@pytest.mark.xfail(strict=False, reason=(
    "intermittent on a cold inductor cache: on a fresh machine (stop 35's CI) diagonal's "
    "compile gave a warning the warm-up did not absorb, in one of two concurrent fresh "
    "processes, and neither once the on-disk cache was warm; the expectations file lists "
    "diagonal's warning as [pass, diverges] for the same reason; the cause is not found"))
def test_inductors_first_compile_warnings_land_in_the_warm_up_not_in_an_item() -> None:
    # Inductor's first compile in a process imports modules that warn once (a FutureWarning
    # about torch._prims_common.check): the first item of a worker would diverge on it and
    # its twin pass. The warm-up compiles an op and its backward before any item.
    script = (
        "from conformance.case.loader import load_case\n"
        "from conformance.run.engine import load_engine\n"
        "from conformance.run.runner import Item, run_item\n"
        f"case = load_case({str(ROOT / 'cases/views/diagonal.yaml')!r})\n"
        f"result = run_item(Item(case, 'cpu', 'float32'), load_engine({NAME!r}))\n"
        "print(result.verdict, result.divergence and result.divergence.field)\n")
    env = {**os.environ, "CONFORMANCE_TC_BACKEND": "inductor", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["pass", "None"], done.stdout
