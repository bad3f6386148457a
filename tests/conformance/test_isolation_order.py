"""No verdict depends on what ran before it: a polluting case beside innocent ones.

The polluting case passes the loader (a plain `torch.set_grad_enabled(False)` call is part
of the language) and leaves grad mode off. It is put first, in the middle and last of the
innocent files, the three orders one after another (each in a directory of its own) in one
run with 0 workers and in one with 2: in both runs every innocent item passes and the
polluter's items fail naming what they changed. (One run per worker count, not per order:
a pytest process costs seconds of CPU to start, an item milliseconds.) A control run with
the harness's restoration switched off shows that the innocent items are ones the polluter
does break.
"""

from __future__ import annotations

import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest

from conformance.plugin import collection
from conformance.run.engine import Engine

POLLUTER = ("pollute.yaml", """\
description: leaves grad mode off
features: [grad_mode]
devices: [cpu]
dtypes: [float32, float64]
program: |
  x = torch.ones(2, requires_grad=True)
  torch.set_grad_enabled(False)
  y = x * 2
  assert not y.requires_grad
""")

_INNOCENT_PROGRAMS = {
    # the example: an nn.Linear built after the polluter
    "linear.yaml": """\
  m = nn.Linear(3, 2)
  assert m.weight.requires_grad
  loss = m(torch.ones(1, 3)).sum()
  loss.backward()
  assert m.weight.grad is not None
""",
    "records.yaml": """\
  assert torch.is_grad_enabled()
  x = torch.ones(2, requires_grad=True)
  y = (x * 3).sum()
  assert y.requires_grad
  y.backward()
  assert_close(x.grad, torch.full((2,), 3.0))
""",
    "parameter.yaml": """\
  p = nn.Parameter(torch.ones(2))
  assert p.requires_grad
  (p * p).sum().backward()
  assert_close(p.grad, torch.full((2,), 2.0))
""",
    "function.yaml": """\
  class Double(torch.autograd.Function):
      @staticmethod
      def forward(ctx, x):
          return x * 2
      @staticmethod
      def backward(ctx, g):
          return g * 2
  x = torch.ones(2, requires_grad=True)
  y = Double.apply(x)
  assert y.grad_fn is not None
  y.sum().backward()
""",
    "no_grad_block.yaml": """\
  x = torch.ones(2, requires_grad=True)
  with torch.no_grad():
      y = x * 2
  z = x * 2
  assert not y.requires_grad
  assert z.requires_grad
""",
}
INNOCENT = {
    name: "description: innocent\nfeatures: [grad_mode]\ndevices: [cpu]\n"
          f"dtypes: [float32, float64]\nprogram: |\n{program}"
    for name, program in _INNOCENT_PROGRAMS.items()
}
NAMES = sorted(INNOCENT)
ORDERS = {
    "polluter-first": [POLLUTER[0], *NAMES],
    "polluter-middle": [*NAMES[:2], POLLUTER[0], *NAMES[2:]],
    "polluter-last": [*reversed(NAMES), POLLUTER[0]],
}
ITEMS_PER_FILE = 2  # cpu x (float32, float64)


def run(pytester: pytest.Pytester, orders: list[str], workers: int) -> dict[str, str | None]:
    """Each item's id and its failure message (None when it passed), from a fresh pytest
    process given the files of each of `orders` (ORDERS' keys) in its order, one order after
    the other, each order's files in a directory named after it."""
    for order in orders:
        for name, text in [POLLUTER, *INNOCENT.items()]:
            path = pytester.path / "cases" / order / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    files = [f"cases/{order}/{name}" for order in orders for name in ORDERS[order]]
    result = pytester.runpytest_subprocess(*files, "-n", str(workers), "--junitxml=out.xml")
    outcomes: dict[str, str | None] = {}
    for case in ET.parse(pytester.path / "out.xml").getroot().iter("testcase"):
        failure = case.find("failure")
        assert case.find("skipped") is None and case.find("error") is None, result.stdout.str()
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = (
            None if failure is None else failure.get("message", ""))
    assert len(outcomes) == ITEMS_PER_FILE * len(files), result.stdout.str()
    return outcomes


@pytest.mark.parametrize("workers", [0, 2])
def test_innocent_items_pass_in_every_order_and_worker_count(
        pytester: pytest.Pytester, workers: int) -> None:
    outcomes = run(pytester, list(ORDERS), workers)
    polluted = {k: v for k, v in outcomes.items() if POLLUTER[0] in k}
    innocent = {k: v for k, v in outcomes.items() if POLLUTER[0] not in k}
    assert len(polluted) == ITEMS_PER_FILE * len(ORDERS)
    assert {o for o in ORDERS for k in polluted if o in k} == set(ORDERS)  # one per order
    assert innocent and all(v is None for v in innocent.values()), innocent
    for message in polluted.values():
        assert message is not None and "error: torch left grad mode disabled (was enabled) " \
            "after running the item; the harness set it back" in message, message


def test_control_without_restoring_the_polluter_breaks_the_innocent(
        pytester: pytest.Pytester) -> None:
    # What the guard prevents: its restoration switched off in the child process only.
    pytester.makeconftest("from conformance.run import isolation\n"
                          "isolation.restore = lambda module, before: []\n")
    outcomes = run(pytester, ["polluter-first"], 0)
    innocent = {k: v for k, v in outcomes.items() if POLLUTER[0] not in k}
    assert innocent and all(v is not None and "case_disagrees_with_torch" in v
               for v in innocent.values()), innocent


def test_an_engine_a_pytester_run_dropped_from_sys_modules_is_imported_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # pytester's in-process runs remove the modules they imported; a cached engine module
    # that is no longer in sys.modules would build a second copy of its classes through its
    # lazy imports, and later items on that worker failed (`Tensor + Tensor` unsupported).
    stale = Engine("reference_engine", types.ModuleType("reference_engine"))
    monkeypatch.setitem(collection.ENGINES, "reference_engine", stale)
    config = SimpleNamespace(getoption=lambda name: "reference_engine",
                             invocation_params=SimpleNamespace(dir=Path.cwd()))
    engine = collection.configured_engine(config)  # type: ignore[arg-type]
    assert engine.module is sys.modules["reference_engine"] is not stale.module
    assert collection.configured_engine(config) is engine  # and it is cached while current
