"""Generated programs checked per second per core, end to end, and its ratio to the floor.

End to end (the numerator) = drawing a program (hypothesis), numbering its statements,
running it on torch and on the reference engine through the interpreter (with the
observation after every statement), and comparing the two traces: what
`conformance.gen.program_check.check` does for a program that agrees (a divergent one is also
printed and parsed, for its report).

The floor (the denominator) = torch alone executing the same programs without any
observation and without the interpreter: each top-level statement of each program is
printed back to Python (`program._ast_stmt`), compiled once before timing, and the timed
part only `exec`s those code objects in order against the real `torch` module, an error
ending that one statement (caught, as the harness goes on past a failing statement);
the median of FLOOR_PASSES such passes. The harness builtins are the cheapest honest
stand-ins: `raises(kind)` a context manager that swallows the error, `warns(kind)` one
that does nothing, `assert_close` a `torch.allclose` check; `torch.rand` and friends are
torch's own (the harness draws its random values from NumPy; the cost is of the same
kind). Warnings are silenced. This is what the programs cost torch itself, with Python's
own dispatch of the statements: no cheaper way of running them exists short of not
running them.

    ratio = (draw + number + torch run + engine run + compare + gc) / floor

and `harness_ratio` leaves the draw out (the run side only); `gc` is the cyclic
collector's work deferred while a program ran (`cyclic_gc_paused`), done when it is
switched back on.

The same run also measures what the parts cost on their own, in the floor's way: the
reference engine executing the same compiled code in torch's place (`engine_floor`), and
hypothesis running as many examples of a test that draws one integer
(`hypothesis_floor`). Their sum with the floor is what a harness with no cost of its own
would take:

    bound_ratio = (hypothesis_floor + floor + engine_floor) / floor
    overhead_ratio = end to end / (hypothesis_floor + floor + engine_floor)

`bound_ratio` is the best ratio this design can reach with this reference engine, and
`overhead_ratio` what the harness (observation, interpreter, comparison, the generator's
own work) multiplies it by. One process, one core
(`torch.set_num_threads(1)`), timed in this process's CPU time (`time.process_time`:
other processes on a shared machine do not count). Each repetition draws the same
programs (derandomized); every figure is the median over repetitions, after one untimed
warm-up of 20 programs.

    python benchmarks/generated_throughput.py [--programs 200] [--repeats 5] [--save]
        [--full-snapshots]

With --save the result is written to benchmarks/results/generated_throughput.json, with
the machine and its load average (other processes share the cores: the ratio, measured in
the same run, moves less with the load than programs/s). --full-snapshots runs the
interpreter with the reference observation (every live name snapshot after every
statement) instead of the incremental one.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import platform
import statistics
import time
import warnings
from pathlib import Path
from types import CodeType
from typing import Any

import torch
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import reference_engine
from conformance.case.program import Program, _ast_stmt
from conformance.gen.program_check import cyclic_gc_paused, number
from conformance.gen.state import GenSettings
from conformance.gen.strategies import programs
from conformance.run.compare import compare
from conformance.run.engine import load_engine
from conformance.run.interpreter import run_program

# Programs of up to about 12 statements, the size the target is stated for.
SIZE = GenSettings(max_actions=6)
TARGET_PER_SECOND = 500
TARGET_RATIO = 4.0
FLOOR_PASSES = 7
# This process's CPU time, not the wall clock: the machine is shared (other processes take
# turns on the same cores), and a core's programs per second is what is asked.
clock = time.process_time


def draw(n: int) -> tuple[list[Program], float]:
    drawn: list[Program] = []

    @settings(max_examples=n, database=None, derandomize=True, phases=[Phase.generate],
              deadline=None, suppress_health_check=list(HealthCheck))
    @given(programs(SIZE))
    def collect(program: Program) -> None:
        drawn.append(program)

    start = clock()
    collect()
    return drawn, clock() - start


# ---- the floor: torch alone -----------------------------------------------------------------
class _Block:
    """A stand-in for the harness's `raises` (swallow: the expected error, or none, ends
    the block either way) and `warns` (lets an error through)."""

    def __init__(self, swallow: bool) -> None:
        self.swallow = swallow

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return self.swallow


def _assert_close_on(module: Any) -> Any:
    """The harness's `assert_close` on `module`'s tensors: an allclose check."""
    def assert_close(actual: Any, expected: Any, rtol: float | None = None,
                     atol: float | None = None) -> None:
        a, b = (x if isinstance(x, module.Tensor) else module.tensor(x)
                for x in (actual, expected))
        if not module.allclose(a.double(), b.double()):
            raise AssertionError("assert_close")
    return assert_close


def compile_floor(program: Program) -> list[CodeType]:
    """Each top-level statement of `program` as a code object (compiled before timing)."""
    codes = []
    for stmt in program.body:
        module = ast.fix_missing_locations(ast.Module([_ast_stmt(stmt)], type_ignores=[]))
        codes.append(compile(module, "<program>", "exec"))
    return codes


def floor_globals(module: Any = torch) -> dict[str, Any]:
    return {"torch": module, "nn": module.nn, "F": module.nn.functional,
            "Variable": module.autograd.Variable,
            "raises": lambda kind: _Block(True), "warns": lambda kind: _Block(False),
            "assert_close": _assert_close_on(module), "range": range, "len": len,
            "float": float, "int": int,
            "__builtins__": {"__build_class__": __build_class__,
                             "staticmethod": staticmethod, "__name__": "floor"}}


def run_floor(compiled: list[list[CodeType]], module: Any = torch) -> float:
    """Seconds `module` alone (torch, or the reference engine in its place) takes to
    execute the compiled programs."""
    default_dtype, grad_enabled = module.get_default_dtype(), module.is_grad_enabled()
    start = clock()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for codes in compiled:
            namespace = floor_globals(module)
            for code in codes:
                with contextlib.suppress(Exception):
                    exec(code, namespace)  # the program's own code, on the module alone
    elapsed = clock() - start
    # a program may have switched global state (as the harness's isolation guard undoes)
    module.set_default_dtype(default_dtype)
    module.set_grad_enabled(grad_enabled)
    return elapsed


def draw_floor(n: int) -> float:
    """Seconds hypothesis takes to run n examples of a test that draws one integer: its
    own cost per example, which any program drawn through it costs at least."""
    @settings(max_examples=n, database=None, derandomize=True, phases=[Phase.generate],
              deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.integers(0, 2 ** 63))
    def one_integer(x: int) -> None:
        pass

    start = clock()
    one_integer()
    return clock() - start


# ---- end to end -----------------------------------------------------------------------------
def run_once(n: int, full_snapshots: bool) -> dict[str, float]:
    torch_engine, engine = load_engine("torch"), load_engine("reference_engine")
    # (the argument only when asked for: the script also measures a checkout from before it)
    mode = {"full_snapshots": True} if full_snapshots else {}
    drawn, t_draw = draw(n)
    t = {"draw": t_draw, "number": 0.0, "torch": 0.0, "engine": 0.0, "compare": 0.0,
         "gc": 0.0}
    statements = []
    for program in drawn:
        t0 = clock()
        parsed = number(program)
        t1 = clock()
        with cyclic_gc_paused():  # as conformance.gen.program_check.check runs a program
            expected = run_program(torch_engine, parsed, continue_on_error=True, **mode)
            t2 = clock()
            actual = run_program(engine, parsed, continue_on_error=True, **mode)
            t3 = clock()
            compare(expected, actual, "float32")
            t4 = clock()
        # the collector's deferred work, done when it is switched back on, is the run's too
        t5 = clock()
        t["number"] += t1 - t0
        t["torch"] += t2 - t1
        t["engine"] += t3 - t2
        t["compare"] += t4 - t3
        t["gc"] += t5 - t4
        statements.append(len(expected.steps))
    # the floor is short (a fraction of a millisecond per program): the median of several
    # passes, so that one preempted pass does not move the ratio
    compiled = [compile_floor(p) for p in drawn]
    floor = statistics.median(run_floor(compiled) for _ in range(FLOOR_PASSES))
    # what the parts cost on their own: the reference engine executing the same code in
    # torch's place, and hypothesis running as many examples of a one-integer test
    engine_floor = statistics.median(run_floor(compiled, reference_engine)
                                     for _ in range(FLOOR_PASSES))
    hypothesis_floor = statistics.median(draw_floor(len(drawn)) for _ in range(3))
    parts = hypothesis_floor + floor + engine_floor
    total = sum(t.values())
    return {"programs": len(drawn), "total_s": total, "per_second": len(drawn) / total,
            "floor_s": floor, "floor_per_program_ms": 1000 * floor / len(drawn),
            "ratio": total / floor, "harness_ratio": (total - t_draw) / floor,
            "engine_floor_s": engine_floor, "hypothesis_floor_s": hypothesis_floor,
            "bound_ratio": parts / floor, "bound_per_second": len(drawn) / parts,
            "overhead_ratio": total / parts,
            "median_steps": statistics.median(statements), "max_steps": max(statements),
            **{f"share_{k}": v / total for k, v in t.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--save", action="store_true")
    parser.add_argument("--full-snapshots", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)  # per core
    load_before = os.getloadavg()
    run_once(20, args.full_snapshots)  # warm-up (imports, caches), not counted
    runs = [run_once(args.programs, args.full_snapshots) for _ in range(args.repeats)]
    load_after = os.getloadavg()
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    result = {
        "benchmark": "generated programs checked per second per core, end to end, and the "
                     "ratio of that cost to torch alone running the same programs",
        "target_per_second": TARGET_PER_SECOND,
        "target_ratio": TARGET_RATIO,
        "snapshots": "full" if args.full_snapshots else "incremental",
        "median": {k: round(v, 4) for k, v in median.items()},
        "runs_per_second": [round(r["per_second"], 1) for r in runs],
        "runs_ratio": [round(r["ratio"], 2) for r in runs],
        "machine": {"python": platform.python_version(), "torch": torch.__version__,
                    "processor": platform.processor() or platform.machine(),
                    "cpus": os.cpu_count(),
                    "load_average_1min_before_after": [round(load_before[0], 2),
                                                       round(load_after[0], 2)]},
        "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(result, indent=1))
    if args.save:
        out = Path(__file__).parent / "results" / "generated_throughput.json"
        out.write_text(json.dumps(result, indent=1) + "\n")
        print(f"saved to {out}")


if __name__ == "__main__":
    main()
