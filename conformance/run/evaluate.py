"""The interpreter's evaluation of statements: each statement of the IR executed on an
engine's values, Python's own semantics (unpacking, augmented assignment), `with
raises/warns`, `raise`, and the program's own callables (custom Functions, defs); an error's
or a warning's record in the trace. Expressions are evaluate_expressions'. Which statements
are steps of the trace is the interpreter's (interpreter.Evaluator._block).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from conformance.case import api, classify, kinds
from conformance.case import program as ir
from conformance.run import limits
from conformance.run.engine import Engine
from conformance.run.evaluate_expressions import INPLACE, ExpressionEvaluator
from conformance.run.observe import observe_value
from conformance.run.sandbox import CaseFailure, Expectation, Scope
from conformance.run.trace import (
    ASSERTION,
    ERROR,
    LIMIT,
    Event,
    Outcome,
    Step,
    WarningRecord,
)


class StepFailed(Exception):
    """A recorded step failed; unwinds to the nearest `with raises` or ends the run."""

    def __init__(self, step: Step, error_class: type | None = None) -> None:
        self.step = step
        self.error_class = error_class  # the class of the error that ended it, if one did


class _Return(BaseException):
    """`return` in a Function method: unwinds to the method's call through the `with` and
    `for` blocks of its body. A BaseException, so that no `except Exception` on the way (the
    harness's, or an engine's context manager's `__exit__`) takes it for an error."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _check_warnings(context: Expectation, seen: list[str], warn_always: bool) -> None:
    """`warns(kind)`: a warning of that kind was among those the block issued;
    `warns(kind, count=N)`: the block issued N warnings, all of that kind;
    `no_warnings()`: the block issued none. An engine run without warn-always gives a
    once-per-process kind only the first time in its process: there it is not checked, as
    the comparator does not compare it."""
    if context.kind in kinds.ONCE_PER_PROCESS and not warn_always:
        return
    if context.kind is None:
        if seen:
            raise CaseFailure(f"expected no warning; saw {seen}")
    elif context.count is not None and seen != [context.kind] * context.count:
        raise CaseFailure(f"expected exactly {context.count} warning(s), each of kind "
                          f"{context.kind!r}; saw {seen or 'none'}")
    elif context.kind not in seen:
        raise CaseFailure(f"expected a warning of kind {context.kind!r}; saw {seen or 'none'}")


class Evaluator(ExpressionEvaluator):
    """Statements and expressions evaluated; the steps they make are the interpreter's."""

    def __init__(self, engine: Engine, seed: int) -> None:
        super().__init__(engine, seed)
        self.globals = Scope()
        self.events: list[Event] = []  # calls of the program's own code in this step
        self.method_depth = 0  # Function method bodies running (nested: apply in forward)
        # The run's warnings as recorded (each step takes those its statement gave; see
        # Interpreter.run).
        self.warnings: list[warnings.WarningMessage] = []
        self.observe_value = engine.exempt(observe_value)
        # The exception classes `raise` takes (the builtins' and the program's own), and the
        # exceptions it raised (held: their identity tells them from an engine's error;
        # exceptions take no weak references).
        self.exception_types: set[type] = {self.builtins[n] for n in api.EXCEPTIONS}
        self.raised: list[Exception] = []

    def _block(self, body: tuple[ir.Stmt, ...], scope: Scope) -> None:
        """Run the statements of a block (Evaluator._block: each a step of the trace at
        the top level)."""
        raise NotImplementedError

    def _execute(self, stmt: ir.Stmt, scope: Scope) -> None:
        """Execute one statement (recording nothing: a step is the interpreter's)."""
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
        elif isinstance(stmt, ir.For) and stmt.items is not None:
            for value in [self._eval(a, scope) for a in stmt.items]:
                scope.vars[stmt.var] = value
                self._block(stmt.body, scope)
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
        elif isinstance(stmt, ir.Def):
            scope.vars[stmt.name] = self._def(stmt, scope)
        elif isinstance(stmt, ir.Raise):
            raise self._exception(self._eval(stmt.exc, scope))
        elif isinstance(stmt, ir.Delete):
            delattr(self._eval(stmt.obj, scope), stmt.attr)
        elif isinstance(stmt, ir.ExceptionClass):
            base = self._name(ir.Name(stmt.base), scope)
            if base not in self.exception_types:  # pragma: no cover - the parser checked
                raise CaseFailure(f"`{stmt.base}` is not an exception class of the program")
            cls = type(stmt.name, (base,), {})
            self.exception_types.add(cls)
            scope.vars[stmt.name] = cls
        else:  # pragma: no cover - the parser produces nothing else
            raise TypeError(f"unknown statement {stmt!r}")

    def _exception(self, value: Any) -> Exception:
        """What `raise value` raises: an instance of a builtin of api.EXCEPTIONS or of a class
        the program derived from one, never anything else (a BaseException such as SystemExit
        would end the run). Noted as the program's own, so that its outcome is the kind
        `case_raised` wherever it surfaces (statement_outcome)."""
        if isinstance(value, type) and value in self.exception_types:
            value = value()
        if type(value) not in self.exception_types:
            raise CaseFailure(f"`raise` takes an exception class of the case language or an "
                              f"instance of one; got a `{type(value).__name__}`")
        self.raised.append(value)
        return value

    def _outcome(self, error: Exception) -> Outcome:
        """The outcome of a statement that `error` ended. An exception the program raised is
        done propagating here: its traceback (the frames of the engine's backward and of the
        program's methods, with their tensors) is dropped, so that holding the exception
        for its identity keeps alive nothing the program let go."""
        case_raised = any(error is r for r in self.raised)
        if case_raised:
            error.__traceback__ = error.__context__ = None
        return statement_outcome(error, case_raised=case_raised)

    def _run_method_body(self, body: tuple[ir.Stmt, ...], scope: Scope) -> Any:
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
            with context as value:
                if stmt.name is not None:
                    scope.vars[stmt.name] = value
                self._block(stmt.body, scope)
            return
        if stmt.name is not None:
            # the caught exception (its traceback, its frames) is not the program's to read
            raise CaseFailure("`with raises/warns/no_warnings(...)` takes no `as`")
        if self.method_depth:
            self._expect_in_method(context, stmt.body, scope)
            return
        first = len(self.trace.steps)
        if context.warning:
            self._block(stmt.body, scope)
            _check_warnings(context, [w.kind for s in self.trace.steps[first:]
                                      for w in s.warnings], self.trace.warn_always)
            return
        try:
            self._block(stmt.body, scope)
        except StepFailed as failed:
            got = failed.step.outcome
            if got.status == ERROR and got.kind == context.kind and \
                    not context.type_differs(failed.error_class):
                return
            if got.status == LIMIT:  # a limit is the case's problem, not an expected error
                raise
            raise CaseFailure(f"expected an error of {context.describe()}; got "
                              f"{got.describe()}") from None
        raise CaseFailure(f"expected an error of {context.describe()}; the block ran "
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
            got = self._outcome(e)
            if got.kind != context.kind or context.type_differs(type(e)):
                raise CaseFailure(f"expected an error of {context.describe()}; got "
                                  f"{got.describe()}") from None
            return
        if context.warning:
            _check_warnings(context, [warning_record(w).kind for w in self.warnings[first:]],
                            self.trace.warn_always)
            return
        raise CaseFailure(f"expected an error of {context.describe()}; the block ran "
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
            self._check_item_store(obj, _is_metadata(target.value))
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
            if type(obj) is tuple:
                # Python runs the in-place op on the item first, then refuses the store (an
                # in-place add on an output of unbind raises torch's error before that)
                index = self._index(target.index, scope)
                self._binary(op, stmt.op, self._item(obj, index), value)
                raise TypeError("'tuple' object does not support item assignment")
            self._check_item_store(obj, _is_metadata(target.value))
            index = self._index(target.index, scope)
            self._set_item(obj, index, self._binary(op, stmt.op, self._item(obj, index), value))
        else:  # pragma: no cover
            raise TypeError(f"cannot augment {target!r}")

    # ---- program-defined callables (the interpreter's: they run the program's statements and
    # record events in its step) -------------------------------------------------------------
    def _function_class(self, stmt: ir.FunctionClass, scope: Scope) -> type:
        raise NotImplementedError

    def _def(self, stmt: ir.Def, scope: Scope) -> Callable[..., Any]:
        raise NotImplementedError


def statement_outcome(error: Exception, *, case_raised: bool = False) -> Outcome:
    """The recorded outcome of a statement that raised `error` (`case_raised`: the very
    exception a `raise` of the program raised, whose kind is `case_raised` whatever its
    text says, so that a case cannot pass its own error off as one of torch's kinds)."""
    if isinstance(error, limits.LimitRefused):
        return Outcome(LIMIT, text=str(error))
    if isinstance(error, CaseFailure):
        return Outcome(ASSERTION, text=str(error))
    text = classify.normalise_text(classify.text_of(error))
    name = classify.exception_name(error)
    kind = kinds.CASE_RAISED if case_raised else \
        classify.classify(text, warning=False, exception=name)
    return Outcome(ERROR, kind, name, classify.bounded(text))


def warning_record(w: warnings.WarningMessage) -> WarningRecord:
    text = classify.normalise_text(classify.text_of(w.message))
    return WarningRecord(classify.classify(text, warning=True), w.category.__name__,
                         classify.bounded(text))


def _is_metadata(e: ir.Expr) -> bool:
    """`<value>.metadata`: the items of a node's metadata dict may be stored (the loader's
    language._node_metadata)."""
    return isinstance(e, ir.Attribute) and e.attr == "metadata"
