"""A thread an engine leaves running is its item's error, and no later item sees it.

Round five's leak: an engine thread that changed process state after its item ended changed
a later item's verdict (whichever item ran when it fired). `tests/conformance/
engine_late_thread.py` starts, in `exp`, a thread that sets torch's print precision to 2 as
soon as the engine's next run begins. The pair (the item that starts it, an item that
prints) is run in both orders, in process and under `pytest -n 2`.
"""

from __future__ import annotations

import importlib
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch

from conformance.case.loader import load_case
from conformance.run import isolation, threads
from conformance.run.engine import load_engine
from conformance.run.runner import ERROR, PASS, Item, run_item

ROOT = Path(__file__).resolve().parents[2]
ENGINE = "tests.conformance.engine_late_thread"
HEAD = "description: {}\nfeatures: [grad_mode]\ndevices: [cpu]\ndtypes: [float32]\nprogram: |\n"
STARTER = ("starter.yaml", HEAD.format("starts the engine's thread") +
           "  x = torch.ones(2, requires_grad=True)\n  y = torch.exp(x)\n")
PRINTER = ("printer.yaml", HEAD.format("innocent") +
           "  x = torch.ones(2, requires_grad=True)\n  y = (x * 3).sum()\n"
           "  s = str(torch.tensor([1.23456]))\n")
REASON = ("engine_late_thread left a thread `late` running (started at "
          "engine_late_thread.py:28 `exp`) after running the item")


def item(name: str, text: str) -> Item:
    return Item(load_case(f"cases/{name}", text), "cpu", "float32")


def precision() -> int:
    return int(torch._tensor_str.get_printoptions()["precision"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("order", ["starter-first", "printer-first"])
def test_the_item_that_leaves_a_thread_is_the_error_in_either_order(order: str) -> None:
    engine = load_engine(ENGINE)
    pair = [STARTER, PRINTER] if order == "starter-first" else [PRINTER, STARTER]
    results = {name: run_item(item(name, text), engine) for name, text in pair * 2}
    assert results["starter.yaml"].verdict == ERROR
    assert REASON in results["starter.yaml"].reason, results["starter.yaml"].reason
    assert results["printer.yaml"].verdict == PASS, results["printer.yaml"].reason
    assert precision() == 4


def test_torchs_own_threads_and_the_harnesss_are_not_the_items() -> None:
    # A thread started from torch's code (as inductor's compile workers are) outlives the
    # run and is left alone; the same thread started from a test's code is stopped.
    done = threading.Event()
    with threads.watch() as left:
        torch_started = threading.Thread(target=done.wait, name="from-torch")
        importlib.import_module("torch").utils.data  # noqa: B018 (a torch module loaded)
        run_from_torch(torch_started)
    assert left == [] and torch_started.is_alive()
    done.set()
    torch_started.join()
    with threads.watch() as left:
        mine = threading.Thread(target=done.wait, name="mine")
        done.clear()
        mine.start()
    assert [t.name for t in left] == ["mine"] and left[0].stopped
    done.set()
    mine.join()


def run_from_torch(thread: threading.Thread) -> None:
    """Start `thread` from a frame whose code is in torch's package: a function compiled
    with a torch file's name stands in for torch's own code starting a worker."""
    source = "def start(t):\n    t.start()\n"
    namespace: dict[str, object] = {}
    exec(compile(source, torch.__file__, "exec"), namespace)
    namespace["start"](thread)  # type: ignore[operator]


def test_a_setting_changed_between_items_is_set_back_before_the_next() -> None:
    engine = load_engine("torch")
    run_item(item(*PRINTER), engine)   # settles torch's state as an item left it
    torch.set_printoptions(precision=2)   # what a thread nobody could stop did meanwhile
    try:
        assert run_item(item(*PRINTER), load_engine("reference_engine")).verdict == PASS
        assert precision() == 4
    finally:
        torch.set_printoptions(precision=4)
    assert isolation.read(torch)["the print options"]["precision"] == 4  # type: ignore[index]


def outcomes(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
             workers: int) -> dict[str, str | None]:
    """Each item's failure message (None: passed), the pair in both orders, each order in
    a directory of its own and repeated, so that under -n 2 each worker meets both."""
    files = []
    for order, pair in (("a", [STARTER, PRINTER]), ("b", [PRINTER, STARTER])):
        for copy in range(3):
            for name, text in pair:
                path = pytester.path / "cases" / f"{order}{copy}" / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                files.append(str(path.relative_to(pytester.path)))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the workers import the test engine
    pytester.runpytest_subprocess(*files, "--engine", ENGINE, "-n", str(workers),
                                  "-p", "no:randomly", "-p", "no:cacheprovider",
                                  "--junitxml=out.xml")
    found: dict[str, str | None] = {}
    for case in ET.parse(pytester.path / "out.xml").getroot().iter("testcase"):
        failure = case.find("failure")
        found[f"{case.get('classname')}::{case.get('name')}"] = (
            None if failure is None else failure.get("message", ""))
    assert len(found) == len(files)
    return found


@pytest.mark.parametrize("workers", [0, 2])
def test_under_pytest_only_the_starters_fail(pytester: pytest.Pytester,
                                            monkeypatch: pytest.MonkeyPatch,
                                            workers: int) -> None:
    found = outcomes(pytester, monkeypatch, workers)
    starters = {k: v for k, v in found.items() if "starter" in k}
    printers = {k: v for k, v in found.items() if "printer" in k}
    assert printers and all(v is None for v in printers.values()), printers
    assert starters and all(v is not None and REASON in v for v in starters.values()), starters
