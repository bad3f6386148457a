"""The case library on the compiled autograd adapter (backend `none`) against the reference
engine, measured in one run: how many times slower the adapter is.

For every cpu item of the library (every case file under cases/ that loads, each of its
dtypes), each repetition runs the item's program on the reference engine and on
`conformance.engines.compiled_autograd`, with a full snapshot after every statement (what
the engine side of an item costs; torch's own run and the comparison are the same for both
and left out), alternating which engine goes first. The first repetition of the adapter is
also its cold start (compiled autograd captures every distinct backward graph once and
caches it); the medians are over all repetitions, and the cold one is reported apart. One
process, `torch.set_num_threads(1)`.

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

from conformance.engines import Engine, load_engine
from conformance.interpreter import run_program
from conformance.loader import load_case
from conformance.runner import Item, items_of

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 10.0


def library_items() -> list[Item]:
    items = []
    for path in sorted((ROOT / "cases").rglob("*.yaml")):
        case = load_case(path)
        items += [i for i in items_of(case) if i.device == "cpu"]
    return items


def run_all(engine: Engine, items: list[Item]) -> tuple[float, float]:
    """(wall-clock, CPU) seconds of running every item's program on `engine`."""
    start, cpu = time.perf_counter(), time.process_time()
    for item in items:
        run_program(engine, item.case.program, seed=item.case.seed, dtype=item.dtype,
                    device=item.device)
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
        warm = statistics.median(runs["compiled_autograd"][1:] or runs["compiled_autograd"])
        return {"median_s": {"reference_engine": ref, "compiled_autograd": ca},
                "ratio": round(ca / ref, 2),
                "compiled_autograd_cold_s": runs["compiled_autograd"][0],
                "compiled_autograd_warm_median_s": warm,
                "warm_ratio": round(warm / ref, 2), "runs_s": runs}

    result = {
        "benchmark": "case library, engine side: compiled autograd (backend none) vs "
                     "reference_engine, one process",
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
