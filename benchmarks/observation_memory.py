"""Peak memory of observing a large tensor in a loop: the observation budget at work.

The program binds a 10 MB float32 tensor and runs a 64-step loop in which it stays visible
(and a second 10 MB tensor is made each step). Every step snapshots every visible tensor;
above `limits.SUMMARY_THRESHOLD` elements a snapshot is a summary, not a copy. Each
measurement is one fresh process running the item (torch, then the reference engine, then
the comparison) through `conformance.run.runner.run_item`, and reports its peak resident set size
(`ru_maxrss`), next to the peak of a process that only imports and runs a one-statement
program (the fixed cost of torch, NumPy and the harness).

    python benchmarks/observation_memory.py [--repeats 3] [--copies] [--save]

--copies also measures the behaviour before the budget (every tensor copied at every step;
needs about 3 GB). With --save the result is written to
benchmarks/results/observation_memory.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_MB = 500
ELEMENTS = 10 * 2**20 // 4  # 10 MB of float32
PROGRAM = f"x = torch.rand({ELEMENTS})\nfor i in range(64):\n    y = x * 2\n"
BASELINE = "x = torch.rand(3)\n"

# Runs in the child: one item on torch and the reference engine; prints verdict and peak RSS.
CHILD = """
import json, resource, sys
from conformance.run import limits
from conformance.run.engine import load_engine
from conformance.case.loader import load_case
from conformance.run.runner import Item, run_item
if sys.argv[2] == "copies":  # the behaviour before the budget: copy everything, no budget
    limits.SUMMARY_THRESHOLD = limits.MAX_TRACE_BYTES = 1 << 62
text = "description: memory\\nfeatures: [ops]\\ndevices: [cpu]\\nprogram: |\\n" + "".join(
    "  " + line + "\\n" for line in sys.argv[1].splitlines())
case = load_case("cases/benchmark/observation_memory.yaml", text)
result = run_item(Item(case, "cpu", "float32"), load_engine("reference_engine"))
print(json.dumps({"verdict": result.verdict, "reason": result.reason,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(program: str, mode: str = "summaries") -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", CHILD, program, mode], check=True,
                         capture_output=True, text=True)
    result: dict[str, object] = json.loads(out.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--copies", action="store_true")
    parser.add_argument("--save", action="store_true")
    args = parser.parse_args()
    runs = [measure(PROGRAM) for _ in range(args.repeats)]
    baselines = [measure(BASELINE) for _ in range(args.repeats)]
    for r in runs:
        if r["verdict"] != "pass":
            sys.exit(f"the program did not pass: {r}")
    peaks = [float(r["peak_mb"]) for r in runs]  # type: ignore[arg-type]
    base = [float(r["peak_mb"]) for r in baselines]  # type: ignore[arg-type]
    result: dict[str, object] = {
        "benchmark": "peak RSS of the 64-step program with a visible 10 MB tensor",
        "program": PROGRAM, "target_mb": TARGET_MB,
        "median_peak_mb": round(statistics.median(peaks), 1),
        "runs_peak_mb": [round(p, 1) for p in peaks],
        "median_baseline_mb": round(statistics.median(base), 1),
        "machine": f"Python {platform.python_version()}, {platform.machine()}",
        "date": time.strftime("%Y-%m-%d"),
    }
    if args.copies:
        copies = measure(PROGRAM, "copies")
        result["copies_peak_mb"] = round(float(copies["peak_mb"]), 1)  # type: ignore[arg-type]
    import torch  # only for the record of the version measured

    result["machine"] = f"{result['machine']}, torch {torch.__version__}"
    print(json.dumps(result, indent=2))
    if args.save:
        path = Path(__file__).parent / "results" / "observation_memory.json"
        path.write_text(json.dumps(result, indent=2) + "\n")
        print(f"saved to {path}")


if __name__ == "__main__":
    main()
