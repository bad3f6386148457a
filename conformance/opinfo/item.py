"""OpInfo items: one per covered entry x dtype, run by the pytest plugin and
`autograd-conformance run` beside the case items, with their verdict and their record.

An item's id is `opinfo/<entry>::cpu-<dtype>` (`opinfo/matmul::cpu-float64`), the shape of
a case item's `<file>::<device>-<dtype>`: --devices, -k, expectations patterns
(`items: "opinfo/matmul::*"`), the report's matrix (feature `opinfo`) and its grouping of
failures treat both alike. The check runs on cpu only.

The verdict comes from the one rule, decision.decide, over the item's parts
(check.check: a verdict per sample and error input):
- the parts the map does not leave out: the first failing one (diverges, then error, then
  unsupported) is the item's verdict, its reason naming the part, the step and the field;
  then the engine's expectations entries for the item decide as for a case item;
- each left-out line of the map (conformance/opinfo/opinfo.yaml) is an entry for the parts
  it names: where one of them fails here the line allows it (`known`); where all agree with
  torch in this dtype and in the other (the map's lines have no dtype: the line's parts
  are checked in the other dtype too, only then, and only they), the line is listed but
  passes now, and the item fails naming it;
  except a line about rounding (its reason says "rounding"): which last bits differ depends
  on the CPU's vector instructions, which NumPy's and torch's kernels (MKL, Sleef) choose at
  run time, so such a line allows its parts and never goes stale (a float32 sum that differs
  on one machine agrees on another); so does a line about torch's nondeterminism (its reason
  says "not deterministic": which input's value lands at a shared output position, say).
  A line whose reason says "fails where torch's CPU capability is <X>" (AVX512, AVX2:
  torch.backends.cpu.get_cpu_capability(), the class of CPU whose instructions MKL's,
  OpenBLAS' and torch's kernels are chosen by) goes stale on a CPU of that class only,
  rounding or not, and allows its parts elsewhere: on its own class it must still fail.
  The lines describe the reference engine: for another engine a line only allows (its parts
  may pass), never goes stale.
An entry OpInfo lacks, or a line naming a sample or error input OpInfo no longer has (the
samples changed since the map's torch), is an `error` naming it; OpInfo unreadable here
(OpInfoUnavailable: expecttest not installed) makes the item `skipped` with the install hint.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from conformance.opinfo import database, opmap
from conformance.opinfo.entry_check import (
    NO_LIMIT,
    CheckResult,
    Limit,
    PartResult,
    Plan,
    check,
    parts_of,
    plan,
)
from conformance.opinfo.ids import DEVICE, DTYPES, FEATURE, file_of, item_id
from conformance.report.records import divergence_record
from conformance.run.compare import compare
from conformance.run.decision import Decision, decide
from conformance.run.engine import DEFAULT_ENGINE, Engine
from conformance.run.expectations import Known
from conformance.run.trace import Trace
from conformance.run.verdicts import AGREEING, FAILING, Verdict

MAP_SHOWN = "conformance/opinfo/opinfo.yaml"  # how reasons name the map
DESCRIPTION = ("OpInfo's samples and error inputs of this entry (torch's op_db), run on torch "
               "and the engine and compared part by part")
SOURCE = database.OPINFO_MODULE + ".op_db"
# The engine the map's left-out lines describe: only its lines can go stale.
MAP_ENGINE = DEFAULT_ENGINE


@functools.cache
def op_map() -> opmap.OpMap:
    return opmap.load_map()


def covered() -> list[str]:
    """The covered entries, in the map's order: read from the map and the registry, never
    from OpInfo (collection needs neither torch nor expecttest)."""
    return opmap.join(op_map(), opmap.rows()).covered()


@dataclass
class Judged:
    """An item's verdict and what the report shows of it."""

    verdict: str
    reason: str
    status: str | None = None  # before the engine's expectations (what entries name)
    passes_now: str = ""  # an entry or a map line that lists a failure here passes now
    result: CheckResult | None = None
    failing: PartResult | None = None  # the first counted part that fails
    report: str = ""  # every failing part, one per line


def _line_numbers(key: str) -> dict[str, int]:
    """The line of each left-out item of `key` in the map file (to name it, as an
    expectations entry is named by file and line)."""
    lines = opmap.MAP_PATH.read_text(encoding="utf-8").splitlines()
    start = next((i for i, t in enumerate(lines) if t.strip() == f"{key}:"), None)
    found: dict[str, int] = {}
    if start is None:
        return found
    for i in range(start + 1, len(lines)):
        text = lines[i].strip()
        if text and not lines[i].startswith("    "):  # the next entry
            break
        if text.startswith("- "):
            try:  # a list item on one line, as the map writes them
                found.setdefault(str(yaml.safe_load(text[2:])), i + 1)
            except yaml.YAMLError:
                continue
    return found


def _beyond(p: Plan, left_out: Sequence[opmap.Part]) -> str:
    """A left-out line naming a sample or error input OpInfo does not have (its samples
    changed since the map was written), or ""."""
    counts = {"sample": len(p.samples), "jvp": len(p.samples) if p.forward_ad else 0,
              "error input": len(p.errors)}
    for part in left_out:
        if part.kind in counts and part.last >= counts[part.kind]:
            return (f"the map's line `{part.text}` names {part.kind} {part.last}, but OpInfo "
                    f"has {counts[part.kind]} {part.kind}s for {p.key} in {p.dtype}: its "
                    "samples changed since the map was written (of torch "
                    f"{op_map().torch}); rewrite the line")
    return ""


def _failing_detail(p: PartResult) -> str:
    return f"{p.part}: {p.verdict}: {p.detail}"


def sampled(p: Plan, left_out: Sequence[opmap.Part], samples: int
            ) -> frozenset[tuple[str, int]] | None:
    """The parts an item checks when it checks at most `samples` of its samples (0: all;
    None is returned for all): that many samples drawn by a generator seeded with the item's
    id (the same in every run and process), each with its jvp part; every error input (one
    call each); and every part a left-out line of the map covers, so that each line is
    decided (known, or passing now) exactly as in the full check (`capped_check` runs a
    line's parts only until one fails)."""
    if samples <= 0 or len(p.samples) <= samples:
        return None
    chosen = set(random.Random(item_id(p.key, p.dtype)).sample(range(len(p.samples)), samples))
    return frozenset((kind, index) for kind, index, kwargs in parts_of(p)
                     if kind == "error input" or index in chosen
                     or any(line.covers(kind, index, kwargs) for line in left_out))


def capped_check(op: Any, p: Plan, engine: Engine, torch_engine: Engine,
                 left_out: tuple[opmap.Part, ...], limit: Limit, samples: int) -> CheckResult:
    """check.check of the parts `sampled` names, but of each left-out line's parts (drawn
    or not) only those up to its first that fails. A left-out part that fails is `known`
    whatever it does, and one such part decides its line (known); the line's other parts
    can neither fail the item nor make the line stale, which needs every part agreeing. So
    a line's parts run in rounds while all of its parts so far agree, its first part in the
    first round with every other part, then twice as many each round (a line whose parts
    all agree runs them all, as before). The
    verdict is the capped check's as before; the reason names fewer known parts. The
    left-out samples were most of the cost: grid_sampler_3d's lines cover 11 of its 30
    samples, 9 of them 3-13 s of CPU each (benchmarks/README.md). `samples` 0 (every
    sample): check.check of everything, as before."""
    only = sampled(p, left_out, samples)
    if only is None:
        return check(op, p, engine, torch_engine, engine.masks, left_out, limit)
    queues: dict[str, list[tuple[str, int]]] = {}  # each line's parts, in the plan's order
    for kind, index, kwargs in parts_of(p):
        line = next((part.text for part in left_out if part.covers(kind, index, kwargs)), "")
        if line and kind != "error input" and (kind, index) in only:
            queues.setdefault(line, []).append((kind, index))
    queued = {pair for q in queues.values() for pair in q}
    to_run = {pair for pair in only if pair not in queued} | {q.pop(0) for q in queues.values()}
    results: list[CheckResult] = []
    decided: set[str] = set()
    take = 1
    while to_run:
        result = check(op, p, engine, torch_engine, engine.masks, left_out, limit,
                       frozenset(to_run))
        if result.expected.state_changes or result.actual.state_changes:
            # a stray change of global state fails every part of the check: as before
            return check(op, p, engine, torch_engine, engine.masks, left_out, limit, only)
        results.append(result)
        decided |= {r.left_out for r in result.parts if r.verdict == Verdict.KNOWN.value}
        take *= 2  # a line whose parts agree: jvp 0-287 in 9 rounds, not 288
        to_run = {pair for line, q in queues.items() if line not in decided
                  for pair in q[:take]}
        for q in queues.values():
            del q[:take]
    return _joined(p, results)


def _joined(p: Plan, results: list[CheckResult]) -> CheckResult:
    """The rounds' results as one check's: the parts in the plan's order, each trace's
    steps one after the other (a part's steps all come from one round)."""
    if len(results) == 1:
        return results[0]
    order = {(kind, index): n for n, (kind, index, _) in enumerate(parts_of(p))}

    def trace(traces: list[Trace]) -> Trace:
        return Trace(traces[0].engine, [s for t in traces for s in t.steps],
                     missing_api=[a for t in traces for a in t.missing_api],
                     warn_always=traces[0].warn_always)

    parts = sorted((part for r in results for part in r.parts),
                   key=lambda part: order[(part.kind, part.index)])
    return CheckResult(p, trace([r.expected for r in results]),
                       trace([r.actual for r in results]), parts)


def judge(key: str, dtype: str, engine: Engine, torch_engine: Engine,
          known: Sequence[Known] = (), listed_in: str = "", limit: Limit = NO_LIMIT,
          samples: int = 0) -> Judged:
    """Run the item and decide its verdict (see the module docstring). `known`: the
    engine's expectations entries for the item, from the file `listed_in`. `samples`: check
    at most that many of OpInfo's samples (`capped_check`; 0: every one).
    OpInfoUnavailable when OpInfo cannot be read here."""
    entries = database.autograd_entries()
    if key not in entries:
        why = (f"OpInfo of this torch has no entry {key} with autograd, which the map (of "
               f"torch {op_map().torch}) lists and the registry covers: the entry was renamed "
               "or removed; update the map")
        return Judged(Verdict.ERROR.value, why, Verdict.ERROR.value)
    op, entry = entries[key], op_map().get(key)
    left_out = entry.left_out if entry is not None else ()
    the_plan = plan(op, key, dtype)
    beyond = _beyond(the_plan, left_out)
    if beyond:
        return Judged(Verdict.ERROR.value, beyond, Verdict.ERROR.value)
    result = capped_check(op, the_plan, engine, torch_engine, left_out, limit, samples)
    counted = [p for p in result.parts if not p.left_out]
    # the failing parts, the verdict needing attention first (its rank), then in part order
    failing = sorted((p for p in counted if Verdict(p.verdict).failing),
                     key=lambda p: Verdict(p.verdict).rank)
    report = "\n".join(_failing_detail(p) for p in counted if Verdict(p.verdict).failing)
    verdict = failing[0].verdict if failing else \
        Verdict.MASKED.value if any(p.verdict == Verdict.MASKED.value for p in counted) else \
        Verdict.PASS.value
    reason = ""
    if failing:
        first = failing[0]
        reason = (f"{first.part} of {len(result.parts)} parts ({len(failing)} failing; "
                  f"{first.short or first.verdict}): {first.detail}")
    elif verdict == Verdict.MASKED.value:
        reason = next(p.detail for p in counted if p.verdict == Verdict.MASKED.value)
    decision = decide(verdict, reason, known, listed_in=listed_in)
    judged = Judged(decision.verdict, decision.reason, decision.status, result=result,
                    failing=failing[0] if failing else None, report=report)
    if decision.passes_now is not None:
        entry_now = decision.passes_now
        judged.passes_now = (f"listed at {entry_now.where(listed_in)} as "
                             f"{entry_now.expects()}, but it passes now: remove or narrow "
                             "the entry")
    if decision.verdict in FAILING:
        return judged  # a counted part fails: that comes first
    lines = _map_lines(key, dtype, result, op, engine, torch_engine, left_out, limit)
    known_reasons = [decision.reason] if decision.known else []
    for line_decision in lines:
        if line_decision.passes_now is not None and not judged.passes_now:
            judged.passes_now = (
                f"the map's line `{line_decision.passes_now.reason}` at "
                f"{line_decision.passes_now.where(MAP_SHOWN)} leaves out parts that agree "
                "with torch in every dtype now: delete it (or narrow it)")
        if line_decision.known:
            known_reasons.append(line_decision.reason)
    if known_reasons and not judged.passes_now:
        judged.verdict, judged.reason = Verdict.KNOWN.value, "; ".join(known_reasons)
    return judged


def _map_lines(key: str, dtype: str, result: CheckResult, op: Any, engine: Engine,
               torch_engine: Engine, left_out: tuple[opmap.Part, ...],
               limit: Limit = NO_LIMIT) -> list[Decision]:
    """Each left-out line that applies here, decided: a line one of whose parts fails in
    this dtype (known), or, on the map's engine, one whose parts agree with torch in every
    dtype (passes now). A line whose parts fail only in the other dtype does not apply."""
    numbers = _line_numbers(key)
    decisions = []
    known_here = {p.left_out for p in result.parts if p.verdict == Verdict.KNOWN.value}
    # the lines that may be stale: none of their parts fails here; the other dtype decides
    undecided = {part.text for part in left_out if part.text not in known_here
                 and engine.name == MAP_ENGINE and part.can_go_stale}
    other = _other_dtype(key, dtype, op, engine, torch_engine, left_out, undecided, limit) \
        if undecided else None
    for index, part in enumerate(left_out):
        mine = [p for p in result.parts if p.left_out == part.text]
        text = "; ".join(f"{p.part}: {p.detail}" for p in mine if p.verdict == "known")
        entry = Known(index, numbers.get(part.text, 0), numbers.get(part.text, 0),
                      part.text, items=item_id(key, dtype), statuses=FAILING)
        if part.text in known_here:
            # the underlying verdict of the first failing part: "diverges: ..." (check.check)
            status = next(p.detail.split(":", 1)[0] for p in mine
                          if p.verdict == Verdict.KNOWN.value)
            decisions.append(decide(status, text, (entry,), listed_in=MAP_SHOWN))
            continue
        if other is None or part.text not in undecided:
            continue
        if all(p.verdict in AGREEING for p in other.parts if p.left_out == part.text):
            decisions.append(decide(Verdict.PASS.value, "", (entry,), listed_in=MAP_SHOWN))
    return decisions


def _other_dtype(key: str, dtype: str, op: Any, engine: Engine, torch_engine: Engine,
                 left_out: tuple[opmap.Part, ...], undecided: set[str], limit: Limit
                 ) -> CheckResult:
    """The check in the other dtype of the parts the `undecided` lines leave out (a part
    belongs to the first line covering it, as in check.check), and only those: each part
    runs alone as it runs in full (check.run_plan), and the lines are decided by their own
    parts (a float32-only line of a float64 item ran the whole float32 item: linalg.lu_solve
    float64 15.2 s of CPU, float32 7.5 s; benchmarks/README.md)."""
    other_plan = plan(op, key, next(d for d in DTYPES if d != dtype))
    only = frozenset((kind, index) for kind, index, kwargs in parts_of(other_plan)
                     if next((p.text for p in left_out if p.covers(kind, index, kwargs)), "")
                     in undecided)
    return check(op, other_plan, engine, torch_engine, engine.masks, left_out, limit, only)


def divergence_of(result: CheckResult, part: PartResult) -> dict[str, Any] | None:
    """The first divergence of a failing part as records carry it (line in the item's
    program, statement, field, both values, graphs)."""
    the_plan = result.plan

    def mine(trace: Trace) -> Trace:
        return Trace(trace.engine, [s for s in trace.steps
                                    if the_plan.part_of(s.line) == (part.kind, part.index)],
                     warn_always=trace.warn_always)

    expected, actual = mine(result.expected), mine(result.actual)
    d = compare(expected, actual, the_plan.dtype).divergence
    if d is None:
        return None
    return divergence_record(d, d.line, the_plan.lines[d.line - 1], expected, actual)


def repro(key: str, dtype: str, engine: str) -> str:
    return f"python -m conformance.opinfo {key} --dtype {dtype} --engine {engine} -v"


def record(key: str, dtype: str, engine: str, judged: Judged | None, outcome: str,
           longrepr: str) -> dict[str, Any]:
    """The item's record in the report (the schema's item; `judged` None: it ended without
    a verdict, e.g. an error outside the check)."""
    rec: dict[str, Any] = {
        "id": item_id(key, dtype), "file": file_of(key), "features": [FEATURE],
        "device": DEVICE, "dtype": dtype, "description": f"{key}: {DESCRIPTION}",
        "source": SOURCE, "engine": engine,
        "verdict": Verdict.ERROR.value if judged is None else judged.verdict,
        "pytest_outcome": outcome,
        "reason": longrepr[-2000:] if judged is None else judged.reason,
    }
    if judged is None:
        return rec
    if judged.status is not None:
        rec["status"] = judged.status
    if judged.result is not None and judged.failing is not None:
        rec["divergence"] = divergence_of(judged.result, judged.failing)
    if outcome == "failed":
        rec["report"] = (longrepr or judged.report)[-20000:]
        rec["repro"] = repro(key, dtype, engine)
        if judged.result is not None:
            rec["program"] = judged.result.plan.program
            rec["program_first_line"] = 1
    return rec
