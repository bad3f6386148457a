"""Generated programs checked per second per core, end to end, and where the time goes.

End to end = drawing a program (hypothesis), numbering its statements, running it on torch
and on the reference engine (with a full snapshot after every statement), and comparing the
two traces: what `conformance.generated.check` does for a program that agrees (a divergent
one is also printed and parsed, for its report). One process, one core. Each repetition
draws the same programs (derandomized).

    python benchmarks/generated_throughput.py [--programs 200] [--repeats 5] [--save]

With --save the result is written to benchmarks/results/generated_throughput.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import torch
from hypothesis import HealthCheck, Phase, given, settings

from conformance.compare import compare
from conformance.engines import load_engine
from conformance.generated import number
from conformance.interpreter import run_program
from conformance.program import Program
from conformance.strategies import GenSettings, programs

# Programs of up to about 12 statements, the size the target is stated for.
SIZE = GenSettings(max_actions=6)


def draw(n: int) -> tuple[list[Program], float]:
    drawn: list[Program] = []

    @settings(max_examples=n, database=None, derandomize=True, phases=[Phase.generate],
              deadline=None, suppress_health_check=list(HealthCheck))
    @given(programs(SIZE))
    def collect(program: Program) -> None:
        drawn.append(program)

    start = time.perf_counter()
    collect()
    return drawn, time.perf_counter() - start


def run_once(n: int) -> dict[str, float]:
    torch_engine, engine = load_engine("torch"), load_engine("reference_engine")
    drawn, t_draw = draw(n)
    t = {"draw": t_draw, "number": 0.0, "torch": 0.0, "engine": 0.0, "compare": 0.0}
    statements = []
    for program in drawn:
        t0 = time.perf_counter()
        parsed = number(program)
        t1 = time.perf_counter()
        expected = run_program(torch_engine, parsed, continue_on_error=True)
        t2 = time.perf_counter()
        actual = run_program(engine, parsed, continue_on_error=True)
        t3 = time.perf_counter()
        compare(expected, actual, "float32")
        t4 = time.perf_counter()
        t["number"] += t1 - t0
        t["torch"] += t2 - t1
        t["engine"] += t3 - t2
        t["compare"] += t4 - t3
        statements.append(len(expected.steps))
    total = sum(t.values())
    return {"programs": len(drawn), "total_s": total, "per_second": len(drawn) / total,
            "median_steps": statistics.median(statements), "max_steps": max(statements),
            **{f"share_{k}": v / total for k, v in t.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--save", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)  # per core
    runs = [run_once(args.programs) for _ in range(args.repeats)]
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    result = {
        "benchmark": "generated programs checked per second per core, end to end",
        "target_per_second": 300,
        "median": {k: round(v, 4) for k, v in median.items()},
        "runs_per_second": [round(r["per_second"], 1) for r in runs],
        "machine": {"python": platform.python_version(), "torch": torch.__version__,
                    "processor": platform.processor() or platform.machine()},
        "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(result, indent=1))
    if args.save:
        out = Path(__file__).parent / "results" / "generated_throughput.json"
        out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"saved to {out}")


if __name__ == "__main__":
    main()
