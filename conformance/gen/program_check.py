"""Generated programs: run on torch and an engine, compared, measured, and written as cases.

A generated Program is printed and parsed back (so its statements carry line numbers), run
on both engines past any failing statement, and compared with the one comparator. What it
exercised (features, error kinds, a completed backward) feeds the hit-rate table; a
divergence becomes a ready YAML case whose failing-on-torch statements are wrapped in
`with raises(kind):`, so that the case holds on torch and pins the engine's divergence.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Iterator
from dataclasses import dataclass, replace

from conformance.case import program as ir
from conformance.case.language import parse, to_source
from conformance.gen import nan_sign, rounding
from conformance.gen.flows import complex_hits, tangent_hits
from conformance.gen.reading import (
    api_of,
    detaches,
    features_of,
    is_backward,
    makes_leaf_requiring_grad,
    names_in,
    nodes,
    ops_in,
    walk,
)
from conformance.run.compare import Comparison, Divergence, compare
from conformance.run.decision import compared
from conformance.run.engine import Engine
from conformance.run.interpreter import run_program
from conformance.run.trace import ERROR, OK, FieldMask, Trace
from conformance.run.verdicts import Verdict

# Generated programs do not compare the sign of a zero (hand-written cases do). torch's CPU
# loops run each full 64-byte block of a contiguous run of elements (16 float32, 8 float64,
# measured on torch 2.13's AVX512 build) through SIMD code and the rest through scalar code,
# and the two differ on ties: maximum of +0 and -0 is the second operand in SIMD, the first
# in scalar code; softshrink's zero region is +0 from a mask in SIMD, `a * 0` in scalar code;
# clamp, fmax and several backward kernels likewise. A zero's sign then depends on its
# position and the CPU's vector width, which the engine, knowing neither, cannot model (in
# the README's probe, 12 of the default profile's first 500 programs differed only so).
# Values after a masked difference are still compared; a program with one counts as
# `masked:signed_zero` in the hit-rate table.
SIGNED_ZERO = FieldMask("*.signed_zero", "the sign of a zero depends on torch's SIMD lanes")


@dataclass
class Checked:
    program: ir.Program  # as parsed from `source`: statements carry lines
    source: str
    torch_trace: Trace
    engine_trace: Trace
    comparison: Comparison
    # the divergence a NaN's sign read by copysign carried, where the program agrees once
    # every such NaN is +nan (gen/nan_sign.py): the comparison is that program's
    nan_sign: Divergence | None = None
    # the first divergence on values that float32 rounding amplified by the program's chain
    # explains (gen/rounding.py: torch's float64 twin of the program bounds it)
    rounding: Divergence | None = None

    def verdict(self, strict_messages: bool = True) -> str:
        """The program's verdict by the one decision of case items and `explain`
        (run/decision.py `compared`): diverges, masked or pass; a message text alone that
        differs diverges unless `strict_messages` is off (--lenient-messages)."""
        return compared(self.comparison, strict_messages=strict_messages)[0]

    @property
    def diverges(self) -> bool:
        """Diverges with strict messages (the default verdict)."""
        return self.verdict() == Verdict.DIVERGES.value

    @property
    def first(self) -> Divergence | None:
        """The difference a report names first: the behavioural one, else a message text."""
        return self.comparison.divergence or self.comparison.message


def check(program: ir.Program, engine: Engine, torch: Engine, *, dtype: str = "float32",
          device: str = "cpu", source_lines: bool = True) -> Checked:
    """Run `program` on both engines and compare, with the engine's `conformance_masks`
    (a masked difference is noted in `comparison.masked`, never a divergence). Statements
    are told apart by their order (`number`); only a divergent program is printed and
    parsed (and run again: 2 runs, 3 with the float64 twin), so that its report and case
    carry the lines of its source. Without `source_lines` it is not: its statements keep
    their order numbers and `source` is empty, for a caller that needs only the verdict (a
    search's candidate whose report no one reads: the same runs of the same program give
    the same verdict)."""
    numbered = number(program)
    with cyclic_gc_paused():
        checked = _check(numbered, "", engine, torch, dtype, device)
    # the NaN-sign and rounding re-checks concern values, so a behavioural divergence
    if checked.comparison.divergence is not None and nan_sign.calls_copysign(program):
        rewritten = nan_sign.nan_signs_positive(program)
        with cyclic_gc_paused():
            again = _check(number(rewritten), "", engine, torch, dtype, device)
        # the NaN's sign carried the divergence: the program agrees once every such NaN is +nan
        signed = checked.comparison.divergence if again.comparison.divergence is None else None
        if signed is not None and not again.diverges:  # the same statements and lines: the
            return replace(again, program=numbered, nan_sign=signed)  # hits are the program's
        program, checked = rewritten, replace(again, nan_sign=signed)
    if rounding.concerns_values(checked.comparison.divergence):
        # the same program's runs again gave the same traces: only the twin is new
        with cyclic_gc_paused():
            again = _check(checked.program, "", engine, torch, dtype, device, twin=True,
                           runs=(checked.torch_trace, checked.engine_trace))
        checked = replace(again, rounding=checked.comparison.divergence)
    if checked.diverges and source_lines:
        source = to_source(program)
        with cyclic_gc_paused():
            checked = replace(_check(parse(source), source, engine, torch, dtype, device,
                                     twin=checked.rounding is not None),
                              rounding=checked.rounding, nan_sign=checked.nan_sign)
    return checked


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while one generated program runs: it walked the
    many small objects of traces and graphs again and again (the run side took 8 % less
    time without it: 1.91 s against 2.08 s per 200 programs, median of 6 alternations,
    benchmarks/README.md). Reference counting still frees everything acyclic at once; cycles
    a program made wait until the collector runs again after it. A generated program's
    tensors are small (GenSettings caps them), so what waits is bounded; case programs,
    which may hold large tensors, run with the collector on.

    The first generated program of a process also freezes what is alive before it
    (`_freeze_long_lived`)."""
    _freeze_long_lived()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@functools.cache
def _freeze_long_lived() -> None:
    """Everything alive before the first generated program (torch, hypothesis, the engines,
    the collected items: about 250,000 objects) out of the cyclic collector's sight, once
    per process: the full collections that a campaign's garbage triggers walked them all
    (0.16 s each, 11 % of the generated programs' time in benchmarks/
    generated_throughput.py, 3 % after). Frozen objects are still freed by reference
    counting; only a cycle among them that dies later waits for the process' end, and
    the collection just before the freeze leaves none dead."""
    gc.collect()
    gc.freeze()


def _check(program: ir.Program, source: str, engine: Engine, torch: Engine, dtype: str,
           device: str, twin: bool = False, runs: tuple[Trace, Trace] | None = None
           ) -> Checked:
    """One run on each engine (or `runs`, their traces of this `program`), compared; with
    `twin`, against torch's float64 twin of the program as the reference for values
    (gen/rounding.py)."""
    expected, actual = runs or (
        run_program(torch, program, dtype=dtype, device=device, continue_on_error=True),
        run_program(engine, program, dtype=dtype, device=device, continue_on_error=True))
    reference = rounding.reference(torch, program, device,
                                   unit=rounding.unit_roundoff(expected)) if twin else None
    return Checked(program, source, expected, actual,
                   compare(expected, actual, dtype, (SIGNED_ZERO, *engine.masks), reference))


def number(program: ir.Program) -> ir.Program:
    """The program with each statement's `line` set to its position in execution-text order
    (1, 2, ...): distinct per statement like source lines, without printing and parsing."""
    counter = iter(range(1, 1 << 30))

    def stmts(body: tuple[ir.Stmt, ...]) -> tuple[ir.Stmt, ...]:
        out: list[ir.Stmt] = []
        for s in body:
            line = next(counter)
            if isinstance(s, (ir.With, ir.For)):
                s = replace(s, body=stmts(s.body))
            elif isinstance(s, ir.FunctionClass):
                s = replace(s, methods=tuple(replace(m, body=stmts(m.body))
                                             for m in s.methods))
            out.append(replace(s, line=line))
        return tuple(out)

    return ir.Program(stmts(program.body))


def truncate(program: ir.Program, line: int) -> ir.Program:
    """The statements up to the one holding `line`: all a first divergence there depends on
    (later statements cannot change it, and removing them leaves the random draws as they
    were)."""
    return ir.Program(tuple(s for s in program.body if s.line <= line))


# ---- what a program exercised -----------------------------------------------------------

class _GradFlow:
    """A static data-flow walk of a program's assignments: for each name, whether it
    requires grad and the ops a gradient from it flows back through (ops whose value was
    made from an input that requires grad). Views and hooks are not followed: an
    approximation that can only miss a path, never invent an op the statement lacks."""

    def __init__(self, ok_lines: set[int]) -> None:
        self.ok_lines = ok_lines
        self.requires: dict[str, bool] = {}
        self.through: dict[str, frozenset[str]] = {}
        self.compared: set[str] = set()

    def flow(self, e: object, enabled: bool) -> tuple[bool, frozenset[str]]:
        refs = [r for r in names_in(e) if self.requires.get(r)]
        if not enabled:
            return False, frozenset()
        ops = frozenset(ops_in(e)) if refs else frozenset()
        carried = frozenset().union(*(self.through.get(r, frozenset()) for r in refs))
        return bool(refs) or makes_leaf_requiring_grad(e), ops | carried

    def gradient(self, stmt: ir.Stmt, root: ir.Expr) -> None:
        if stmt.line in self.ok_lines:
            self.compared |= self.flow(root, True)[1]

    def write(self, target: str, e: object, enabled: bool) -> None:
        """An in-place write into `target` of a value computed from `e` (and target)."""
        rg, ops = self.flow(e, enabled)
        self.requires[target] = self.requires.get(target, False) or rg
        self.through[target] = self.through.get(target, frozenset()) | ops

    def run(self, body: tuple[ir.Stmt, ...], enabled: bool = True) -> None:
        for stmt in body:
            if isinstance(stmt, ir.With):
                mode = ir.dotted(stmt.context.func) if isinstance(stmt.context, ir.Call) \
                    else None
                self.run(stmt.body, {"torch.no_grad": False, "torch.enable_grad": True
                                     }.get(mode or "", enabled))
            elif isinstance(stmt, ir.For):
                self.run(stmt.body, enabled)
            elif isinstance(stmt, ir.Assign):
                self.assign(stmt, enabled)
            elif isinstance(stmt, ir.AugAssign) and isinstance(stmt.target, ir.Name):
                self.write(stmt.target.id, stmt, enabled)
            elif isinstance(stmt, ir.ExprStmt) and isinstance(stmt.value, ir.Call) and \
                    isinstance(stmt.value.func, ir.Attribute):
                self.call(stmt, stmt.value, stmt.value.func, enabled)

    def assign(self, stmt: ir.Assign, enabled: bool) -> None:
        value = stmt.value
        if isinstance(value, ir.Call) and ir.dotted(value.func) == "torch.autograd.grad" \
                and value.args:
            self.gradient(stmt, value.args[0])
        target = stmt.target
        if isinstance(target, ir.Subscript) and isinstance(target.value, ir.Name):
            self.write(target.value.id, value, enabled)
            return
        names = [target] if isinstance(target, ir.Name) else list(target.elts) \
            if isinstance(target, ir.Tuple) else []
        rg, ops = (False, frozenset[str]()) if detaches(value) else self.flow(value, enabled)
        for n in names:
            if isinstance(n, ir.Name):
                self.requires[n.id], self.through[n.id] = rg, ops

    def call(self, stmt: ir.Stmt, value: ir.Call, func: ir.Attribute, enabled: bool) -> None:
        if func.attr == "backward":
            self.gradient(stmt, func.value)
        elif func.attr == "requires_grad_" and isinstance(func.value, ir.Name):
            flag = value.args[0] if value.args else ir.Const(True)
            if flag == ir.Const(True):
                self.requires[func.value.id] = True
        elif func.attr.endswith("_") and isinstance(func.value, ir.Name):
            self.write(func.value.id, value, enabled)


def api_hits(program: ir.Program) -> set[str]:
    """`api:<path>` for every engine entry point the program calls, `op:<name>` for every
    registry op it calls in any form (function, method, in-place, operator)."""
    found = set()
    for node in nodes(program.body):
        a = api_of(node)
        if a is not None:
            found.add(a[0])
            if a[1] is not None:
                found.add(f"op:{a[1]}")
    return found


def grad_hits(program: ir.Program, ok_lines: set[int]) -> set[str]:
    """`grad:<op>` for every op a compared gradient flows through: a backward or
    autograd.grad statement that completed on torch (a line in `ok_lines`) whose root
    depends, by the assignments, on a value that op made from an input requiring grad."""
    flow = _GradFlow(ok_lines)
    flow.run(program.body)
    return {f"grad:{op}" for op in flow.compared}


def hits(checked: Checked) -> set[str]:
    """What the torch run exercised: features, `error:<kind>`, `completed_backward`, the API
    paths and ops used (`api:`, `op:`), the ops gradients were compared through (`grad:`),
    tangents and complex gradients (`jvp:`, `complex_grad:`: conformance.gen.flows);
    `masked:signed_zero` where the engine differed only in a zero's sign, `masked:engine`
    where it first differed in a field its `conformance_masks` cover (before any
    divergence), `masked:nan_sign` where only in the sign of a NaN copysign read,
    `masked:float32_rounding` where a value differed by rounding the program amplified
    (gen/rounding.py) and nothing diverges."""
    found = {f"feature:{f}" for f in features_of(checked.program)}
    by_line = {s.line: s for s in walk(checked.program.body)}
    ok_lines = set()
    for step in checked.torch_trace.steps:
        if step.outcome.status == ERROR:
            found.add(f"error:{step.outcome.kind}")
        elif step.outcome.status == OK:
            ok_lines.add(step.line)
            if step.line in by_line and is_backward(by_line[step.line]) and \
                    not isinstance(by_line[step.line], (ir.With, ir.For)):
                found.add("completed_backward")
    if checked.comparison.mask is not None:
        found.add("masked:signed_zero" if checked.comparison.mask == SIGNED_ZERO
                  else "masked:engine")
    if checked.nan_sign is not None:
        found.add("masked:nan_sign")
    if checked.rounding is not None and checked.comparison.divergence is None:
        found.add("masked:float32_rounding")

    return (found | api_hits(checked.program) | grad_hits(checked.program, ok_lines)
            | tangent_hits(checked.program, ok_lines) | complex_hits(checked.program, ok_lines))
