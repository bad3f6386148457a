"""Which injected JVP faults the whole suite detects: one fault per registry row with a
forward-mode formula (or a view op's tangent), against the items that reach it.

The fault is conformance.gen.fault_injection.WrongTangent (the tangent the row's nodes'
formulas compute, negated; for a view op, the tangent of its views), in a copy of the
reference engine. The items are the suite's three kinds that run forward mode:

- case items: every YAML case under cases/ whose text names forward mode (`forward_ad`,
  `dual`, `fwAD`, `jvp`, `forward`: a case can reach a tangent no other way), each of its
  devices and dtypes, run through conformance.run.runner.run_item against torch as the
  plugin runs them (expectations not applied: an item that does not agree unfaulted is
  left out, and counted);
- OpInfo items: every covered entry in float32 and float64, its forward-mode (`jvp N`)
  parts only (entry_check.check's `only`): the other parts never make a tangent;
- generated programs: the FORWARD table's and the default profile's first `--programs`
  each, judged against the unfaulted engine as benchmarks/fault_injection.py judges them.

Selection is by reach, not by name: a first pass runs every item on the copy with the
fault observing (WrongTangent.seen: nothing broken, every formula and view op whose tangent
the item made recorded); a fault then runs exactly the items that made one of its nodes'
tangents. A case or OpInfo item detects a fault when its verdict agreed unfaulted and does
not with the fault; an OpInfo item when one of its jvp parts that agreed fails; a program
when it diverges from the unfaulted engine. Rows whose node sets are equal share one fault.

    python benchmarks/jvp_fault_suite.py [--programs 250] [--save]
    python benchmarks/jvp_fault_suite.py --rows mul,exp   # some rows only (not saved)
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from conformance.case.loader import load_case
from conformance.gen.fault_injection import FaultSearch, _specs, grad_fns
from conformance.gen.strategies import FORWARD, WEIGHTED, sample_programs
from conformance.opinfo import database
from conformance.opinfo.entry_check import check, parts_of
from conformance.opinfo.item import covered
from conformance.opinfo.plan import JVP, plan
from conformance.run.engine import Engine
from conformance.run.runner import items_of, run_item, torch_engine
from conformance.run.verdicts import AGREEING
from reference_engine import registry

ROOT = Path(__file__).resolve().parent.parent
RESULT = Path(__file__).parent / "results" / "jvp_fault_suite.json"
VIEWS = ("views", "views_inplace", "views_multi_output", "views_strided")
FORWARD_TEXT = re.compile(r"forward_ad|dual|fwAD|jvp|forward")


class Suite:
    """The items, each with what it makes of the copy now: `outcome(i)` is a hashable
    summary that changes when the item fails (its verdict, or its failing jvp parts)."""

    def __init__(self, search: FaultSearch, programs: int) -> None:
        self.search = search
        self.engine = Engine(search.module.__name__, search.module)
        self.names: list[str] = []
        self.runs: list[Callable[[], Any]] = []
        for path in sorted((ROOT / "cases").rglob("*.yaml")):
            text = path.read_text()
            if not FORWARD_TEXT.search(text):
                continue
            case = load_case(path.relative_to(ROOT), text)
            for item in items_of(case):
                self.names.append(item.id)
                self.runs.append(functools.partial(self._case, item))
        entries = database.autograd_entries()
        for key in covered():
            if key not in entries:
                continue
            for dtype in ("float32", "float64"):
                p = plan(entries[key], key, dtype)
                only = frozenset((k, i) for k, i, _ in parts_of(p) if k == JVP)
                if only:
                    self.names.append(f"opinfo/{key}::cpu-{dtype}")
                    self.runs.append(functools.partial(self._jvp_parts, entries[key], p,
                                                       only))
        self.first_program = len(self.names)
        for name in ("FORWARD", "default"):
            for j in range(programs):
                self.names.append(f"program {name} {j}")
        for j in range(len(search.programs)):
            self.runs.append(functools.partial(search.diverges, j))

    def _case(self, item: Any) -> str:
        return run_item(item, self.engine).verdict

    def _jvp_parts(self, op: Any, p: Any, only: frozenset[tuple[str, int]]) -> frozenset[str]:
        """The jvp parts that do not agree with torch."""
        return frozenset(r.part for r in check(op, p, self.engine, torch_engine(),
                                                self.engine.masks, only=only).parts
                         if r.verdict not in AGREEING)

    def kind(self, i: int) -> str:
        return "program" if i >= self.first_program else \
            "opinfo" if self.names[i].startswith("opinfo/") else "case"


def rows_with_a_jvp(module: Any) -> dict[str, frozenset[str]]:
    """Each registry row whose nodes have a forward-mode formula or are view nodes (the
    view modules' specs: their tangent is a view of the base's), with those nodes."""
    specs = {s.grad_fn: s for s in _specs(module)}
    spec_type = module.autograd_meta.OpSpec
    # the view modules' specs (as tests/reference_engine/test_op_spec.py's NO_JVP), and the
    # view specs that live elsewhere: no formula, reached through forward_ad._view_at
    views = {v.grad_fn for name, sub in list(sys.modules.items())
             if name.startswith(module.__name__ + ".") and name.rsplit(".", 1)[-1] in VIEWS
             for v in vars(sub).values() if isinstance(v, spec_type) and v.jvp is None}
    views |= {"ExpandBackward0", "SqueezeBackward4"}
    out: dict[str, frozenset[str]] = {}
    for row in registry.OPS:
        if row.sample is None:
            continue
        try:
            targets = grad_fns(module, row)
        except Exception:  # a sample the copy refuses (none today): said in the result
            out[row.name] = frozenset()
            continue
        if any(specs[t].jvp is not None for t in targets if t in specs) or targets & views:
            out[row.name] = targets
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=250)
    parser.add_argument("--rows", help="comma-separated registry rows: only these")
    parser.add_argument("--save", action="store_true")
    parser.add_argument("--smoke", type=int, default=0,
                        help="keep the first N items of each kind (a check of the script)")
    args = parser.parse_args()
    start = time.perf_counter()
    programs = [*sample_programs(args.programs, actions=FORWARD),
                *sample_programs(args.programs, actions=WEIGHTED)]
    search = FaultSearch(programs)
    fault = search.jvp_fault
    rows = rows_with_a_jvp(search.module)
    if args.rows:
        rows = {r: t for r, t in rows.items() if r in args.rows.split(",")}
    suite = Suite(search, args.programs)
    if args.smoke:
        kinds = [suite.kind(i) for i in range(len(suite.runs))]
        keep = [i for i, k in enumerate(kinds) if kinds[:i].count(k) < args.smoke]
        suite.first_program = sum(k != "program" for k in (kinds[i] for i in keep))
        suite.names = [suite.names[i] for i in keep]
        suite.runs = [suite.runs[i] for i in keep]
    # pass 1: each item once, observing
    baseline: list[Any] = []
    reaches: dict[str, list[int]] = defaultdict(list)
    for i, run in enumerate(suite.runs):
        fault.seen = set()
        baseline.append(run())
        for name in fault.seen:
            reaches[name].append(i)
        if i % 100 == 0:
            print(f"observed {i}/{len(suite.runs)} items, {time.perf_counter() - start:.0f} s",
                  flush=True)
    fault.seen = None
    observed = time.perf_counter() - start

    def agreed(i: int) -> bool:
        b = baseline[i]
        kind = suite.kind(i)
        return (b in AGREEING if kind == "case" else not b) if kind != "opinfo" else True

    results: dict[frozenset[str], dict[str, Any]] = {}
    for row, targets in rows.items():
        if targets in results:
            continue
        reach = sorted({i for t in targets for i in reaches.get(t, ())})
        usable = [i for i in reach if agreed(i)]
        fault.targets = targets
        detected_by = None
        try:
            for i in usable:
                now = suite.runs[i]()
                if (now != baseline[i] if suite.kind(i) != "opinfo"
                        else bool(now - baseline[i])):
                    detected_by = suite.names[i]
                    break
        finally:
            fault.targets = frozenset()
        results[targets] = {"nodes": sorted(targets), "reached_by": len(reach),
                            "not_agreeing_unfaulted": len(reach) - len(usable),
                            "reached_kinds": sorted({suite.kind(i) for i in reach}),
                            "detected_by": detected_by}
        print(f"{row:<28} {len(reach):>4} items  "
              f"{detected_by or ('MISSED' if usable else 'not reached')}", flush=True)
    table = [{"row": row, **results[t]} for row, t in rows.items()]
    detected = [r["row"] for r in table if r["detected_by"]]
    missed = [r["row"] for r in table if not r["detected_by"] and r["reached_by"]]
    unreached = [r["row"] for r in table if not r["reached_by"]]
    result = {
        "what": "injected JVP faults (WrongTangent: a row's nodes' tangent negated) the "
                "suite's items that reach them detect: forward-mode case items against "
                "torch, OpInfo jvp parts against torch, generated programs (FORWARD and "
                "default) against the unfaulted engine; items selected by observed reach",
        "rows_with_a_jvp": len(table),
        "faults": len(results),
        "detected": len(detected),
        "missed": missed,
        "not_reached": unreached,
        "items": {k: sum(suite.kind(i) == k for i in range(len(suite.runs)))
                  for k in ("case", "opinfo", "program")},
        "programs_per_table": args.programs,
        "rows": table,
        "observe_seconds": round(observed, 1),
        "seconds": round(time.perf_counter() - start, 1),
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
    print(f"detected {len(detected)}/{len(table)} rows; missed: {missed or 'none'}; "
          f"not reached: {len(unreached)}; {result['seconds']} s")
    if args.save and not args.rows and not args.smoke:
        RESULT.write_text(json.dumps(result, indent=2) + "\n")
        print(f"saved to {RESULT}")


if __name__ == "__main__":
    main()
