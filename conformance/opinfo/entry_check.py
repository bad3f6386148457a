"""The OpInfo check of one entry in one dtype: OpInfo's samples on torch and an engine.

Every sample of `sample_inputs` (cpu, the dtype, requires_grad as OpInfo sets it; drawn
under a seed of the entry's own: plan.py) becomes a few steps, run on torch and on the
engine alike. The sample's values are made once per sample and engine by the engine's own
tensor factory (convert), and every step calls the op on those same inputs (steps.py):

  forward     `out = op(*sample)`: the outputs (values, grad_fn, graph, views, versions)
  grads       `torch.autograd.grad(outputs, inputs, v)` with a seeded `v`, allow_unused
  gradgrad    where OpInfo supports gradgrad: the first-order grads with create_graph
              (which of them require grad), then `torch.autograd.grad` of those with a
              seeded `v2` (the second-order grads; the grad_fn names of the create_graph
              grads are not compared: the double-backward graph is the registry's next step)
  saved       the forward again under `saved_tensors_hooks`: every tensor packed, with its
              identity (an input, the output) as `alias`
  jvp         where OpInfo supports forward AD (jvp.py): the op on dual tensors with seeded
              tangents, the outputs' tangents; a part of its own (`jvp N`)

then each of OpInfo's `error_inputs`: the call, whose error kind and type are compared (its
exact text as compare's strict field). A step the engine fails (or torch) ends its sample
there. The steps form a Trace per engine; each sample's, jvp's and error input's steps are
compared alone by the one comparator (compare.compare: its tolerances, its strict message
field, an engine's masks), so each part gets a verdict that means what a case item's means.
The steps' text is the item's "program": a divergence names its line, the sample and the
field.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from conformance.opinfo.jvp import run_jvp
from conformance.opinfo.opmap import Part
from conformance.opinfo.plan import DEVICE, JVP, STEPS, Call, ErrorCall, Plan, plan
from conformance.opinfo.steps import Run, SampleFailed, call_op, op_callable, run_sample
from conformance.run import isolation
from conformance.run.compare import compare
from conformance.run.engine import Engine
from conformance.run.interpreter import warm_up, warn_always
from conformance.run.limits import deadline
from conformance.run.trace import FieldMask, Step, Trace
from conformance.run.verdicts import Verdict

__all__ = ["DEVICE", "NO_LIMIT", "STEPS", "Call", "CheckResult", "ErrorCall", "Limit",
           "PartResult", "Plan", "check", "parts_of", "plan", "run_plan"]


@dataclass(frozen=True)
class Limit:
    """The time limit of each part of an item (`--item-timeout`; 0: none), and the item it
    names when it ends one."""

    seconds: float = 0.0
    item: str = "the OpInfo item"

    def of(self, part: str) -> deadline:
        return deadline(self.seconds, f"{part} of {self.item}")


NO_LIMIT = Limit()


def run_plan(engine: Engine, op: Any, plan: Plan, limit: Limit = NO_LIMIT,
             only: frozenset[tuple[str, int]] | None = None) -> tuple[Trace, Run]:
    """The trace of `plan` on `engine`, and the run (what it could not give the engine:
    Unconvertible values, API paths the engine lacks, by line). `limit`: the time limit of
    each sample (with its jvp step) and of each error input, as a case program's: an entry
    has from one to several hundred samples, so a limit of the whole item would fail the
    largest entries on a loaded machine, and could not tell a slow sample from a hang.
    `only`: the parts to run, (kind, index) (None: all); each sample draws its vectors from a
    stream of its own (the entry's seed and its index), so a part run alone runs as in full."""
    if plan.forward_ad:
        warm_up(engine)  # torch's first make_dual warns (a lazy import): not in a sample
    trace = Trace(engine.name)
    with isolation.guard(engine) as changes, engine.run_context(DEVICE, plan.dtype), \
            warn_always(engine) as always, warnings.catch_warnings(record=True) as caught:
        trace.warn_always = always
        warnings.simplefilter("always")
        run = Run(engine, op, plan, trace, caught)
        fn = op_callable(run)
        for index, call in enumerate(plan.samples):
            backward = only is None or ("sample", index) in only
            forward = plan.forward_ad and (only is None or (JVP, index) in only)
            if not (backward or forward):
                continue
            rng = np.random.default_rng([plan.seed, index])
            with limit.of(f"sample {index}"):
                if backward:
                    with contextlib.suppress(SampleFailed):
                        run_sample(run, fn, call, rng, index)
                if forward:
                    with contextlib.suppress(SampleFailed):
                        run_jvp(run, fn, call, index)
        for index, error in enumerate(plan.errors):
            if only is not None and ("error input", index) not in only:
                continue

            def call_error(error: ErrorCall = error) -> dict[str, Any]:
                return {"out": call_op(run, fn, error.call)}

            with limit.of(f"error input {index}"), contextlib.suppress(SampleFailed):
                run.step(plan.error_line(index), call_error)
    trace.state_changes = changes
    return trace, run


@dataclass(frozen=True)
class PartResult:
    """The verdict of one part of a plan (a sample, or an error input): its steps on torch
    and on the engine compared alone, so a divergence in one sample does not hide the next.
    `verdict` is one of verdicts.Verdict's values: pass, diverges, masked, unsupported (the
    engine lacks an API the part reaches), error (not compared: a value the harness cannot
    give the engine, or a stray change of global state), or known: any of diverges,
    unsupported or error where the map leaves the part out. `detail` says what and where
    (the program line)."""

    kind: str  # "sample", "jvp" or "error input"
    index: int
    verdict: str
    detail: str = ""
    message: str = ""  # a difference in the exact message text only (the strict field)
    left_out: str = ""  # the map's line leaving this part out, if it does
    short: str = ""  # what diverges, in a few words (the step, the field, the engine's value)

    @property
    def part(self) -> str:
        return f"{self.kind} {self.index}"


@dataclass
class CheckResult:
    """Both traces of an entry x dtype and the verdict of each of its parts."""

    plan: Plan
    expected: Trace
    actual: Trace
    parts: list[PartResult]

    def count(self, verdict: str) -> int:
        return sum(1 for p in self.parts if p.verdict == verdict)


def _brief(value: Any) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= 90 else text[:87] + "..."


def _where(plan: Plan, line: int) -> str:
    return f"line {line} `{plan.lines[line - 1]}`"


def check(op: Any, plan: Plan, engine: Engine, torch_engine: Engine,
          masks: tuple[FieldMask, ...] = (), left_out: tuple[Part, ...] = (),
          limit: Limit = NO_LIMIT, only: frozenset[tuple[str, int]] | None = None
          ) -> CheckResult:
    """Run `plan` on torch, then on `engine`, and compare each part (compare.compare, with
    `masks`); a part the map leaves out (`left_out`, opmap.Part) that does not agree is `known`.
    `only`: the parts to run and judge, (kind, index) (None: every part)."""
    expected, _ = run_plan(torch_engine, op, plan, limit, only)
    actual, run = run_plan(engine, op, plan, limit, only)
    parts = [p for p in parts_of(plan) if only is None or p[:2] in only]
    # each trace's steps by part, once: filtering the whole trace for every part was
    # quadratic in the samples (with Plan.steps once per plan: 11.1 -> 8.9 s of CPU on 138
    # items, benchmarks/README.md)
    by_part = [_steps_by_part(plan, trace) for trace in (expected, actual)]
    results = []
    for kind, index, kwargs in parts:
        def mine(line: int, kind: str = kind, index: int = index) -> bool:
            return plan.part_of(line) == (kind, index)

        known = next((p.text for p in left_out if p.covers(kind, index, kwargs)), "")
        e, a = (Trace(t.engine, steps.get((kind, index), []), warn_always=t.warn_always)
                for t, steps in zip((expected, actual), by_part, strict=True))
        result = _verdict(plan, kind, index, expected, actual, e, a, run, mine, masks, known)
        # a part the map leaves out may do anything but agree with torch (a failing
        # verdict) and be `known`: the map's line says why
        if known and Verdict(result.verdict).failing:
            result = replace(result, verdict=Verdict.KNOWN.value,
                             detail=f"{result.verdict}: {result.detail}")
        results.append(result)
    return CheckResult(plan, expected, actual, results)


def parts_of(plan: Plan) -> list[tuple[str, int, tuple[str, ...]]]:
    """The parts of `plan` in order: (kind, index, the sample's keywords)."""
    parts = [("sample", i, tuple(c.kwargs)) for i, c in enumerate(plan.samples)]
    parts += [(JVP, i, tuple(c.kwargs)) for i, c in enumerate(plan.samples)
              if plan.forward_ad]
    parts += [("error input", j, ()) for j in range(len(plan.errors))]
    return parts


def _steps_by_part(plan: Plan, trace: Trace) -> dict[tuple[str, int], list[Step]]:
    """The steps of `trace` grouped by the part (plan.part_of) their line belongs to, in
    order."""
    grouped: dict[tuple[str, int], list[Step]] = {}
    for s in trace.steps:
        grouped.setdefault(plan.part_of(s.line), []).append(s)
    return grouped


def _verdict(plan: Plan, kind: str, index: int, expected: Trace, actual: Trace, e: Trace,
             a: Trace, run: Run, mine: Callable[[int], bool], masks: tuple[FieldMask, ...],
             known: str) -> PartResult:
    """The verdict of one part: `e` and `a` are its steps of `expected` and `actual`."""
    name = (kind, index)
    if expected.state_changes or actual.state_changes:
        changed = expected if expected.state_changes else actual
        why = isolation.describe(changed.engine, changed.state_changes)
        return PartResult(*name, Verdict.ERROR.value, why, "", known, why)
    unconvertible = [u for line, u in run.unconvertible if mine(line)]
    if unconvertible:
        why = f"not compared: cannot give {run.engine.name} {unconvertible[0]}"
        return PartResult(*name, Verdict.ERROR.value, why, "", known, why)
    missing = sorted({p for line, paths in run.missing.items() if mine(line) for p in paths})
    if missing:
        lacks = f"{run.engine.name} lacks {', '.join(missing)}"
        return PartResult(*name, Verdict.UNSUPPORTED.value, lacks, "", known, lacks)
    result = compare(e, a, plan.dtype, masks)
    message = "" if result.message is None else \
        f"at {_where(plan, result.message.line)}: {result.message.describe()}"
    if result.divergence is not None:
        detail = f"at {_where(plan, result.divergence.line)}: {result.divergence.describe()}"
        d = result.divergence
        step = "" if kind == "error input" else f"{plan.step_of(d.line)}: "
        short = f"{step}{d.field}: engine has {_brief(d.actual)}"
        return PartResult(*name, Verdict.DIVERGES.value, detail, message, known, short)
    if result.masked is not None and result.mask is not None:
        return PartResult(*name, Verdict.MASKED.value,
                          f"masked by the engine ({result.mask.reason}): at "
                          f"{_where(plan, result.masked.line)}, {result.masked.describe()}",
                          message, known)
    return PartResult(*name, Verdict.PASS.value, "", message, known)
