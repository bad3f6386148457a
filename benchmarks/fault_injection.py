"""How many injected backward faults the `default` profile's generated programs find.

For every differentiable op the generator calls (conformance.gen.ops.generated_ops), a
copy of the reference engine gets that op's backward wrong (its nodes return their first
gradient negated: conformance.gen.fault_injection), and the default profile's 250 programs
(derandomized, as `autograd-conformance run` draws them) run on it against the unfaulted
engine. An op is detected when some program diverges. Deterministic: the same programs
and the same verdicts on every run; the time is reported for information only.

    python benchmarks/fault_injection.py [--programs 250] [--save]

With --save the result is written to benchmarks/results/fault_injection.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import torch

from conformance.gen.fault_injection import FaultSearch
from conformance.gen.ops import generated_ops
from conformance.gen.strategies import sample_programs

RESULT = Path(__file__).parent / "results" / "fault_injection.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=250)
    parser.add_argument("--save", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    search = FaultSearch(sample_programs(args.programs))
    rows = []
    for op in generated_ops():
        found = search.detect(op.name)
        rows.append({"op": op.name, "nodes": list(found.targets),
                     "detected_by_program": found.detected_by})
        verdict = f"found by program {found.detected_by}" if found.detected else "MISSED"
        print(f"{op.name:<14} {verdict:<24} {', '.join(found.targets)}", flush=True)
    missed = [r["op"] for r in rows if r["detected_by_program"] is None]
    result = {
        "what": "injected backward faults (first gradient negated) the default profile's "
                "generated programs alone detect, one op at a time, against the unfaulted "
                "reference engine",
        "programs": args.programs,
        "detected": len(rows) - len(missed),
        "total": len(rows),
        "missed": missed,
        "ops": rows,
        "seconds": round(time.perf_counter() - start, 1),
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
    print(f"detected {result['detected']}/{result['total']}; missed: {missed or 'none'}; "
          f"{result['seconds']} s")
    if args.save:
        RESULT.write_text(json.dumps(result, indent=2) + "\n")
        print(f"saved to {RESULT}")


if __name__ == "__main__":
    main()
