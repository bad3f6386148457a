"""The harness's cost on one long program, against torch alone: it must grow linearly.

The program is a chain of N statements over a few live names: a leaf `x`, a constant `w`,
and `y` rebound by each statement through a repeating mix of ops (`y = y * 1.0001`,
`y = y + w`, `y = y.sin()`, `y = (y * w).tanh()` ...), so that `y`'s graph grows with the
chain (its signature stops at tensor_read.MAX_GRAPH_NODES nodes) while `x` and `w` stay as
they are; a last statement `s = y.sum()`.

For each N (default 1k, 4k, 16k statements) it records, as the median of --repeats:

- harness: numbering the statements, the interpreter's run on torch and on the reference
  engine (observing after every statement), and the comparison of the two traces;
- torch alone: the same statements printed back to Python, compiled before timing, and
  executed in order on torch (as the floor of benchmarks/generated_throughput.py);

in this process's CPU time (`time.process_time`; the machine is shared), with
`torch.set_num_threads(1)`, and the time per statement, whose flatness across N is the
linearity asked for. `--full-snapshots` also times the reference observation (every live
name after every statement).

conformance.run.limits.MAX_STATEMENTS (10,000 executed statements per run) refuses a 16k
chain: for this measurement the limit is raised to the chain's length, and the result says
so (`statements_limit_raised_to`). The trace memory budget (MAX_TRACE_BYTES) holds.

    python benchmarks/chain_scaling.py [--lengths 1000 4000 16000] [--repeats 3] [--save]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from conformance.case.language import parse
from conformance.case.program import Program, _ast_stmt
from conformance.gen.program_check import number
from conformance.run import limits
from conformance.run.compare import compare
from conformance.run.engine import load_engine
from conformance.run.interpreter import run_program

clock = time.process_time
MIX = ("y = y * 1.0001", "y = y + w", "y = y.sin()", "y = y * 1.0001", "y = (y * w).tanh()",
       "y = y - 0.001 * w")


def chain(n: int) -> Program:
    """A program of `n` statements (see the module)."""
    head = ["x = torch.ones(4, requires_grad=True)", "w = torch.full((4,), 0.5)",
            "y = x * 1.0"]
    body = [MIX[i % len(MIX)] for i in range(n - len(head) - 1)]
    return parse("\n".join([*head, *body, "s = y.sum()"]) + "\n")


def time_harness(program: Program, full: bool) -> float:
    torch_engine, engine = load_engine("torch"), load_engine("reference_engine")
    start = clock()
    numbered = number(program)
    expected = run_program(torch_engine, numbered, full_snapshots=full)
    actual = run_program(engine, numbered, full_snapshots=full)
    result = compare(expected, actual, "float32")
    elapsed = clock() - start
    assert len(expected.steps) == len(actual.steps) == len(program.body), \
        "the chain did not run to its end"
    assert result.divergence is None, result.divergence
    return elapsed


def time_torch(program: Program) -> float:
    codes = [compile(ast.fix_missing_locations(ast.Module([_ast_stmt(s)], type_ignores=[])),
                     "<chain>", "exec") for s in program.body]
    namespace: dict[str, Any] = {"torch": torch}
    start = clock()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for code in codes:
            with contextlib.suppress(Exception):
                exec(code, namespace)  # the benchmark's own program, on torch alone
    return clock() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[1000, 4000, 16000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--full-snapshots", action="store_true")
    parser.add_argument("--save", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 100_000))  # parse of a long chain
    default_limit = limits.MAX_STATEMENTS
    limits.MAX_STATEMENTS = max(default_limit, max(args.lengths))
    load_before = os.getloadavg()
    rows = []
    for n in args.lengths:
        program = chain(n)
        row: dict[str, Any] = {"statements": n}
        modes = [False, True] if args.full_snapshots else [False]
        for full in modes:
            key = "harness_full_snapshots_s" if full else "harness_s"
            row[key] = round(statistics.median(time_harness(program, full)
                                               for _ in range(args.repeats)), 3)
        row["torch_alone_s"] = round(statistics.median(time_torch(program)
                                                       for _ in range(args.repeats)), 4)
        row["harness_us_per_statement"] = round(1e6 * row["harness_s"] / n, 1)
        row["torch_us_per_statement"] = round(1e6 * row["torch_alone_s"] / n, 2)
        row["ratio"] = round(row["harness_s"] / row["torch_alone_s"], 1)
        print(json.dumps(row), flush=True)
        rows.append(row)
    first, last = rows[0], rows[-1]
    result = {
        "benchmark": "harness (torch + reference engine + compare) on one chain of N "
                     "statements, against torch alone",
        "median_of": args.repeats,
        "rows": rows,
        "per_statement_growth_first_to_last": round(
            last["harness_us_per_statement"] / first["harness_us_per_statement"], 2),
        "statements_limit_default": default_limit,
        "statements_limit_raised_to": None if default_limit == limits.MAX_STATEMENTS
        else limits.MAX_STATEMENTS,
        "machine": {"python": platform.python_version(), "torch": torch.__version__,
                    "processor": platform.processor() or platform.machine(),
                    "cpus": os.cpu_count(),
                    "load_average_1min_before_after": [round(load_before[0], 2),
                                                       round(os.getloadavg()[0], 2)]},
        "clock": "process CPU time",
        "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(result, indent=1))
    if args.save:
        out = Path(__file__).parent / "results" / "chain_scaling.json"
        out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"saved to {out}")


if __name__ == "__main__":
    main()
