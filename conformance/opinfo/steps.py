"""One engine's run of a sample's backward-mode steps (conformance/opinfo/entry_check.py lists
them): each step a program line, its outcome, warnings and named values observed into the
engine's Trace. A step the engine fails (or torch) ends its sample there."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conformance.case import classify, kinds
from conformance.opinfo import gauge
from conformance.opinfo.convert import Unconvertible, engine_callable, engine_value
from conformance.opinfo.gauge import Gauge
from conformance.opinfo.plan import Call, Plan
from conformance.run.engine import Engine, MissingAPI
from conformance.run.limits import RunLimit
from conformance.run.observe import Observer
from conformance.run.trace import ERROR, OK, Outcome, Snapshot, Step, Trace, WarningRecord


class SampleFailed(Exception):
    """A step failed: the rest of its sample is not run on this engine."""


@dataclass
class Run:
    engine: Engine
    op: Any
    plan: Plan
    trace: Trace
    caught: list[warnings.WarningMessage]
    unconvertible: list[tuple[int, str]] = field(default_factory=list)  # (line, what)
    missing: dict[int, list[str]] = field(default_factory=dict)  # line -> API paths lacked

    def step(self, line: int, action: Callable[[], dict[str, Any]],
             made: Callable[[dict[str, Any]], list[Any]] = lambda names: [],
             gauge: Gauge | None = None) -> dict[str, Any]:
        """Run `action` as program line `line`: its outcome, warnings and the values it
        names, observed (the tensors `made` lists as autograd's own; the vectors `gauge`
        names in canonical form, gauge.py). _SampleFailed if it raised."""
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
        if gauge is not None:
            observed = gauge.apply(observed)
        self.trace.steps.append(Step(line, outcome, recorded, [], observed))
        if outcome.status != OK:
            raise SampleFailed
        return names


def _outcome(error: BaseException) -> Outcome:
    text = classify.normalise_text(classify.text_of(error))
    name = classify.exception_name(error)
    return Outcome(ERROR, classify.classify(text, warning=False, exception=name), name,
                   classify.bounded(text))


def _warning_record(w: warnings.WarningMessage) -> WarningRecord:
    text = classify.normalise_text(classify.text_of(w.message))
    return WarningRecord(classify.classify(text, warning=True), w.category.__name__,
                         classify.bounded(text))


def tensors(engine: Engine, value: Any) -> Iterator[Any]:
    """The tensors in a value (a tensor, or nested lists, tuples and dicts), in order."""
    if engine.is_tensor(value):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from tensors(engine, v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from tensors(engine, v)


def unique(tensors: Iterator[Any]) -> list[Any]:
    seen: dict[int, Any] = {}
    for t in tensors:
        seen.setdefault(id(t), t)
    return list(seen.values())


def vectors(engine: Engine, rng: np.random.Generator, like: list[Any]) -> list[Any]:
    """Seeded vectors (a grad_output) of the shapes and dtypes of `like`."""
    return [engine.tensor(rng.standard_normal(tuple(t.shape)), dtype=t.dtype) for t in like]


def op_callable(run: Run) -> Callable[..., Any] | Exception:
    """The engine's op, or why it has none (raised by each call, so each step says so)."""
    try:
        return engine_callable(run.engine, run.op.op, run.op.name)
    except (MissingAPI, Unconvertible) as e:
        return e


def make_values(run: Run, fn: Callable[..., Any] | Exception, call: Call) -> Any:
    """The sample's values on the engine: (input, args, kwargs), each tensor made afresh."""
    if isinstance(fn, Exception):
        raise fn
    return engine_value(run.engine, (call.input, call.args, call.kwargs), {})


def apply_op(fn: Callable[..., Any] | Exception, values: Any) -> Any:
    if isinstance(fn, Exception):
        raise fn
    value, args, kwargs = values
    return fn(value, *args, **kwargs)


def call_op(run: Run, fn: Callable[..., Any] | Exception, call: Call) -> Any:
    """The op called with the sample's values made afresh."""
    return apply_op(fn, make_values(run, fn, call))


def run_sample(run: Run, fn: Callable[..., Any] | Exception, call: Call,
               rng: np.random.Generator, index: int) -> None:
    engine, plan = run.engine, run.plan
    state: dict[str, Any] = {}

    def forward() -> dict[str, Any]:
        state["values"] = make_values(run, fn, call)
        # the tensors that require grad: the inputs every later step differentiates
        state["inputs"] = unique(t for t in tensors(engine, state["values"])
                                 if t.requires_grad)
        state["out"] = apply_op(fn, state["values"])
        state["process"] = None if call.process is None else \
            engine_callable(engine, call.process)
        return {"out": state["out"]}

    vectors_gauge = gauge.of(plan.key, call)   # None but for svd's and eigh's entries
    run.step(plan.line(index, "forward"), forward, gauge=vectors_gauge)
    inputs, process = state["inputs"], state["process"]
    outputs = differentiable(engine, state["out"], process)
    if not inputs or not outputs:
        return
    v = vectors(engine, rng, outputs)

    def grad(*args: Any, **kwargs: Any) -> Any:
        return engine.resolve("torch.autograd.grad")(*args, allow_unused=True, **kwargs)

    run.step(plan.line(index, "grads"),
             lambda: {"grads": grad(outputs, inputs, v)},
             lambda names: [g for g in names["grads"] if g is not None])
    if plan.gradgrad:
        firsts: list[Any] = []

        def first() -> dict[str, Any]:
            # the op again on the same inputs (autograd.grad accumulates nothing into them)
            again = differentiable(engine, apply_op(fn, state["values"]), process)
            firsts.extend(grad(again, inputs, v, create_graph=True))
            return {"grads_require_grad": [g is not None and bool(g.requires_grad)
                                           for g in firsts]}

        run.step(plan.line(index, "grads_create_graph"), first)
        needing = [g for g in firsts if g is not None and g.requires_grad]
        if needing:
            v2 = vectors(engine, rng, needing)
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
            out = apply_op(fn, state["values"])  # the same inputs, so `alias` can name them
        # names in this order, so `alias` says which saved tensor is an input or the output
        return {"inputs": inputs, "out": out, "saved": packed}

    run.step(plan.line(index, "saved"), saved, gauge=vectors_gauge)


def differentiable(engine: Engine, out: Any, process: Callable[[Any], Any] | None
                   ) -> list[Any]:
    """The outputs autograd differentiates: the tensors that require grad, after OpInfo's
    output processing."""
    if process is not None:
        out = process(out)
    return [t for t in tensors(engine, out) if t.requires_grad]


