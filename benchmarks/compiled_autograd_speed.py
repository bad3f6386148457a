"""The case library on the compiled autograd adapter (backend `none`) against the reference
engine, measured in one run: how many times slower the adapter is.

For every cpu item of the library (every case file under cases/, each of its dtypes), each
repetition checks the item as a run does (`runner.run_item`: the program on torch, then on
the engine with its protocol-v2 contexts and per-item reset, with a full snapshot after
every statement, and the comparison), once with the reference engine and once with
`conformance.engines.compiled_autograd`, alternating which goes first. The adapter resets
compiled autograd's cache before every item (see its `conformance_reset`), so every
repetition captures every backward graph afresh. One process, `torch.set_num_threads(1)`.
Both CPU time (this process's own: the machine is shared) and wall-clock time are
recorded; the target is on CPU time.

    python benchmarks/compiled_autograd_speed.py [--repeats 5] [--save]

With --save the result is written to benchmarks/results/compiled_autograd_speed.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import torch

from conformance.case.loader import load_case
from conformance.run.engine import Engine, load_engine
from conformance.run.runner import Item, items_of, run_item

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 10.0


def library_items() -> list[Item]:
    items = []
    for path in sorted((ROOT / "cases").rglob("*.yaml")):
        case = load_case(path)
        items += [i for i in items_of(case) if i.device == "cpu"]
    return items


def run_all(engine: Engine, items: list[Item]) -> tuple[float, float]:
    """(wall-clock, CPU) seconds of checking every item against `engine`."""
    start, cpu = time.perf_counter(), time.process_time()
    for item in items:
        run_item(item, engine)
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--save", action="store_true")
    args = parser.parse_args()
    os.environ["CONFORMANCE_CA_BACKEND"] = "none"
    torch.set_num_threads(1)
    reference = load_engine("reference_engine")
    adapter = load_engine("conformance.engines.compiled_autograd")
    items = library_items()
    names = ("reference_engine", "compiled_autograd")
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    for r in range(args.repeats):
        order = [("reference_engine", reference), ("compiled_autograd", adapter)]
        for name, engine in order if r % 2 == 0 else reversed(order):
            w, c = run_all(engine, items)
            wall[name].append(round(w, 3))
            cpu[name].append(round(c, 3))

    def summary(runs: dict[str, list[float]]) -> dict[str, object]:
        ref, ca = (statistics.median(runs[n]) for n in names)
        return {"median_s": {"reference_engine": ref, "compiled_autograd": ca},
                "ratio": round(ca / ref, 2), "runs_s": runs}

    result = {
        "benchmark": "case library checked item by item (torch, engine, comparison): "
                     "compiled autograd (backend none) vs reference_engine, one process",
        "items": len(items),
        "target_ratio": TARGET_RATIO,
        # the machine is shared: CPU time is this process's own, wall-clock time includes
        # waiting for the cores
        "cpu": summary(cpu),
        "wall": summary(wall),
        "machine": {"python": platform.python_version(), "torch": torch.__version__,
                    "processor": platform.machine()},
        "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(result, indent=1))
    if args.save:
        out = Path(__file__).parent / "results" / "compiled_autograd_speed.json"
        out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"saved to {out}")


if __name__ == "__main__":
    main()
