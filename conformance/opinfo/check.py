"""The OpInfo check of one entry in one dtype: OpInfo's samples on torch and an engine.

Every sample of `sample_inputs` (cpu, the dtype, requires_grad as OpInfo sets it; drawn
under a seed of the entry's own) becomes a few steps, run on torch and on the engine alike.
The sample's values are made once per sample and engine by the engine's own tensor factory
(convert), and every step calls the op on those same inputs:

  forward     `out = op(*sample)`: the outputs (values, grad_fn, graph, views, versions)
  grads       `torch.autograd.grad(outputs, inputs, v)` with a seeded `v`, allow_unused
  gradgrad    where OpInfo supports gradgrad: the first-order grads with create_graph
              (which of them require grad), then `torch.autograd.grad` of those with a
              seeded `v2` (the second-order grads; the grad_fn names of the create_graph
              grads are not compared: the double-backward graph is the registry's next step)
  saved       the forward again under `saved_tensors_hooks`: every tensor packed, with its
              identity (an input, the output) as `alias`

then each of OpInfo's `error_inputs`: the call, whose error kind and type are compared (its
exact text as compare's strict field). A step the engine fails (or torch) ends its sample
there. The steps form a Trace per engine; each sample's and error input's steps are compared
alone by the one comparator (compare.compare: its tolerances, its strict message field, an
engine's masks), so each part gets a verdict that means what a case item's means. The steps'
text is the item's "program": a divergence names its line, the sample and the field.
"""

from __future__ import annotations

import contextlib
import warnings
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from conformance.case import kinds
from conformance.opinfo.convert import Unconvertible, engine_callable, engine_value
from conformance.opinfo.opmap import Part
from conformance.run import isolation
from conformance.run.compare import compare
from conformance.run.engine import Engine, MissingAPI
from conformance.run.interpreter import warn_always
from conformance.run.limits import RunLimit
from conformance.run.observe import Observer
from conformance.run.trace import (
    ERROR,
    OK,
    FieldMask,
    Outcome,
    Snapshot,
    Step,
    Trace,
    WarningRecord,
)
from conformance.run.verdicts import Verdict

DEVICE = "cpu"


@dataclass(frozen=True)
class Call:
    """One call of the op, as OpInfo gives it: the input, arguments and keyword arguments."""

    input: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    process: Callable[[Any], Any] | None = None  # output_process_fn_grad (None: identity)


@dataclass(frozen=True)
class ErrorCall:
    call: Call
    error_type: type
    error_regex: str


# The steps of one sample, in order (gradgrad's two only where OpInfo supports gradgrad).
STEPS = ("forward", "grads", "grads_create_graph", "gradgrad", "saved")
_STEP_TEXT = {
    "grads": "grads = torch.autograd.grad(out, inputs, v, allow_unused=True)",
    "grads_create_graph": "grads = torch.autograd.grad(op(...), inputs, v, allow_unused=True, "
                          "create_graph=True)  # which require grad",
    "gradgrad": "gradgrad = torch.autograd.grad(grads, inputs, v2, allow_unused=True)",
    "saved": "with saved_tensors_hooks(pack, unpack): out = op(...)  # the tensors saved",
}


@dataclass
class Plan:
    """What the check runs for one entry and dtype: OpInfo's calls, and the program text each
    step is named by: a fixed block of lines per sample (line numbers from 1), then one line
    per error input."""

    key: str
    name: str  # the op as called: `torch.<OpInfo name>`
    dtype: str
    samples: list[Call]
    errors: list[ErrorCall]
    gradgrad: bool
    seed: int

    @property
    def steps(self) -> tuple[str, ...]:
        return STEPS if self.gradgrad else tuple(s for s in STEPS if "grad" not in s[4:])

    def line(self, sample: int, step: str) -> int:
        return sample * len(self.steps) + self.steps.index(step) + 1

    def error_line(self, index: int) -> int:
        return len(self.samples) * len(self.steps) + index + 1

    def part_of(self, line: int) -> tuple[str, int]:
        """("sample", i) or ("error input", j): what a program line belongs to."""
        n = len(self.samples) * len(self.steps)
        return ("sample", (line - 1) // len(self.steps)) if line <= n else \
            ("error input", line - n - 1)

    def step_of(self, line: int) -> str:
        """The step a program line runs: one of STEPS, or "error input"."""
        kind, _ = self.part_of(line)
        return self.steps[(line - 1) % len(self.steps)] if kind == "sample" else kind

    @property
    def lines(self) -> list[str]:
        lines = []
        for i, call in enumerate(self.samples):
            for step in self.steps:
                lines.append(f"out = {call_text(self.name, call)}  # sample {i}"
                             if step == "forward" else _STEP_TEXT[step])
        for j, error in enumerate(self.errors):
            lines.append(f"{call_text(self.name, error.call)}  # error input {j}: "
                         f"{error.error_type.__name__} {error.error_regex!r}")
        return lines

    @property
    def program(self) -> str:
        return "\n".join(self.lines) + "\n"


def seed_of(key: str, dtype: str) -> int:
    """The entry's own seed: the samples an item draws do not depend on what ran before."""
    return zlib.crc32(f"{key}:{dtype}".encode())


def plan(op: Any, key: str, dtype: str) -> Plan:
    """OpInfo's samples and error inputs for `op` in `dtype`, drawn under the entry's seed
    (torch's global generator forked, so nothing else sees the draw)."""
    import torch

    seed = seed_of(key, dtype)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        samples = [Call(s.input, tuple(s.args), dict(s.kwargs), _process(s))
                   for s in op.sample_inputs(DEVICE, getattr(torch, dtype), requires_grad=True)]
        torch.manual_seed(seed)
        errors = [ErrorCall(Call(e.sample_input.input, tuple(e.sample_input.args),
                                 dict(e.sample_input.kwargs)), e.error_type, e.error_regex)
                  for e in (op.error_inputs(DEVICE) if op.error_inputs_func else ())]
    return Plan(key, f"torch.{op.name}", dtype, samples, errors, bool(op.supports_gradgrad),
                seed)


def _process(sample: Any) -> Callable[[Any], Any] | None:
    fn = sample.output_process_fn_grad
    # OpInfo's default is an identity lambda; spare the engine a copy of it
    return None if getattr(fn, "__qualname__", "") == "SampleInput.__init__.<locals>.<lambda>" \
        else fn


def describe(value: Any) -> str:
    """A sample value in a program line: tensors by shape and dtype."""
    import torch

    if isinstance(value, torch.Tensor):
        grad = ", requires_grad" if value.requires_grad else ""
        return f"tensor(size={tuple(value.shape)}, {str(value.dtype).removeprefix('torch.')}{grad})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe(v) for v in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in value.items()) + "}"
    return repr(value)


def call_text(name: str, call: Call) -> str:
    parts = [describe(call.input), *(describe(a) for a in call.args),
             *(f"{k}={describe(v)}" for k, v in call.kwargs.items())]
    return f"{name}({', '.join(parts)})"


# ---- one engine's run of a plan -------------------------------------------------------------

class _SampleFailed(Exception):
    """A step failed: the rest of its sample is not run on this engine."""


@dataclass
class _Run:
    engine: Engine
    op: Any
    plan: Plan
    trace: Trace
    caught: list[warnings.WarningMessage]
    unconvertible: list[tuple[int, str]] = field(default_factory=list)  # (line, what)
    missing: dict[int, list[str]] = field(default_factory=dict)  # line -> API paths lacked

    def step(self, line: int, action: Callable[[], dict[str, Any]],
             made: Callable[[dict[str, Any]], list[Any]] = lambda names: []) -> dict[str, Any]:
        """Run `action` as program line `line`: its outcome, warnings and the values it
        names, observed (the tensors `made` lists as autograd's own). _SampleFailed if it
        raised."""
        first = len(self.caught)
        names: dict[str, Any] = {}
        autograd_made: list[Any] = []
        try:
            names = action()
            autograd_made = made(names)
            outcome = Outcome(OK)
        except MissingAPI as missing:
            path = missing.path.replace("torch.Tensor.", "Tensor.")
            self.missing.setdefault(line, []).append(path)
            outcome = _outcome(missing.error)
        except Unconvertible as e:
            self.unconvertible.append((line, str(e)))
            outcome = Outcome(ERROR, kinds.UNKNOWN, "Unconvertible", str(e))
        except (RunLimit, KeyboardInterrupt, SystemExit, MemoryError):
            raise
        except Exception as e:
            outcome = _outcome(e)
        recorded = [_warning_record(w) for w in self.caught[first:]]
        del self.caught[first:]
        observer = Observer(self.engine)
        for tensor in autograd_made:
            observer.engine_made.add(tensor)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, value in names.items():
                observer.add(name, value)
        observed: dict[str, Snapshot] = dict(sorted(observer.out.items()))
        self.trace.steps.append(Step(line, outcome, recorded, [], observed))
        if outcome.status != OK:
            raise _SampleFailed
        return names


def _outcome(error: BaseException) -> Outcome:
    text = kinds.normalise_text(str(error))
    name = kinds.exception_name(error)
    return Outcome(ERROR, kinds.classify(text, warning=False, exception=name), name, text)


def _warning_record(w: warnings.WarningMessage) -> WarningRecord:
    text = kinds.normalise_text(str(w.message))
    return WarningRecord(kinds.classify(text, warning=True), w.category.__name__, text)


def _tensors(engine: Engine, value: Any) -> Iterator[Any]:
    """The tensors in a value (a tensor, or nested lists, tuples and dicts), in order."""
    if engine.is_tensor(value):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(engine, v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _tensors(engine, v)


def _unique(tensors: Iterator[Any]) -> list[Any]:
    seen: dict[int, Any] = {}
    for t in tensors:
        seen.setdefault(id(t), t)
    return list(seen.values())


def _vectors(engine: Engine, rng: np.random.Generator, like: list[Any]) -> list[Any]:
    """Seeded vectors (a grad_output) of the shapes and dtypes of `like`."""
    return [engine.tensor(rng.standard_normal(tuple(t.shape)), dtype=t.dtype) for t in like]


def run_plan(engine: Engine, op: Any, plan: Plan) -> tuple[Trace, _Run]:
    """The trace of `plan` on `engine`, and the run (what it could not give the engine:
    Unconvertible values, API paths the engine lacks, by line)."""
    trace = Trace(engine.name)
    with isolation.guard(engine) as changes, engine.run_context(DEVICE, plan.dtype), \
            warn_always(engine) as always, warnings.catch_warnings(record=True) as caught:
        trace.warn_always = always
        warnings.simplefilter("always")
        run = _Run(engine, op, plan, trace, caught)
        fn = _op_callable(run)
        for index, call in enumerate(plan.samples):
            rng = np.random.default_rng([plan.seed, index])
            with contextlib.suppress(_SampleFailed):
                _sample(run, fn, call, rng, index)
        for index, error in enumerate(plan.errors):
            def call_error(error: ErrorCall = error) -> dict[str, Any]:
                return {"out": _call(run, fn, error.call)}

            with contextlib.suppress(_SampleFailed):
                run.step(plan.error_line(index), call_error)
    trace.state_changes = changes
    return trace, run


def _op_callable(run: _Run) -> Callable[..., Any] | Exception:
    """The engine's op, or why it has none (raised by each call, so each step says so)."""
    try:
        return engine_callable(run.engine, run.op.op, run.op.name)
    except (MissingAPI, Unconvertible) as e:
        return e


def _values(run: _Run, fn: Callable[..., Any] | Exception, call: Call) -> Any:
    """The sample's values on the engine: (input, args, kwargs), each tensor made afresh."""
    if isinstance(fn, Exception):
        raise fn
    return engine_value(run.engine, (call.input, call.args, call.kwargs), {})


def _apply(fn: Callable[..., Any] | Exception, values: Any) -> Any:
    if isinstance(fn, Exception):
        raise fn
    value, args, kwargs = values
    return fn(value, *args, **kwargs)


def _call(run: _Run, fn: Callable[..., Any] | Exception, call: Call) -> Any:
    """The op called with the sample's values made afresh."""
    return _apply(fn, _values(run, fn, call))


def _sample(run: _Run, fn: Callable[..., Any] | Exception, call: Call,
            rng: np.random.Generator, index: int) -> None:
    engine, plan = run.engine, run.plan
    state: dict[str, Any] = {}

    def forward() -> dict[str, Any]:
        state["values"] = _values(run, fn, call)
        # the tensors that require grad: the inputs every later step differentiates
        state["inputs"] = _unique(t for t in _tensors(engine, state["values"])
                                  if t.requires_grad)
        state["out"] = _apply(fn, state["values"])
        state["process"] = None if call.process is None else \
            engine_callable(engine, call.process)
        return {"out": state["out"]}

    run.step(plan.line(index, "forward"), forward)
    inputs, process = state["inputs"], state["process"]
    outputs = _differentiable(engine, state["out"], process)
    if not inputs or not outputs:
        return
    v = _vectors(engine, rng, outputs)

    def grad(*args: Any, **kwargs: Any) -> Any:
        return engine.resolve("torch.autograd.grad")(*args, allow_unused=True, **kwargs)

    run.step(plan.line(index, "grads"),
             lambda: {"grads": grad(outputs, inputs, v)},
             lambda names: [g for g in names["grads"] if g is not None])
    if plan.gradgrad:
        firsts: list[Any] = []

        def first() -> dict[str, Any]:
            # the op again on the same inputs (autograd.grad accumulates nothing into them)
            again = _differentiable(engine, _apply(fn, state["values"]), process)
            firsts.extend(grad(again, inputs, v, create_graph=True))
            return {"grads_require_grad": [g is not None and bool(g.requires_grad)
                                           for g in firsts]}

        run.step(plan.line(index, "grads_create_graph"), first)
        needing = [g for g in firsts if g is not None and g.requires_grad]
        if needing:
            v2 = _vectors(engine, rng, needing)
            run.step(plan.line(index, "gradgrad"),
                     lambda: {"gradgrad": grad(needing, inputs, v2)},
                     lambda names: [g for g in names["gradgrad"] if g is not None])

    def saved() -> dict[str, Any]:
        packed: list[Any] = []

        def pack(t: Any) -> Any:
            packed.append(t)
            return t

        hooks = engine.resolve("torch.autograd.graph.saved_tensors_hooks")
        with hooks(pack, lambda t: t):
            out = _apply(fn, state["values"])  # the same inputs, so `alias` can name them
        # names in this order, so `alias` says which saved tensor is an input or the output
        return {"inputs": inputs, "out": out, "saved": packed}

    run.step(plan.line(index, "saved"), saved)


def _differentiable(engine: Engine, out: Any, process: Callable[[Any], Any] | None
                    ) -> list[Any]:
    """The outputs autograd differentiates: the tensors that require grad, after OpInfo's
    output processing."""
    if process is not None:
        out = process(out)
    return [t for t in _tensors(engine, out) if t.requires_grad]


# ---- the verdict ------------------------------------------------------------------------------

@dataclass(frozen=True)
class PartResult:
    """The verdict of one part of a plan (a sample, or an error input): its steps on torch
    and on the engine compared alone, so a divergence in one sample does not hide the next.
    `verdict` is one of verdicts.Verdict's values: pass, diverges, masked, unsupported (the
    engine lacks an API the part reaches), error (not compared: a value the harness cannot
    give the engine, or a stray change of global state), or known: any of diverges,
    unsupported or error where the map leaves the part out. `detail` says what and where
    (the program line)."""

    kind: str  # "sample" or "error input"
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


# What a part the map leaves out may do and be `known`: anything but agree with torch.
_FAILING = (Verdict.DIVERGES.value, Verdict.UNSUPPORTED.value, Verdict.ERROR.value)


def _brief(value: Any) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= 90 else text[:87] + "..."


def _where(plan: Plan, line: int) -> str:
    return f"line {line} `{plan.lines[line - 1]}`"


def check(op: Any, plan: Plan, engine: Engine, torch_engine: Engine,
          masks: tuple[FieldMask, ...] = (), left_out: tuple[Part, ...] = ()
          ) -> CheckResult:
    """Run `plan` on torch, then on `engine`, and compare each part (compare.compare, with
    `masks`); a part the map leaves out (`left_out`, opmap.Part) that does not agree is `known`."""
    expected, _ = run_plan(torch_engine, op, plan)
    actual, run = run_plan(engine, op, plan)
    parts = [("sample", i, tuple(c.kwargs)) for i, c in enumerate(plan.samples)]
    parts += [("error input", j, ()) for j in range(len(plan.errors))]
    results = []
    for kind, index, kwargs in parts:
        def mine(line: int, kind: str = kind, index: int = index) -> bool:
            return plan.part_of(line) == (kind, index)

        known = next((p.text for p in left_out if p.covers(kind, index, kwargs)), "")
        result = _verdict(plan, kind, index, expected, actual, run, mine, masks, known)
        if known and result.verdict in _FAILING:  # the map's line says why
            result = replace(result, verdict=Verdict.KNOWN.value,
                             detail=f"{result.verdict}: {result.detail}")
        results.append(result)
    return CheckResult(plan, expected, actual, results)


def _verdict(plan: Plan, kind: str, index: int, expected: Trace, actual: Trace, run: _Run,
             mine: Callable[[int], bool], masks: tuple[FieldMask, ...], known: str
             ) -> PartResult:
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
    e = Trace(expected.engine, [s for s in expected.steps if mine(s.line)],
              warn_always=expected.warn_always)
    a = Trace(actual.engine, [s for s in actual.steps if mine(s.line)],
              warn_always=actual.warn_always)
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
