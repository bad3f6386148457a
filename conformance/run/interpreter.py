"""The one interpreter: runs a Program against an engine and records its Trace.

Program text is never handed to Python's eval/exec/compile: each IR node is interpreted
(`evaluate`), and names and attributes reach an engine only through the API table (`sandbox`).
The interpreter is built in layers, each a module: the API sandbox (`sandbox`), the guards and
budgets (`operation_limits`), the harness's builtins and seeded values (`harness_builtins`),
the evaluation of expressions (`evaluate_expressions`) and of statements (`evaluate`); here,
on top, the run and its steps: each top-level statement executed, its warnings and outcome
recorded, and the names in scope observed after it (`incremental`: which snapshots a step
may reuse).
"""

from __future__ import annotations

import contextlib
import inspect
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

from conformance.case import language
from conformance.case import program as ir
from conformance.run import changes, isolation, limits
from conformance.run.engine import Engine
from conformance.run.evaluate import Evaluator, StepFailed, warning_record
from conformance.run.evaluate_expressions import BINARY, COMPARE, INPLACE, UNARY
from conformance.run.incremental import IncrementalObserver
from conformance.run.observe import observe
from conformance.run.sandbox import CaseFailure, Scope
from conformance.run.trace import OK, Event, Outcome, Step, Trace

# What other modules take from here (the interpreter's public names, wherever they live).
__all__ = ["BINARY", "COMPARE", "FULL_SNAPSHOTS", "INPLACE", "UNARY", "WARM_UPS", "CaseFailure",
           "Interpreter", "run_program", "warm_up", "warn_always"]

# Most statements' outcome (immutable: one object serves every step)
_OK_OUTCOME = Outcome(OK)
# Statements whose inner statements are steps of their own (they enter an engine's
# statement context themselves).
_COMPOUND = (ir.With, ir.For, ir.FunctionClass)
# The reference observation: every live name snapshot after every statement. Off, a step
# reuses the snapshots of the names its statement cannot have changed (conformance.changes);
# tests/conformance/test_incremental_snapshots.py holds the two to identical traces.
FULL_SNAPSHOTS = False


def _record_warnings() -> None:
    """Record every warning but ResourceWarning: the garbage collector gives those for an
    unclosed file or pipe of anything in the process (an earlier item, a test), at whatever
    statement a collection happens to run, so they say nothing of the statement and would
    make a verdict depend on what ran before (a CI run: an anomaly-mode item diverged on two
    ResourceWarnings its twin did not get)."""
    warnings.simplefilter("always")
    warnings.simplefilter("ignore", ResourceWarning)


class Interpreter(Evaluator):
    """One run of a program on an engine (an instance a run): its steps, recorded."""

    def __init__(self, engine: Engine, *, seed: int = 0, dtype: str = "float32",
                 device: str = "cpu", continue_on_error: bool = False,
                 full_snapshots: bool | None = None, observe_names: bool = True) -> None:
        super().__init__(engine, seed)
        # Generated programs run on past a failing statement (the failure is recorded), so
        # that what follows an error is explored too; case programs stop, as Python would.
        self.continue_on_error = continue_on_error
        self.dtype = dtype
        self.device = device
        # Protocol v2 (conformance/engines): the engine's statement context, and the
        # harness's own code that runs inside an engine (observation, hook events) exempt
        # from its compilers.
        self.statement_context = engine.statement_context
        # The reference observation snapshots every live name after every statement; the
        # default reuses the snapshots of names a statement cannot have changed (changes.py).
        self.observer = IncrementalObserver(
            engine, engine.exempt(observe), self.engine_made,
            FULL_SNAPSHOTS if full_snapshots is None else full_snapshots)
        # Off: no name is snapshot after a step (each step's `names` empty), for a reader
        # of outcomes alone (tests/conformance/test_forward_programs.py's hit rates): the
        # snapshots were about three quarters of torch's run of a forward-mode program.
        self.observe_names = observe_names
        # The warning filters that record every warning (see run).
        self.filters: list[Any] = []

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
            _record_warnings()
            self.warnings, self.filters = caught, list(warnings.filters)
            try:
                self._block(program.body, self.globals)
            except StepFailed as failed:
                self.trace.failure = failed.step
            except limits.RunLimit as stopped:
                if stopped.line is None:  # the timer's signal cannot know the line
                    stopped.line = self.line
                raise
        self.trace.state_changes = changes
        return self.trace

    def _block(self, body: tuple[ir.Stmt, ...], scope: Scope) -> None:
        if self.method_depth:
            # inside a Function method (running inside an engine): its statements, those of
            # its `with` and `for` blocks included, are not steps
            for stmt in body:
                self._count(stmt.line)
                self._execute(stmt, scope)
        else:
            for stmt in body:
                self._step(stmt, scope)

    def _step(self, stmt: ir.Stmt, scope: Scope) -> None:
        """Execute one statement and record it as a step."""
        self._count(stmt.line)
        compound = isinstance(stmt, _COMPOUND)
        # a quiet `with` (a grad mode, a dual level: changes.quiet_with) changes nothing a
        # snapshot records on entry or exit
        quiet = compound and changes.quiet_with(stmt)
        if compound and not quiet:
            # entering it (a context manager, saved-tensor hooks) is not a step of its own:
            # its first inner step rechecks every name (observe.unchanged)
            self.observer.unknown_changes = True
        effects = self.effects = changes.Effects()
        caught = self.warnings
        first = len(caught)  # the warnings from here on are this step's
        error_class: type | None = None   # what `raises(kind, type=...)` checks
        try:
            if self.statement_context is None or isinstance(stmt, _COMPOUND):
                self._execute(stmt, scope)
            else:
                with self.statement_context():
                    self._execute(stmt, scope)
            outcome = _OK_OUTCOME
        except StepFailed:
            # an inner step failed: its warnings went with it, and so do this one's (no
            # step records them), as they would leaving a context of this step's own
            del caught[first:]
            raise
        except MemoryError:  # the machine's limit, not a behaviour: the item is an error
            raise
        except Exception as e:  # an engine error is a recorded outcome, not a crash
            outcome = self._outcome(e)
            error_class = type(e)
        records = [warning_record(w) for w in caught[first:]]
        names = self.observer.names(
            {n: v for n, v in scope.vars.items() if not isinstance(v, type)}, stmt,
            may_reuse=(quiet or (not compound and effects.pure)) and not self.events
        ) if self.observe_names else {}
        del caught[first:]  # the observation's warnings
        if warnings.filters != self.filters:
            # engine code changed the filters: set back, as leaving a step's own context
            # would, so that no later step sees the change
            cast(list[Any], warnings.filters)[:] = self.filters
            _record_warnings()  # (already first: only tells `warnings`)
        step = Step(stmt.line, outcome, records, self.events, names)
        self.events = []
        self.observer.charge(step, len(self.trace.steps))
        self.trace.steps.append(step)
        if outcome.status != OK:
            if self.continue_on_error:
                self.trace.failure = self.trace.failure or step
            else:
                raise StepFailed(step, error_class)

    # ---- program-defined callables ---------------------------------------------------
    # Here, not in evaluate: they run the program's statements (as method bodies) and record
    # events in the running step; and torch's error texts quote their names
    # (`Interpreter._lambda.<locals>.call`), which recordings compare.
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

    def _def(self, stmt: ir.Def, scope: Scope) -> Callable[..., Any]:
        return self._program_function(stmt.name, f"{stmt.name}@{stmt.line}", stmt.params,
                                      stmt.body, scope, has_ctx=False,
                                      defaults=tuple(d.value for d in stmt.defaults),
                                      star=(stmt.vararg, stmt.kwarg))

    def _program_function(self, name: str, source: str, params: Sequence[str],
                          body: tuple[ir.Stmt, ...], scope: Scope, has_ctx: bool,
                          defaults: tuple[Any, ...] = (),
                          star: tuple[str | None, str | None] = (None, None),
                          receiver: bool = False) -> Callable[..., Any]:
        """A function of the program's own code (a top-level def, a Function's method): its
        body run in a scope of its own, its call recorded as an event named `source` (with
        `has_ctx`, the first argument is the ctx, registered and not recorded). `defaults`
        are the values of its last parameters, as Python's; its __signature__ shows them,
        since torch's Function.apply binds a forward's defaults through inspect.signature.
        `star` names a `*args` and a `**kwargs` parameter (a top-level def's), or None.
        With `receiver` (a classmethod), the first argument is the class: bound to the first
        parameter, not recorded, and ctx (with `has_ctx`) comes after it."""
        required = len(params) - len(defaults)
        vararg, kwarg = star

        def call(*args: Any, **kwargs: Any) -> Any:
            if kwargs.keys() & set(params):   # keywords naming parameters, bound as Python does
                args, kwargs = _bind_keywords(name, params, defaults, args, kwargs)
            if kwargs and kwarg is None:
                raise TypeError(f"{name}() got an unexpected keyword argument "
                                f"'{next(iter(kwargs))}'")
            if not required <= len(args) <= (len(args) if vararg else len(params)):
                raise TypeError(f"{name}() takes {len(params)} positional arguments "
                                f"but {len(args)} were given")
            extra, args = args[len(params):], args[:len(params)]
            args = args + defaults[len(args) - required:]
            self.effects.pure = False  # program code: anything may happen in it
            local = Scope(scope)
            local.vars.update(zip(params, args, strict=True))
            if vararg is not None:
                local.vars[vararg] = extra
            if kwarg is not None:
                local.vars[kwarg] = kwargs
            args = args + extra + tuple(kwargs.values())   # all recorded in its event
            if receiver:
                args = args[1:]
            if has_ctx:
                self.contexts.add(args[0])
            with self._nested_call(source):
                result = self._run_method_body(body, local)
            self._record_event(source, args[1:] if has_ctx else args, result)
            return result

        if defaults:
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
            call.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
                inspect.Parameter(p, kind, default=defaults[i - required] if i >= required
                                  else inspect.Parameter.empty)
                for i, p in enumerate(params)])
        return call

    def _function_class(self, stmt: ir.FunctionClass, scope: Scope) -> type:
        setup = any(m.name == ir.SETUP_CONTEXT for m in stmt.methods)

        def method(m: ir.Method) -> Any:
            source = f"{stmt.name}.{m.name}"
            defaults = tuple(d.value for d in m.defaults)
            is_classmethod = m.decorators == ("classmethod",)
            call = self._program_function(source, source, m.params, m.body, scope,
                                          ir.method_has_ctx(m.name, setup), defaults,
                                          receiver=is_classmethod)
            if is_classmethod:
                return classmethod(call)
            if not m.decorators:
                return call   # torch's legacy style: an instance method, self in ctx's place
            # Decorators apply innermost first, as in Python; staticmethod is outermost.
            fn: Callable[..., Any] = call
            for decorator in reversed(m.decorators[1:]):
                fn = self._path(decorator)(fn)
            return staticmethod(fn)

        base = self._resolve("torch.autograd.Function")
        return type(stmt.name, (base,), {**dict(stmt.attributes),
                                         **{m.name: method(m) for m in stmt.methods}})

    def _record_event(self, source: str, args: tuple[Any, ...], result: Any) -> None:
        received: dict[str, Any] = {}
        with self.engine.outside_dispatch_modes():
            for i, a in enumerate(args):
                received.update(self.observe_value(self.engine, a, f"arg{i}"))
            returned = self.observe_value(self.engine, result, "return")
        self.events.append(Event(source, received, returned))


def _bind_keywords(name: str, params: Sequence[str], defaults: tuple[Any, ...],
                   args: tuple[Any, ...], kwargs: dict[str, Any]
                   ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Python's binding of keyword arguments that name parameters of a program's function
    (torch's checkpoint passes its own keyword arguments on: `checkpoint(fn, data=x)`): they
    fill the parameters after the positional ones, up to the last one given; a parameter
    left between them takes its default. Returns the positional arguments so made and the
    keywords that name no parameter (for a `**kwargs`, or refused by the caller)."""
    rest = {k: v for k, v in kwargs.items() if k not in params}
    named = {k: v for k, v in kwargs.items() if k in params}
    for k in named:
        if params.index(k) < len(args):
            raise TypeError(f"{name}() got multiple values for argument '{k}'")
    last = max(params.index(k) for k in named)
    required = len(params) - len(defaults)
    filled = list(args)
    for i in range(len(args), last + 1):
        if params[i] in named:
            filled.append(named[params[i]])
        elif i < required:
            raise TypeError(f"{name}() missing 1 required positional argument: '{params[i]}'")
        else:
            filled.append(defaults[i - required])
    return tuple(filled), rest


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


# First-use warnings: an API that warns the first time a process uses it, whatever the
# program (a lazy import's DeprecationWarnings: issue 22 met them at the first `make_dual`),
# would make the first item using it in a process differ from the rest. Each program here
# runs once per engine and process, before its first run, and its trace is dropped.
WARM_UPS: tuple[str, ...] = (
    # torch's first make_dual imports torch._decomp, whose torch.jit.script calls warn
    "with fwAD.dual_level():\n    x = fwAD.make_dual(torch.ones(1), torch.ones(1))\n",
    # an op on a tensor requiring grad, and its backward: the torch.compile engine compiles
    # both, and inductor's first compile imports modules that warn (a FutureWarning that
    # `torch._prims_common.check` is deprecated)
    "x = torch.ones(1, requires_grad=True)\n(x * 2).sum().backward()\n",
    # TypedStorage's deprecation warning: given the first time a process uses a storage
    # (torch/storage.py _warn_typed_storage_removal; set_warn_always leaves it alone)
    "n = len(torch.ones(1).storage())\n",
    # torch's first checkpoint imports torch._dynamo (torch/_compile.py), and the import's
    # frames hold the call's arguments in a reference cycle: the first graph a process
    # checkpoints would live until the cycle collector runs, not die with its output
    "x = torch.ones(1, requires_grad=True)\n"
    "y = torch.utils.checkpoint.checkpoint(lambda t: t * 2, x, use_reentrant=False)\n",
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
                continue_on_error: bool = False, full_snapshots: bool | None = None,
                observe_names: bool = True) -> Trace:
    """The trace of `program` run on `engine` with the item's default dtype and device;
    `full_snapshots` chooses the reference observation (None: FULL_SNAPSHOTS); without
    `observe_names` the steps record outcomes, warnings and events but no names."""
    warm_up(engine)
    return Interpreter(engine, seed=seed, dtype=dtype, device=device,
                       continue_on_error=continue_on_error, full_snapshots=full_snapshots,
                       observe_names=observe_names).run(program)
