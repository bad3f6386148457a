"""How many injected backward faults the `default` profile's generated programs find.

For every differentiable op the generator calls (conformance.gen.op_table.generated_ops), a
copy of the reference engine gets that op's backward wrong (its nodes return their first
gradient negated: conformance.gen.fault_injection), and the default profile's 250 programs
(derandomized, as `autograd-conformance run` draws them) run on it against the unfaulted
engine. An op is detected when some program diverges. Deterministic: the same programs
and the same verdicts on every run; the time is reported for information only.

    python benchmarks/fault_injection.py [--programs 250] [--sample N --seed S]
        [--jvp [--table FORWARD]] [--save]

`--sample N` injects into N of the ops only, drawn with random.Random(S) (the whole table
takes long on a loaded machine); the result records the sample and its seed. `--ops A,B`
injects into the named ops only (recorded as `only`).

`--jvp` breaks each op's forward-mode formulas instead (the tangent its nodes' OpSpecs
compute, negated: WrongTangent; for a view op, which has no formula, the tangent the
forward-view machinery makes for its views): a fault no program's tangent went through is
"not reached", apart from the missed ones. `--table FORWARD` draws the programs from
strategies.FORWARD (every action a dual-level block) rather than the default profile's mix.

With --save the result is written to benchmarks/results/fault_injection.json
(fault_injection_jvp.json, fault_injection_jvp_forward.json with --jvp), or to --output.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from pathlib import Path

import torch

from conformance.gen import strategies
from conformance.gen.fault_injection import FaultSearch
from conformance.gen.op_table import generated_ops
from conformance.gen.strategies import sample_programs
from reference_engine import registry

RESULT = Path(__file__).parent / "results" / "fault_injection.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=250)
    parser.add_argument("--sample", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ops", help="comma-separated op names: inject into these only")
    parser.add_argument("--jvp", action="store_true")
    parser.add_argument("--table", choices=("default", "FORWARD"), default="default")
    parser.add_argument("--save", action="store_true")
    parser.add_argument("--output", help="with --save, write the result here instead")
    args = parser.parse_args()
    table = strategies.WEIGHTED if args.table == "default" else strategies.FORWARD
    start = time.perf_counter()
    ops = list(generated_ops())
    if args.sample is not None:
        ops = sorted(random.Random(args.seed).sample(ops, min(args.sample, len(ops))),
                     key=ops.index)
    if args.ops:
        names = args.ops.split(",")
        unknown = sorted(set(names) - {op.name for op in ops})
        if unknown:
            parser.error(f"not generated ops: {', '.join(unknown)}")
        ops = [op for op in ops if op.name in names]
    search = FaultSearch(sample_programs(args.programs, actions=table))
    rows = []
    for op in ops:
        found = search.detect(op.name, jvp=args.jvp)
        rows.append({"op": op.name, "nodes": list(found.targets),
                     "detected_by_program": found.detected_by, "reached": found.reached})
        verdict = ("no backward node" if not found.targets else
                   f"found by program {found.detected_by}" if found.detected else
                   "MISSED" if found.reached else "not reached")
        print(f"{op.name:<24} {verdict:<24} {', '.join(found.targets)}", flush=True)
    # a row whose forward builds no node on real inputs (positive, conj, contiguous: the
    # input itself or an alias) has no backward to break: not injected
    no_node = [r["op"] for r in rows if not r["nodes"]]
    rows = [r for r in rows if r["nodes"]]
    missed = [r["op"] for r in rows if r["detected_by_program"] is None and r["reached"]]
    unreached = [r["op"] for r in rows if not r["reached"]]
    what = ("injected JVP faults (the tangent of the op's nodes' formulas, or of its views, "
            "negated)" if args.jvp else "injected backward faults (first gradient negated)")
    result = {
        "what": f"{what} the {args.table} table's generated programs alone detect, one op "
                "at a time, against the unfaulted reference engine",
        "programs": args.programs,
        "table": args.table,
        "generated_ops": len(generated_ops()),
        "sample": None if args.sample is None else {"ops": args.sample, "seed": args.seed},
        "only": args.ops.split(",") if args.ops else None,
        "not_generated": len(registry.NOT_GENERATED),
        "detected": sum(r["detected_by_program"] is not None for r in rows),
        "total": len(rows),
        "missed": missed,
        "not_reached": unreached,
        "no_backward_node": no_node,
        "ops": rows,
        "seconds": round(time.perf_counter() - start, 1),
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
    print(f"detected {result['detected']}/{result['total']}; missed: {missed or 'none'}; "
          f"not reached: {unreached or 'none'}; {result['seconds']} s")
    if args.save:
        path = Path(args.output) if args.output else RESULT if not args.jvp else \
            RESULT.with_name("fault_injection_jvp.json" if args.table == "default"
                             else "fault_injection_jvp_forward.json")
        path.write_text(json.dumps(result, indent=2) + "\n")
        print(f"saved to {path}")


if __name__ == "__main__":
    main()
