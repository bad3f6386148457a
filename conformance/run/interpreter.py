"""The one interpreter: runs a Program against an engine and records its Trace.

Program text is never handed to Python's eval/exec/compile: each IR node is interpreted
here, and names and attributes reach an engine only through the API table (`api`).
"""

from __future__ import annotations

import contextlib
import gc
import math
import operator
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from conformance.case import api, kinds, language, operators
from conformance.case import program as ir
from conformance.run import changes, isolation, limits, predict
from conformance.run.blackbox import LineStore
from conformance.run.compare import tolerances
from conformance.run.engine import Engine, MissingAPI, lacks
from conformance.run.observe import (
    EngineMade,
    NodeReads,
    Reusable,
    observe,
    observe_value,
    snapshot_bytes,
    tensor_values,
)
from conformance.run.trace import (
    ASSERTION,
    ERROR,
    LIMIT,
    OK,
    Event,
    Outcome,
    Step,
    Trace,
    WarningRecord,
)

BINARY: dict[str, Callable[[Any, Any], Any]] = {o.symbol: o.function for o in operators.BINARY}
INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    o.symbol: o.inplace for o in operators.BINARY if o.inplace is not None}
COMPARE: dict[str, Callable[[Any, Any], Any]] = {o.symbol: o.function for o in operators.COMPARE}
UNARY: dict[str, Callable[[Any], Any]] = {o.symbol: o.function for o in operators.UNARY}
_IDENTITY = frozenset({"is", "is not"})  # comparisons that compute nothing
# Most statements' outcome (immutable: one object serves every step)
_OK_OUTCOME = Outcome(OK)
# Statements whose inner statements are steps of their own (they enter an engine's
# statement context themselves).
_COMPOUND = (ir.With, ir.For, ir.FunctionClass)
# The reference observation: every live name snapshot after every statement. Off, a step
# reuses the snapshots of the names its statement cannot have changed (conformance.changes);
# tests/conformance/test_incremental_snapshots.py holds the two to identical traces.
FULL_SNAPSHOTS = False


class CaseFailure(Exception):
    """The case's own check failed (assert, assert_close, raises, warns)."""


class _StepFailed(Exception):
    """A recorded step failed; unwinds to the nearest `with raises` or ends the run."""

    def __init__(self, step: Step) -> None:
        self.step = step


class _Return(BaseException):
    """`return` in a Function method: unwinds to the method's call through the `with` and
    `for` blocks of its body. A BaseException, so that no `except Exception` on the way (the
    harness's, or an engine's context manager's `__exit__`) takes it for an error."""

    def __init__(self, value: Any) -> None:
        self.value = value


@dataclass(frozen=True)
class Namespace:
    """A dotted API path that is a namespace (`torch`, `torch.autograd`, ...)."""

    path: str


@dataclass(frozen=True)
class Expectation:
    """What `raises(kind)` / `warns(kind)` evaluate to; only `with` may use it."""

    warning: bool
    kind: str


class Scope:
    def __init__(self, parent: Scope | None = None) -> None:
        self.vars: dict[str, Any] = {}
        self.parent = parent

    def get(self, name: str) -> Any:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            scope = scope.parent
        raise CaseFailure(f"name `{name}` is used before it is assigned")


# Values that are Python's own, not an engine's: an AttributeError on them (`.zero_()` on a
# `.grad` that is None) is the behaviour under test, never a missing API.
_PLAIN: frozenset[type] = frozenset(
    {type(None), bool, int, float, complex, str, list, tuple, dict})


class Interpreter:
    line = LineStore()  # the program line running, kept in the black box too

    def __init__(self, engine: Engine, *, seed: int = 0, dtype: str = "float32",
                 device: str = "cpu", continue_on_error: bool = False,
                 full_snapshots: bool | None = None) -> None:
        self.engine = engine
        # The reference observation snapshots every live name after every statement; the
        # default reuses the snapshots of names a statement cannot have changed (changes.py).
        self.full_snapshots = FULL_SNAPSHOTS if full_snapshots is None else full_snapshots
        # Generated programs run on past a failing statement (the failure is recorded), so
        # that what follows an error is explored too; case programs stop, as Python would.
        self.continue_on_error = continue_on_error
        self.dtype = dtype
        self.device = device
        self.seed = seed
        self._rng: np.random.Generator | None = None  # made on first use (it is not cheap)
        self.globals = Scope()
        self.trace = Trace(engine.name)
        self.events: list[Event] = []
        # ctx objects handed to Function methods, by id: they may carry the program's own
        # state. Holding them keeps their ids from being reused by other objects.
        self.contexts: dict[int, Any] = {}
        # Names the program stored on its ctx objects (its Function state).
        self.ctx_names: set[str] = set()
        # Tensors the autograd engine made (autograd.grad's results, every tensor once seen as
        # a .grad: observe.observe notes those), by identity (see observe.Observer).
        self.engine_made = EngineMade()
        # Protocol v2 (conformance/engines): the engine's statement context, and the
        # harness's own code that runs inside an engine (observation, hook events) exempt
        # from its compilers.
        self.statement_context = engine.statement_context
        self.observe = engine.exempt(observe)
        self.observe_value = engine.exempt(observe_value)
        self.builtins: dict[str, Any] = {
            "raises": lambda kind: self._expectation(kind, warning=False),
            "warns": lambda kind: self._expectation(kind, warning=True),
            "assert_close": self._assert_close,
            "range": range, "len": len, "float": float, "int": int,
        }
        # API paths the harness serves itself, so that every engine sees identical random
        # values (nn.Linear is built by the engine, then its parameters are refilled).
        self.seeded: dict[str, Callable[..., Any]] = {
            "torch.rand": self._rand, "torch.randn": self._randn,
            "torch.rand_like": self._rand_like, "torch.randn_like": self._randn_like,
            "torch.manual_seed": self._manual_seed, "torch.nn.Linear": self._linear,
        }
        # Bounds (conformance.limits): statements executed, the program line running (named
        # when a whole-run limit ends the run), and the snapshot memory of the trace so far.
        self.executed = 0
        self.depth = 0  # program-defined calls running, nested (limits.MAX_CALL_DEPTH)
        self.line = 0
        self.method_depth = 0  # Function method bodies running (nested: apply in forward)
        # Tensors the run's operations made, by id: (a weak reference, elements), and their
        # elements in all (freed ones are taken off when that goes beyond the limit).
        self._live: dict[int, tuple[weakref.ref[Any], int]] = {}
        self.live = 0
        self._module_class: Any = None  # the engine's nn.Module, once looked up
        self.trace_bytes = 0
        # Incremental observation: the last snapshots of top-level tensors, and what the
        # running statement has done so far (conformance.changes).
        self.reusable: dict[str, Reusable] = {}
        self.node_reads: list[NodeReads] = [{}]  # graph nodes the last observation read
        self.effects = changes.Effects()
        self.unknown_changes = False  # a compound statement was entered since the last step
        self._sizes: dict[int, int] = {}  # snapshot_bytes of the last step's snapshots
        # The run's warnings as recorded (each step takes those its statement gave; see
        # run), and the warning filters that record them all.
        self.warnings: list[warnings.WarningMessage] = []
        self.filters: list[Any] = []

    @property
    def rng(self) -> np.random.Generator:
        if self._rng is None:
            self._rng = np.random.default_rng(self.seed)
        return self._rng

    @rng.setter
    def rng(self, generator: np.random.Generator) -> None:
        self._rng = generator

    # ---- running ---------------------------------------------------------------------
    def run(self, program: ir.Program) -> Trace:
        # The guard restores whatever process-global state the program changed (grad mode
        # switched by a plain call, ...), so that no later run in this process sees it.
        with isolation.guard(self.engine) as changes, \
                self.engine.run_context(self.device, self.dtype), \
                warn_always(self.engine) as always, \
                warnings.catch_warnings(record=True) as caught:
            self.trace.warn_always = always
            # every warning is recorded; each step takes those its statement gave and drops
            # the rest (its observation's): one context per run, not one per step
            warnings.simplefilter("always")
            self.warnings, self.filters = caught, list(warnings.filters)
            try:
                self._block(program.body, self.globals)
            except _StepFailed as failed:
                self.trace.failure = failed.step
            except limits.RunLimit as stopped:
                if stopped.line is None:  # the timer's signal cannot know the line
                    stopped.line = self.line
                raise
        self.trace.state_changes = changes
        return self.trace

    def _count(self, line: int) -> None:
        """One more statement (or lambda evaluation) executed, at program line `line`."""
        self.line = line
        self.executed += 1
        if self.executed > limits.MAX_STATEMENTS:
            raise limits.RunLimit(f"the run executed more than {limits.MAX_STATEMENTS} "
                                  "statements (loops multiply: count the iterations)", line)

    def _block(self, body: tuple[ir.Stmt, ...], scope: Scope) -> None:
        if self.method_depth:
            # inside a Function method (running inside an engine): its statements, those of
            # its `with` and `for` blocks included, are not steps
            for stmt in body:
                self._count(stmt.line)
                self._statement(stmt, scope)
        else:
            for stmt in body:
                self._step(stmt, scope)

    def _step(self, stmt: ir.Stmt, scope: Scope) -> None:
        """Execute one statement and record it as a step."""
        self._count(stmt.line)
        compound = isinstance(stmt, _COMPOUND)
        if compound:
            # entering it (a context manager, saved-tensor hooks) is not a step of its own:
            # its first inner step rechecks every name (observe.unchanged)
            self.unknown_changes = True
        effects = self.effects = changes.Effects()
        caught = self.warnings
        first = len(caught)  # the warnings from here on are this step's
        try:
            if self.statement_context is None or isinstance(stmt, _COMPOUND):
                self._statement(stmt, scope)
            else:
                with self.statement_context():
                    self._statement(stmt, scope)
            outcome = _OK_OUTCOME
        except _StepFailed:
            # an inner step failed: its warnings went with it, and so do this one's (no
            # step records them), as they would leaving a context of this step's own
            del caught[first:]
            raise
        except MemoryError:  # the machine's limit, not a behaviour: the item is an error
            raise
        except Exception as e:  # an engine error is a recorded outcome, not a crash
            outcome = _outcome(e)
        records = [_warning_record(w) for w in caught[first:]]
        changed = None if self.full_snapshots or compound or self.unknown_changes or \
            not effects.pure or self.events else changes.assigned_names(stmt)
        self.unknown_changes = False
        # observing must not warn (a non-leaf's .grad read does): what it gives is dropped
        names = self.observe(self.engine, self._visible(scope),
                             engine_made=self.engine_made,
                             reusable=None if self.full_snapshots else self.reusable,
                             changed=changed, warnings_silenced=True,
                             node_reads=None if self.full_snapshots else self.node_reads)
        del caught[first:]
        if warnings.filters != self.filters:
            # engine code changed the filters: set back, as leaving a step's own context
            # would, so that no later step sees the change
            cast(list[Any], warnings.filters)[:] = self.filters
            warnings.simplefilter("always")  # (already first: only tells `warnings`)
        step = Step(stmt.line, outcome, records, self.events, names)
        self.events = []
        self._budget(step)
        self.trace.steps.append(step)
        if outcome.status != OK:
            if self.continue_on_error:
                self.trace.failure = self.trace.failure or step
            else:
                raise _StepFailed(step)

    def _budget(self, step: Step) -> None:
        # A snapshot reused from the step before is counted again (each step is charged for
        # all it shows, in either observation), its size read from the step before.
        sizes: dict[int, int] = {}
        total = 0
        for path, snap in step.names.items():
            size = self._sizes.get(id(snap))
            if size is None:
                size = snapshot_bytes({path: snap})
            sizes[id(snap)] = size
            total += size
        self._sizes = sizes  # the snapshots are the last step's: alive, their ids theirs
        self.trace_bytes += total + sum(
            snapshot_bytes(ev.received) + snapshot_bytes(ev.returned) for ev in step.events)
        if self.trace_bytes > limits.MAX_TRACE_BYTES:
            raise limits.RunLimit(
                f"the trace of this run exceeds its memory budget of "
                f"{limits.MAX_TRACE_BYTES >> 20} MB of snapshots after {len(self.trace.steps) + 1}"
                " steps (fewer statements, or fewer or smaller tensors in scope)", step.line)

    def _visible(self, scope: Scope) -> dict[str, Any]:
        return {n: v for n, v in scope.vars.items() if not isinstance(v, type)}

    def _statement(self, stmt: ir.Stmt, scope: Scope) -> None:
        if isinstance(stmt, ir.Assign):
            self._assign(stmt.target, self._eval(stmt.value, scope), scope)
        elif isinstance(stmt, ir.AugAssign):
            self._aug_assign(stmt, scope)
        elif isinstance(stmt, ir.ExprStmt):
            self._eval(stmt.value, scope)
        elif isinstance(stmt, ir.Assert):
            if not self._truth(self._eval(stmt.test, scope)):
                msg = "" if stmt.msg is None else f": {self._eval(stmt.msg, scope)}"
                raise CaseFailure(f"assert failed{msg}")
        elif isinstance(stmt, ir.With):
            self._with(stmt, scope)
        elif isinstance(stmt, ir.For):
            args = [self._eval(a, scope) for a in stmt.range_args]
            iterations = range(*args)
            try:
                count = str(len(iterations))
            except OverflowError:  # beyond sys.maxsize
                count = "more than 2**63"
            if not count.isdigit() or int(count) > api.MAX_RANGE:
                raise limits.LimitRefused(
                    f"`range({', '.join(map(limits.short, args))})` has {count} iterations; "
                    f"the case language allows {api.MAX_RANGE} per loop (a smaller bound)")
            for i in iterations:
                scope.vars[stmt.var] = i
                self._block(stmt.body, scope)
        elif isinstance(stmt, ir.Return):
            raise _Return(None if stmt.value is None else self._eval(stmt.value, scope))
        elif isinstance(stmt, ir.FunctionClass):
            scope.vars[stmt.name] = self._function_class(stmt, scope)
        else:  # pragma: no cover - the parser produces nothing else
            raise TypeError(f"unknown statement {stmt!r}")

    def _statements(self, body: tuple[ir.Stmt, ...], scope: Scope) -> Any:
        """Run a method body (not recorded as steps); its return value."""
        line = self.line
        self.method_depth += 1
        try:
            self._block(body, scope)
        except _Return as r:
            return r.value
        finally:
            self.method_depth -= 1
            self.line = line
        return None

    def _with(self, stmt: ir.With, scope: Scope) -> None:
        context = self._eval(stmt.context, scope)
        if not isinstance(context, Expectation):
            with context:
                self._block(stmt.body, scope)
            return
        if self.method_depth:
            self._expect_in_method(context, stmt.body, scope)
            return
        first = len(self.trace.steps)
        if context.warning:
            self._block(stmt.body, scope)
            seen = [w.kind for s in self.trace.steps[first:] for w in s.warnings]
            if context.kind not in seen:
                raise CaseFailure(f"expected a warning of kind {context.kind!r}; "
                                  f"saw {seen or 'none'}")
            return
        try:
            self._block(stmt.body, scope)
        except _StepFailed as failed:
            got = failed.step.outcome
            if got.status == ERROR and got.kind == context.kind:
                return
            if got.status == LIMIT:  # a limit is the case's problem, not an expected error
                raise
            raise CaseFailure(f"expected an error of kind {context.kind!r}; got "
                              f"{got.describe()}") from None
        raise CaseFailure(f"expected an error of kind {context.kind!r}; the block ran "
                          "without error")

    def _expect_in_method(self, context: Expectation, body: tuple[ir.Stmt, ...],
                          scope: Scope) -> None:
        """`with raises/warns` in a Function method, whose statements are not steps: the
        same rules, read from the exception and the warnings themselves."""
        first = len(self.warnings)
        try:
            self._block(body, scope)
        except Exception as e:
            # an error ends `warns` as it ends its body; a limit or a failed assertion is
            # not an expected error
            if context.warning or isinstance(e, (CaseFailure, limits.LimitRefused,
                                                 MemoryError)):
                raise
            got = _outcome(e)
            if got.kind != context.kind:
                raise CaseFailure(f"expected an error of kind {context.kind!r}; got "
                                  f"{got.describe()}") from None
            return
        if context.warning:
            seen = [_warning_record(w).kind for w in self.warnings[first:]]
            if context.kind not in seen:
                raise CaseFailure(f"expected a warning of kind {context.kind!r}; "
                                  f"saw {seen or 'none'}")
            return
        raise CaseFailure(f"expected an error of kind {context.kind!r}; the block ran "
                          "without error")

    def _assign(self, target: ir.Expr, value: Any, scope: Scope) -> None:
        if isinstance(target, ir.Name):
            scope.vars[target.id] = value
        elif isinstance(target, ir.Tuple):
            items = list(value)
            if len(items) != len(target.elts):
                raise CaseFailure(f"cannot unpack {len(items)} values into "
                                  f"{len(target.elts)} names")
            for t, v in zip(target.elts, items, strict=False):
                self._assign(t, v, scope)
        elif isinstance(target, ir.Subscript):
            obj = self._eval(target.value, scope)
            self._check_item_store(obj)
            self._set_item(obj, self._index(target.index, scope), value)
        elif isinstance(target, ir.Attribute):
            obj = self._eval(target.value, scope)
            self._check_attribute_store(obj, target.attr)
            setattr(obj, target.attr, value)
        else:  # pragma: no cover
            raise TypeError(f"cannot assign to {target!r}")

    def _aug_assign(self, stmt: ir.AugAssign, scope: Scope) -> None:
        # Python's own semantics: x[i] += v is t = x[i]; t += v; x[i] = t.
        op = INPLACE[stmt.op]
        value = self._eval(stmt.value, scope)
        target = stmt.target
        if isinstance(target, ir.Name):
            scope.vars[target.id] = self._binary(op, stmt.op, scope.get(target.id), value)
        elif isinstance(target, ir.Subscript):
            obj = self._eval(target.value, scope)
            self._check_item_store(obj)
            index = self._index(target.index, scope)
            self._set_item(obj, index, self._binary(op, stmt.op, self._item(obj, index), value))
        else:  # pragma: no cover
            raise TypeError(f"cannot augment {target!r}")

    # ---- expressions -----------------------------------------------------------------
    def _eval(self, e: ir.Expr, scope: Scope) -> Any:
        # one lookup by the node's class instead of a chain of isinstance tests: this runs
        # for every node of every statement (the IR's classes have no subclasses)
        evaluate = _EVALUATORS.get(type(e))
        if evaluate is None:  # pragma: no cover - the parser produces nothing else
            raise TypeError(f"unknown expression {e!r}")
        return evaluate(self, e, scope)

    def _const(self, e: ir.Const, scope: Scope) -> Any:
        return e.value

    def _name(self, e: ir.Name, scope: Scope) -> Any:
        if e.id in api.ROOTS:
            return self._path(api.ROOTS[e.id])
        if e.id in api.BUILTINS:
            return self.builtins[e.id]
        return scope.get(e.id)

    def _attribute_read(self, e: ir.Attribute, scope: Scope) -> Any:
        obj = self._eval(e.value, scope)
        if isinstance(obj, Namespace):
            return self._path(f"{obj.path}.{e.attr}")
        path = _api_path(e)
        if path in api.FUNCTIONS:  # a path through an API object (Variable._execution_engine)
            return self._path(path)
        self._check_object_attribute(obj, e.attr)
        return self._attribute(obj, e.attr)

    def _call(self, e: ir.Call, scope: Scope) -> Any:
        func = self._eval(e.func, scope)
        if isinstance(func, (Namespace, Expectation)):
            raise CaseFailure(f"{func} is not callable")
        args = [self._eval(a, scope) for a in e.args]
        kwargs = {k.name: self._eval(k.value, scope) for k in e.keywords}
        self._check_call(e.func, func, args, kwargs)
        owner = getattr(func, "__self__", None)
        return self._check_made(func(*args, **kwargs), [owner, *args, *kwargs.values()])

    def _subscript(self, e: ir.Subscript, scope: Scope) -> Any:
        return self._item(self._eval(e.value, scope), self._index(e.index, scope))

    def _item(self, obj: Any, index: Any) -> Any:
        """`obj[index]`, refused before it runs when it would make a tensor beyond the
        element limit (an advanced index, a list of indices)."""
        if not self.engine.is_tensor(obj):
            return obj[index]
        self._limit("indexing", _returns(operator.getitem), [obj, index])
        return self._check_made(obj[index], (obj,))

    def _set_item(self, obj: Any, index: Any, value: Any) -> None:
        """`obj[index] = value`: refused as `obj[index]` would be (the value is broadcast
        to its shape)."""
        if self.engine.is_tensor(obj):
            self._limit("an indexed assignment", _returns(_indexed), [obj, index, value])
        obj[index] = value

    def _tuple(self, e: ir.Tuple, scope: Scope) -> Any:
        return tuple(self._eval(x, scope) for x in e.elts)

    def _list(self, e: ir.List, scope: Scope) -> Any:
        return [self._eval(x, scope) for x in e.elts]

    def _binop(self, e: ir.BinOp, scope: Scope) -> Any:
        return self._binary(BINARY[e.op], e.op, self._eval(e.left, scope),
                            self._eval(e.right, scope))

    def _unaryop(self, e: ir.UnaryOp, scope: Scope) -> Any:
        v = self._eval(e.operand, scope)
        if e.op == "not":
            return not self._truth(v)
        op = UNARY[e.op]
        if not self.engine.is_tensor(v):
            return op(v)
        self._limit(f"`{e.op}`", _returns(op), [v])
        return self._check_made(op(v), (v,))

    def _compare(self, e: ir.Compare, scope: Scope) -> Any:
        # Python's chaining: a < b < c is (a < b) and (b < c), b evaluated once.
        left = self._eval(e.left, scope)
        result: Any = True
        for i, (op, right_e) in enumerate(zip(e.ops, e.comparators, strict=True)):
            if i and not self._truth(result):
                return result
            right = self._eval(right_e, scope)
            compare = COMPARE[op]
            if op not in _IDENTITY and (self.engine.is_tensor(left) or
                                        self.engine.is_tensor(right)):
                self._limit(f"`{op}`", _returns(compare), [left, right])
                result = self._check_made(compare(left, right), (left, right))
            else:
                result = compare(left, right)
            left = right
        return result

    def _boolop(self, e: ir.BoolOp, scope: Scope) -> Any:
        value: Any = None
        for v_e in e.values:
            value = self._eval(v_e, scope)
            if self._truth(value) == (e.op == "or"):
                return value
        return value

    # ---- per-operation limits (conformance.limits) ------------------------------------
    def _binary(self, op: Callable[[Any, Any], Any], symbol: str, left: Any, right: Any
                ) -> Any:
        """`op(left, right)`, refused before it computes anything beyond a limit."""
        if symbol == "**":
            limits.check_pow(left, right)
        elif symbol == "*":
            limits.check_repeat(left, right)
        if self.engine.is_tensor(left) or self.engine.is_tensor(right):
            self._limit(f"`{symbol}`", _returns(op), [left, right])
            return self._check_made(op(left, right), (left, right))
        return limits.check_result(op(left, right))

    def _check_call(self, func_e: ir.Expr, func: Any, args: list[Any],
                    kwargs: dict[str, Any]) -> None:
        path = _api_path(func_e)
        if path is not None:
            count = factory_elements(path, args, kwargs)
            if count is not None:
                limits.check_elements(count, f"`{path}(...)`")
        owner = getattr(func, "__self__", None)
        is_method = owner is not None and self.engine.is_tensor(owner)
        self.effects.call(func_e, path, is_method, kwargs)
        operands = args
        if is_method:
            operands = [owner, *args]
        elif not path and self._is_module(func) and hasattr(func, "weight"):
            operands = [*args, func.weight, getattr(func, "bias", None)]

        def operation() -> Callable[..., Any] | None:
            """torch's callable for the call, given `operands` (predict.largest_made)."""
            torch = predict.torch_module()
            if is_method:
                return getattr(torch.Tensor, func_e.attr, None) if isinstance(
                    func_e, ir.Attribute) else None
            if path:
                return None if path in self.seeded else _resolve_on(torch, path)
            # nn.Linear, the table's one module class, is F.linear of its parameters
            return torch.nn.functional.linear if operands is not args else None

        self._limit("the call", operation, operands, kwargs)

    def _limit(self, what: str, operation: Callable[[], Callable[..., Any] | None],
               args: list[Any], kwargs: dict[str, Any] | None = None) -> None:
        """Refuse, before it runs, an operation (operator, index or call) on a tensor beyond
        the element limit, or one that would make such a tensor (conformance.predict):
        `operation()` is torch's callable for it, run on meta tensors standing for `args` and
        `kwargs` when their sizes allow a result beyond the limit (None: none to run)."""
        kwargs = kwargs or {}
        big, bound, tensors = predict.scan([*args, *kwargs.values()], self.engine.is_tensor)
        if big is not None:
            raise limits.LimitRefused(
                f"{what} on a tensor of shape {list(big)} ({math.prod(big)} elements); the "
                f"case language allows {limits.MAX_TENSOR_ELEMENTS} per tensor and operates "
                "on none beyond it (a larger view, such as an `expand`, can be made and "
                "observed)")
        if bound <= limits.MAX_TENSOR_ELEMENTS or not tensors:
            return
        torch_operation = operation()
        operands = [*args, *kwargs.values()]
        made = None if torch_operation is None else predict.largest_made(
            torch_operation, args, kwargs, self.engine.is_tensor)
        count, complete = (0, False) if made is None else (made[0], made[2])
        if not complete:  # torch needed data, or an operand has no meta counterpart
            count = max(count, predict.broadcast_elements(operands, self.engine.is_tensor))
        if count > limits.MAX_TENSOR_ELEMENTS:
            shapes = ", ".join(str(list(s)) for s in predict.shapes(
                operands, self.engine.is_tensor))
            limits.check_elements(count, f"{what} on tensors of shapes {shapes}")

    def _check_made(self, value: Any, operands: Sequence[Any] = ()) -> Any:
        """`value`, what an operation on `operands` returned. Its new tensors (not views, not
        an operand returned by an in-place op; in a tuple or list too; a module's parameters)
        count among the run's live tensors while they live (limits.MAX_LIVE_ELEMENTS), and
        one beyond the element limit, which nothing before the operation foretold, ends
        there."""
        items = value if isinstance(value, (tuple, list)) else (value,)
        for item in items:
            if self.engine.is_tensor(item):
                if not any(item is o for o in operands):
                    self._made(item)
            elif self._is_module(item):
                for p in (getattr(item, "weight", None), getattr(item, "bias", None)):
                    if p is not None:
                        self._made(p)
        return value

    def _made(self, t: Any) -> None:
        """Count a tensor an operation made among the run's live ones (weakly held: a freed
        one is taken off when the count would go beyond the limit)."""
        count = math.prod(t.shape)
        if count == 0 or t._is_view():
            return
        limits.check_elements(count, "a tensor an operation made")
        key = id(t)
        known = self._live.get(key)
        if known is not None:
            if known[0]() is t:  # returned again (a module's parameter)
                return
            self.live -= known[1]  # the id of a tensor freed since
        self._live[key] = (weakref.ref(t), count)
        self.live += count
        if self.live > limits.MAX_LIVE_ELEMENTS:
            self._forget_freed()
        if self.live > limits.MAX_LIVE_ELEMENTS:
            gc.collect()  # what only reference cycles keep is not the program's
            self._forget_freed()
        if self.live > limits.MAX_LIVE_ELEMENTS:
            raise limits.RunLimit(
                f"the program's tensors hold more than {limits.MAX_LIVE_ELEMENTS} elements "
                "at once (those its operations made and it keeps; views and in-place results "
                "are not new): keep fewer or smaller tensors", self.line)

    def _forget_freed(self) -> None:
        for key, (ref, count) in list(self._live.items()):
            if ref() is None:
                del self._live[key]
                self.live -= count

    def _index(self, e: ir.Expr, scope: Scope) -> Any:
        if isinstance(e, ir.Slice):
            return slice(*(None if p is None else self._eval(p, scope)
                           for p in (e.lower, e.upper, e.step)))
        if isinstance(e, ir.Tuple):
            return tuple(self._index(x, scope) for x in e.elts)
        return self._eval(e, scope)

    def _truth(self, value: Any) -> bool:
        return bool(value)

    def _path(self, path: str) -> Any:
        if path in api.NAMESPACES:
            return Namespace(path)
        if path in self.seeded:
            return self.seeded[path]
        if path == "torch.autograd.grad":
            return self._autograd_grad
        if path in api.FUNCTIONS:
            return self._resolve(path)
        raise CaseFailure(f"`{path}` is not in the supported API")  # checked at load too

    # ---- API the engine lacks (the verdict `unsupported`) ------------------------------
    def _resolve(self, path: str) -> Any:
        """The engine's object at an API path; a path it lacks is noted on the trace, and
        the statement fails with the engine's AttributeError."""
        try:
            return self.engine.resolve(path)
        except MissingAPI as missing:
            self._missing(missing.path)
            raise missing.error from None

    def _attribute(self, obj: Any, attr: str) -> Any:
        """`obj.attr` for an attribute of the API table; noted as missing when an engine
        value lacks it outright (not when its own code raised, nor on None or a number)."""
        try:
            return getattr(obj, attr)
        except AttributeError:
            if type(obj) not in _PLAIN and lacks(obj, attr):
                self._missing(f"{self._owner(obj, attr)}.{attr}")
            raise

    def _owner(self, obj: Any, attr: str) -> str:
        """What an attribute belongs to, named as the API table names it (Tensor, ctx,
        grad_fn, module, ...), so that one missing method counts once across ops."""
        if self.engine.is_tensor(obj):
            return "Tensor"
        if id(obj) in self.contexts:
            return "ctx"
        if isinstance(obj, type):
            return "Function"
        owners = [k for k, names in api.OBJECT_ATTRIBUTES.items()
                  if attr in names and not k.startswith("tensor")]
        return owners[0] if owners else type(obj).__name__

    def _missing(self, path: str) -> None:
        if path not in self.trace.missing_api:
            self.trace.missing_api.append(path)

    def _check_object_attribute(self, obj: Any, attr: str) -> None:
        # The loader checked the name; this guards values the loader could not see.
        if id(obj) in self.contexts:
            # a ctx is also the engine's backward node (torch's y.grad_fn is the ctx): its
            # table and grad_fn's, and the program's own state; never `apply` and the like
            if attr in self.ctx_names or attr in api.OBJECT_ATTRIBUTES["ctx"] or \
                    attr in api.OBJECT_ATTRIBUTES["grad_fn"]:
                return
            raise CaseFailure(f"ctx attribute `{attr}` is not in the supported API")
        if attr not in api.ATTRIBUTES or attr.startswith("__") or isinstance(
                obj, (Namespace, Expectation, Scope)):
            raise CaseFailure(f"attribute `{attr}` is not in the supported API")
        if isinstance(obj, type) and attr not in api.OBJECT_ATTRIBUTES["Function class"]:
            # a class's methods called unbound could write onto the class (isolation)
            raise CaseFailure(f"attribute `{attr}` of the class `{obj.__name__}` is not in "
                              "the supported API")

    def _check_attribute_store(self, obj: Any, attr: str) -> None:
        """Isolation: the program sets attributes only on values it made, never on a class,
        namespace or engine object whose change later runs in this process would see."""
        if id(obj) in self.contexts:
            if attr.startswith("_") or attr in api.CTX_ENGINE_MEMBERS or (
                    hasattr(obj, attr) and attr not in self.ctx_names):
                raise CaseFailure(f"cannot set ctx attribute `{attr}`: the name belongs to "
                                  "the engine's ctx; store Function state under another name")
            self.ctx_names.add(attr)
            return
        if attr not in api.SETTABLE:
            raise CaseFailure(f"cannot set attribute `{attr}`; settable: "
                              + ", ".join(sorted(api.SETTABLE)))
        if isinstance(obj, type) or not (self.engine.is_tensor(obj) or self._is_module(obj)):
            raise CaseFailure(f"cannot set `{attr}` on {_describe_object(obj)}: a program "
                              "sets attributes only on its own tensors, modules and ctx")

    def _check_item_store(self, obj: Any) -> None:
        if isinstance(obj, type) or not (self.engine.is_tensor(obj) or isinstance(obj, list)):
            raise CaseFailure(f"cannot assign items of {_describe_object(obj)}: a program "
                              "assigns items only of its own tensors and lists")

    def _is_module(self, obj: Any) -> bool:
        if type(obj) in _PLAIN:
            return False
        if self._module_class is None:
            try:
                self._module_class = self.engine.resolve("torch.nn.Module")
            except AttributeError:  # an engine without modules
                self._module_class = ()
        return isinstance(obj, self._module_class)

    # ---- program-defined callables ---------------------------------------------------
    def _lambda(self, e: ir.Lambda, scope: Scope) -> Callable[..., Any]:
        source = f"lambda@{e.line}:{e.col}"

        def call(*args: Any) -> Any:
            if len(args) != len(e.params):
                raise TypeError(f"{source} takes {len(e.params)} arguments, got {len(args)}")
            line = self.line
            self.effects.pure = False  # program code: anything may happen in it
            self._count(e.line)
            local = Scope(scope)
            local.vars.update(zip(e.params, args, strict=True))
            with self._nested_call(source):
                result = self._eval(e.body, local)
            self.line = line
            self._record_event(source, args, result)
            return result

        return call

    @contextlib.contextmanager
    def _nested_call(self, source: str) -> Iterator[None]:
        if self.depth >= limits.MAX_CALL_DEPTH:
            raise limits.LimitRefused(
                f"calls of the program's own functions nest more than {limits.MAX_CALL_DEPTH} "
                f"deep (at {source}): a lambda or method that calls itself without end?")
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def _function_class(self, stmt: ir.FunctionClass, scope: Scope) -> type:
        setup = any(m.name == ir.SETUP_CONTEXT for m in stmt.methods)

        def method(m: ir.Method) -> Callable[..., Any]:
            source = f"{stmt.name}.{m.name}"
            has_ctx = ir.method_has_ctx(m.name, setup)

            def call(*args: Any) -> Any:
                if len(args) != len(m.params):
                    raise TypeError(f"{source}() takes {len(m.params)} positional arguments "
                                    f"but {len(args)} were given")
                self.effects.pure = False  # program code: anything may happen in it
                local = Scope(scope)
                local.vars.update(zip(m.params, args, strict=True))
                if has_ctx:
                    self.contexts[id(args[0])] = args[0]
                with self._nested_call(source):
                    result = self._statements(m.body, local)
                self._record_event(source, args[1:] if has_ctx else args, result)
                return result

            # Decorators apply innermost first, as in Python; staticmethod is outermost.
            fn: Callable[..., Any] = call
            for decorator in reversed(m.decorators[1:]):
                fn = self._path(decorator)(fn)
            return staticmethod(fn)

        base = self._resolve("torch.autograd.Function")
        return type(stmt.name, (base,), {m.name: method(m) for m in stmt.methods})

    def _record_event(self, source: str, args: tuple[Any, ...], result: Any) -> None:
        received: dict[str, Any] = {}
        for i, a in enumerate(args):
            received.update(self.observe_value(self.engine, a, f"arg{i}"))
        self.events.append(Event(source, received,
                                 self.observe_value(self.engine, result, "return")))

    def _autograd_grad(self, *args: Any, **kwargs: Any) -> Any:
        """The engine's autograd.grad, noting which tensors it returned (engine-made)."""
        grads = self._resolve("torch.autograd.grad")(*args, **kwargs)
        for g in grads:
            if g is not None:
                self.engine_made.add(g)
        return grads

    # ---- harness builtins ------------------------------------------------------------
    def _expectation(self, kind: Any, *, warning: bool) -> Expectation:
        unknown = kinds.unknown_kind(kind, warning=warning)
        if unknown:
            problem, near = unknown
            valid = kinds.WARNING_KINDS if warning else kinds.ERROR_KINDS
            raise CaseFailure(problem + (f"; did you mean {', '.join(near)}?" if near else
                                         f"; valid kinds: {', '.join(valid)}"))
        return Expectation(warning, kind)

    def _assert_close(self, actual: Any, expected: Any, rtol: float | None = None,
                      atol: float | None = None) -> None:
        for v in (actual, expected):
            if self.engine.is_tensor(v):
                limits.check_elements(math.prod(v.shape), "assert_close's copy of a tensor")
        a, b = self._as_array(actual), self._as_array(expected)
        default_rtol, default_atol = tolerances(str(a.dtype))
        rtol = default_rtol if rtol is None else rtol
        atol = default_atol if atol is None else atol
        if a.shape != b.shape:
            raise CaseFailure(f"assert_close: shapes differ: {a.shape} vs {b.shape}")
        if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=False):
            raise CaseFailure(f"assert_close: {a.tolist()} is not close to {b.tolist()} "
                              f"(rtol={rtol}, atol={atol})")

    def _as_array(self, value: Any) -> np.ndarray:
        if self.engine.is_tensor(value):
            return tensor_values(value)
        return np.asarray(value)

    # ---- values every engine must see identically ------------------------------------
    def _factory(self, draw: Callable[[tuple[int, ...]], np.ndarray], size: tuple[Any, ...],
                 dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Any:
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        shape = tuple(int(n) for n in size)
        values = draw(shape)
        if dtype is None:
            dtype = self.engine.module.get_default_dtype()
        return self.engine.tensor(values, dtype=dtype, device=device,
                                  requires_grad=requires_grad)

    def _rand(self, *size: Any, **kwargs: Any) -> Any:
        return self._factory(self.rng.random, size, **kwargs)

    def _randn(self, *size: Any, **kwargs: Any) -> Any:
        return self._factory(self.rng.standard_normal, size, **kwargs)

    def _like(self, draw: Callable[[tuple[int, ...]], np.ndarray], t: Any,
              **kwargs: Any) -> Any:
        kwargs.setdefault("dtype", t.dtype)
        kwargs.setdefault("device", t.device)
        return self._factory(draw, tuple(t.shape), **kwargs)

    def _rand_like(self, t: Any, **kwargs: Any) -> Any:
        return self._like(self.rng.random, t, **kwargs)

    def _randn_like(self, t: Any, **kwargs: Any) -> Any:
        return self._like(self.rng.standard_normal, t, **kwargs)

    def _manual_seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(int(seed))

    def _linear(self, *args: Any, **kwargs: Any) -> Any:
        module = self._resolve("torch.nn.Linear")(*args, **kwargs)
        # Same distribution as torch's default init, drawn from the harness generator.
        bound = 1.0 / math.sqrt(module.in_features) if module.in_features else 0.0
        with self.engine.no_grad():
            for p in (module.weight, module.bias):
                if p is not None:
                    values = self.rng.uniform(-bound, bound, tuple(p.shape))
                    p.copy_(self.engine.tensor(values, dtype=p.dtype, device=p.device))
        return module


# How each expression node is evaluated (Interpreter._eval).
_EVALUATORS: dict[type, Callable[[Interpreter, Any, Scope], Any]] = {
    ir.Const: Interpreter._const, ir.Name: Interpreter._name,
    ir.Attribute: Interpreter._attribute_read, ir.Call: Interpreter._call,
    ir.Subscript: Interpreter._subscript, ir.Tuple: Interpreter._tuple,
    ir.List: Interpreter._list, ir.BinOp: Interpreter._binop,
    ir.UnaryOp: Interpreter._unaryop, ir.Compare: Interpreter._compare,
    ir.BoolOp: Interpreter._boolop, ir.Lambda: Interpreter._lambda,
    ir.Slice: Interpreter._index,
}


def _describe_object(obj: Any) -> str:
    if isinstance(obj, type):
        return f"the class `{obj.__name__}`"
    return f"a `{type(obj).__name__}` object"


def _api_path(e: ir.Expr) -> str | None:
    """The dotted API path an expression names (`torch.zeros`, `nn.Linear`), or None."""
    parts: list[str] = []
    while isinstance(e, ir.Attribute):
        parts.append(e.attr)
        e = e.value
    if not isinstance(e, ir.Name) or e.id not in api.ROOTS:
        return None
    return ".".join([api.ROOTS[e.id], *reversed(parts)])


_SIZED_FACTORIES = frozenset({"torch.zeros", "torch.ones", "torch.rand", "torch.randn",
                              "torch.full"})


def factory_elements(path: str, args: list[Any], kwargs: dict[str, Any]) -> int | None:
    """How many elements a tensor factory call would allocate, when its sizes say so."""
    try:
        if path in _SIZED_FACTORIES:
            size: Any = args[:1] if path == "torch.full" else args
            size = kwargs.get("size", size)
            if len(size) == 1 and isinstance(size[0], (tuple, list)):
                size = size[0]
            return math.prod(max(int(n), 0) for n in size)
        if path == "torch.arange":
            bounds = [float(a) for a in args[:3]]
            start, end, step = (0.0, bounds[0], 1.0) if len(bounds) == 1 else \
                (bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else 1.0)
            return max(math.ceil((end - start) / step), 0) if step else None
        if path == "torch.nn.Linear":
            return max(int(args[0]), 0) * max(int(args[1]), 0)
        if path == "torch.tensor":
            # nested sequences may repeat one list many times: `[[0.0] * n] * n` is small
            # in Python and n * n elements in a tensor; a range is not materialised either
            data, count = (args[0] if args else kwargs.get("data")), 1
            while isinstance(data, (list, tuple, range)):
                length = -((data.start - data.stop) // data.step) if isinstance(
                    data, range) else len(data)
                count *= max(length, 0)
                if length <= 0 or isinstance(data, range):
                    break
                data = data[0]
            return count
    except (TypeError, ValueError, IndexError, OverflowError):
        return None  # the engine reports malformed sizes itself
    return None


@contextlib.contextmanager
def warn_always(engine: Engine) -> Iterator[bool]:
    """The engine's `set_warn_always(True)` for one run, then its setting as it was; yields
    whether the engine has it. torch gives some warnings once per process (TORCH_WARN_ONCE:
    `x.T` on a tensor that is not 2-d, `float(x)` of an `x` that requires grad, backward with
    create_graph=True); under warn-always it gives them every time, so whether a statement
    warns does not depend on what ran before it in the process. A program cannot change the
    setting (`set_warn_always` is not in the API table)."""
    module = engine.module
    setter = getattr(module, "set_warn_always", None)
    getter = getattr(module, "is_warn_always_enabled", None)
    if setter is None or getter is None:
        yield False
        return
    before = bool(getter())
    setter(True)
    try:
        yield True
    finally:
        setter(before)


def _outcome(error: Exception) -> Outcome:
    """The recorded outcome of a statement that raised `error`."""
    if isinstance(error, limits.LimitRefused):
        return Outcome(LIMIT, text=str(error))
    if isinstance(error, CaseFailure):
        return Outcome(ASSERTION, text=str(error))
    text = kinds.normalise_text(str(error))
    name = kinds.exception_name(error)
    return Outcome(ERROR, kinds.classify(text, warning=False, exception=name), name, text)


def _returns(operation: Callable[..., Any]) -> Callable[[], Callable[..., Any]]:
    """An operation torch has as it is (an operator), for Interpreter._limit."""
    return lambda: operation


def _indexed(obj: Any, index: Any, value: Any) -> Any:
    """What `obj[index] = value` broadcasts the value to: `obj[index]`."""
    return obj[index]


def _resolve_on(module: Any, path: str) -> Any:
    """The object at an API path (`torch.nn.functional.linear`) on `module`, or None."""
    obj = module
    for part in path.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _warning_record(w: warnings.WarningMessage) -> WarningRecord:
    text = kinds.normalise_text(str(w.message))
    return WarningRecord(kinds.classify(text, warning=True), w.category.__name__, text)


# First-use warnings: an API that warns the first time a process uses it, whatever the
# program (a lazy import's DeprecationWarnings: issue 22 met them at the first `make_dual`),
# would make the first item using it in a process differ from the rest. Each program here
# runs once per engine and process, before its first run, and its trace is dropped.
WARM_UPS: tuple[str, ...] = (
    # torch's first make_dual imports torch._decomp, whose torch.jit.script calls warn
    "with fwAD.dual_level():\n    x = fwAD.make_dual(torch.ones(1), torch.ones(1))\n",
)
_warmed: dict[str, object] = {}  # engine name -> the module warmed up


def warm_up(engine: Engine) -> None:
    """Run WARM_UPS on `engine`, once per process (and again for another module of its
    name)."""
    if _warmed.get(engine.name) is engine.module:
        return
    _warmed[engine.name] = engine.module
    for source in WARM_UPS:
        Interpreter(engine, continue_on_error=True).run(language.parse(source))


def run_program(engine: Engine, program: ir.Program, *, seed: int = 0,
                dtype: str = "float32", device: str = "cpu",
                continue_on_error: bool = False, full_snapshots: bool | None = None) -> Trace:
    """The trace of `program` run on `engine` with the item's default dtype and device;
    `full_snapshots` chooses the reference observation (None: FULL_SNAPSHOTS)."""
    warm_up(engine)
    return Interpreter(engine, seed=seed, dtype=dtype, device=device,
                       continue_on_error=continue_on_error,
                       full_snapshots=full_snapshots).run(program)
