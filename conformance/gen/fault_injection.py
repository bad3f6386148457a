"""Faults injected into one op's backward, or its forward-mode (JVP) formulas, in a copy of
the reference engine: does the generator find them?

The copy is an independent import of `reference_engine` under another name, so the shared
module other tests use is never touched. A fault makes every node an op's forward builds
return its first gradient with the wrong sign (the first formula of the op's OpSpec,
wrong), including the nodes a composite op builds (matmul's MmBackward0, reshape's view
node); a JVP fault negates the tangent the OpSpecs of those nodes compute (WrongTangent).
Detection is judged against the unfaulted engine, not torch, so that a divergence
the engine may have from torch cannot stand in for the fault.

benchmarks/fault_injection.py runs it over every generated op; tests/test_generator_finds_faults.py
over a fixed sample.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import reference_engine
from conformance.case.program import Program
from conformance.gen import rounding
from conformance.gen.program_check import number
from conformance.run.compare import compare
from conformance.run.engine import Engine, load_engine
from conformance.run.interpreter import run_program
from conformance.run.trace import Trace
from reference_engine import registry


def engine_copy(name: str) -> ModuleType:
    """An independent copy of reference_engine, imported under another name."""
    if name in sys.modules:
        return sys.modules[name]
    root = Path(reference_engine.__file__).parent
    spec = importlib.util.spec_from_file_location(name, root / "__init__.py",
                                                  submodule_search_locations=[str(root)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _camel(op: str) -> str:
    return "".join(part.title() for part in op.rstrip("_").split("_"))


def _nodes_from(roots: Sequence[Any]) -> set[Any]:
    seen: set[Any] = set()
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(fn for fn, _ in getattr(node, "next_functions", ()) if fn is not None)
    return seen


def grad_fns(module: ModuleType, row: registry.OpRow) -> frozenset[str]:
    """The node names of `row`'s backward in `module`: the ones its sample call builds (a
    composite's too), and every `<Name>Backward<n>` of its name (the variants other
    arguments choose: SumBackward1 for a sum over a dim)."""
    sample = row.sample
    assert sample is not None
    # float64, the dtype of a sample's floating constants (a source)
    leaves = [module.tensor(_values(shape), dtype=module.float64, requires_grad=True)
              for shape in sample.shapes]
    inputs = [t.clone() for t in leaves]  # an in-place row writes a non-leaf
    args = [module.tensor(a.values, dtype=getattr(module, a.dtype))
            if isinstance(a, registry.Const) else a for a in sample.args]
    before = _nodes_from([t.grad_fn for t in inputs])
    if row.function:
        fn: Any = module
        for part in row.name.split("."):  # a namespaced row: nn.functional.relu
            fn = getattr(fn, part)
        out = fn(*inputs, *args)
    else:
        out = getattr(inputs[0], row.name)(*inputs[1:], *args)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    built = _nodes_from([getattr(t, "grad_fn", None) for t in outs]) - before
    names = {type(n).__name__ for n in built} - {"AccumulateGrad"}
    pattern = re.compile(rf"{_camel(row.attr)}Backward(s|\d+)$")
    specs = {s.grad_fn for s in _specs(module)}
    return frozenset(names | {n for n in specs if pattern.match(n)})


def _values(shape: tuple[int, ...]) -> Any:
    """Positive, distinct values (every sample's domain), not in arithmetic progression (a
    matrix of them is invertible)."""
    n = 1
    for s in shape:
        n *= s
    flat = [0.5 + 0.25 * i + 0.05 * i * i for i in range(n)]

    def nest(vals: list[float], dims: tuple[int, ...]) -> Any:
        if not dims:
            return vals[0]
        step = len(vals) // dims[0]
        return [nest(vals[i * step:(i + 1) * step], dims[1:]) for i in range(dims[0])]

    return nest(flat, shape)


def _specs(module: ModuleType) -> list[Any]:
    """The OpSpecs defined at module level in the engine's modules."""
    spec_type = module.autograd_meta.OpSpec
    found = []
    for sub in list(sys.modules.values()):
        if getattr(sub, "__name__", "").startswith(module.__name__ + "."):
            found += [v for v in vars(sub).values() if isinstance(v, spec_type)]
    return found


@dataclass
class WrongSign:
    """The fault, installed once in a copy; `targets` names the nodes it breaks now."""

    module: ModuleType
    targets: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        # OpNode and the subclasses with an apply of their own (multi-output nodes)
        classes, stack = [], [self.module.autograd_meta.OpNode]
        while stack:
            cls = stack.pop()
            if "apply" in vars(cls):
                classes.append(cls)
            stack.extend(cls.__subclasses__())
        for cls in classes:
            cls.apply = self._wrong(cls.apply)

    def _wrong(self, apply: Any) -> Any:
        neg = self.module.ops.basic.elementwise.neg
        fault = self

        def wrong(node: Any, grads: list[Any]) -> list[Any]:
            out = apply(node, grads)
            if node.spec.grad_fn in fault.targets:
                for i, g in enumerate(out):
                    if g is not None:  # the first gradient the node returns
                        out[i] = neg(g)
                        break
            return out

        return wrong


@dataclass
class WrongTangent:
    """The JVP fault, installed once in a copy: the tangent every formula of a node named in
    `targets` computes is negated (the first, for a formula giving several). A view op has
    no formula (its result's tangent is the same view of its forward base's tangent, made
    by forward_ad._view_at): for a view op named in `targets`, the tangent _view_at makes
    for a view whose chain of view ops from its forward base has it is negated (so a view of
    that view is wrong too, as torch's view formula on a wrong tangent would be). `reached`
    counts how often a broken formula (or view tangent) was made: a row no program made one
    of is not reached, not missed. With `seen` a set, nothing is broken: the node names of
    every formula (and view op) whose tangent a run made are added to it, each view's
    tangent made as a targeted one's is (benchmarks/jvp_fault_suite.py selects by it the
    items that reach a fault)."""

    module: ModuleType
    targets: frozenset[str] = field(default_factory=frozenset)
    reached: int = 0
    seen: set[str] | None = None

    def __post_init__(self) -> None:
        forward_ad = self.module.forward_ad
        original = forward_ad.tangent_of
        neg = self.module.ops.basic.elementwise.neg
        fault = self
        self._break_view_tangents()

        def wrong(spec: Any, *args: Any, **kwargs: Any) -> Any:
            out = original(spec, *args, **kwargs)
            if out is not None and fault.seen is not None:
                fault.seen.add(spec.grad_fn)
                return out
            if out is None or spec.grad_fn not in fault.targets:
                return out
            fault.reached += 1
            if isinstance(out, (list, tuple)):
                i = next((i for i, t in enumerate(out) if t is not None), None)
                return out if i is None else [*out[:i], neg(out[i]), *out[i + 1:]]
            return neg(out)

        forward_ad.tangent_of = wrong  # record_tangent reads the module's global

    def _break_view_tangents(self) -> None:
        """Key each forward view by the view ops that made it (`_fault_view_ops`, set on
        the copy's views only), and negate the tangent _view_at makes for a targeted one.
        The makers of views (view_making.make_view, views_multi_output._make_multi_view, bound
        by name in several modules) are wrapped wherever the copy binds them; a targeted
        view's tangent, which the view op reads as it runs, is made again through the
        faulty _view_at."""
        forward_ad = self.module.forward_ad
        view_at = forward_ad._view_at
        neg = self.module.ops.basic.elementwise.neg
        fault = self

        def wrong_view_at(tangent: Any, view: Any) -> Any:
            out = view_at(tangent, view)
            if fault.seen is not None:
                fault.seen.update(getattr(view, "_fault_view_ops", ()))
                return out
            if fault.targets.isdisjoint(getattr(view, "_fault_view_ops", ())):
                return out
            fault.reached += 1
            return neg(out)

        forward_ad._view_at = wrong_view_at   # fw_grad reads the module's global

        def tag(src: Any, outs: Sequence[Any], spec: Any) -> None:
            chain = getattr(src, "_fault_view_ops", ()) if src._fw_base is not None else ()
            for out in outs:
                if out._fw_base is None:   # (an inference tensor's alias: no forward view)
                    continue
                out._fault_view_ops = (*chain, spec.grad_fn)
                if fault.seen is not None or not fault.targets.isdisjoint(
                        out._fault_view_ops):
                    out._fw_view_of = None
                    if forward_ad.active():
                        forward_ad.fw_grad(out)

        def tagged(make: Any, multi: bool) -> Any:
            def wrapper(src: Any, fns: Any, spec: Any, *args: Any, **kwargs: Any) -> Any:
                out = make(src, fns, spec, *args, **kwargs)
                tag(src, out if multi else (out,), spec)
                return out
            return wrapper

        makers = {}
        for module, name, multi in ((self.module.ops.basic.view_making, "make_view", False),
                                    (self.module.views_multi_output, "_make_multi_view", True)):
            original = getattr(module, name)
            makers[id(original)] = tagged(original, multi)
        prefix = self.module.__name__ + "."
        for sub in list(sys.modules.values()):
            if getattr(sub, "__name__", "").startswith(prefix) or sub is self.module:
                for attr, value in list(vars(sub).items()):
                    if id(value) in makers and callable(value):
                        setattr(sub, attr, makers[id(value)])


@dataclass
class Detection:
    op: str
    targets: tuple[str, ...]
    detected_by: int | None  # index of the first program that diverged, None if none did
    reached: bool = True  # (JVP faults) some program ran a broken formula

    @property
    def detected(self) -> bool:
        return self.detected_by is not None


class FaultSearch:
    """Programs run on the oracle, each once, when a fault first needs it; each fault then
    runs them on the faulty copy until one diverges."""

    def __init__(self, programs: Sequence[Program], name: str = "faulty_reference_engine"
                 ) -> None:
        self.programs = [number(p) for p in programs]
        self.oracle_engine = Engine("reference_engine", reference_engine)
        # run when first needed, not all up front: a search usually stops within the first
        # programs (the 8 ops of tests/test_generator_finds_faults.py: by the 9th of 250,
        # whose oracle runs were 14.7 s of CPU; benchmarks/README.md, issue 26)
        self._oracle: dict[int, Trace] = {}
        self._twins: dict[int, Trace] = {}
        self.module = engine_copy(name)
        self.fault = WrongSign(self.module)
        self.jvp_fault = WrongTangent(self.module)
        self.engine = Engine(name, self.module)

    def oracle(self, i: int) -> Trace:
        """The oracle's run of program i."""
        if i not in self._oracle:
            self._oracle[i] = run_program(self.oracle_engine, self.programs[i],
                                          continue_on_error=True)
        return self._oracle[i]

    def twin(self, i: int) -> Trace:
        """The oracle's run of program i's float64 twin: the reference a values divergence
        is judged against, as gen/program_check.py judges one against torch's (gen/rounding.py), so
        that a fault the rule would pass for amplified rounding counts as missed."""
        if i not in self._twins:
            self._twins[i] = rounding.reference(
                self.oracle_engine, self.programs[i], torch=load_engine("torch"),
                unit=rounding.unit_roundoff(self.oracle(i)))
        return self._twins[i]

    def diverges(self, i: int) -> bool:
        """Whether program i on the (faulty) copy diverges from the oracle."""
        faulty = run_program(self.engine, self.programs[i], continue_on_error=True)
        d = compare(self.oracle(i), faulty, "float32").divergence
        if rounding.concerns_values(d):  # judged as the suite judges it
            d = compare(self.oracle(i), faulty, "float32", reference=self.twin(i)).divergence
        return d is not None

    def detect(self, op: str, order: Sequence[int] | None = None, jvp: bool = False
               ) -> Detection:
        """Break `op`'s backward (with `jvp`, its forward-mode formulas) and run the
        programs (in `order`, default all in turn)."""
        row = next(r for r in registry.OPS if r.name == op)
        fault: WrongSign | WrongTangent = self.jvp_fault if jvp else self.fault
        fault.targets = targets = grad_fns(self.module, row)
        self.jvp_fault.reached = 0
        try:
            for i in (range(len(self.programs)) if order is None else order):
                if self.diverges(i):
                    return Detection(op, tuple(sorted(targets)), i)
            return Detection(op, tuple(sorted(targets)), None,
                             reached=not jvp or self.jvp_fault.reached > 0)
        finally:
            fault.targets = frozenset()
