"""Hypothesis strategies that build random autograd Programs.

They build the same IR the YAML cases parse into (`conformance.program`), from small named
pieces, each a function of a `Dice` (the action's random choices), the generator's symbolic
`State` (which names exist, their shapes, dtypes, whether they require grad, whether their
values are positive) and the `GenSettings` (sizes, dtypes, devices), called by the one
composite strategy `programs()`. The pieces are rows of one table, `ACTIONS`.

The ops come from the engine's op registry (`reference_engine.registry`), not from a list
of their own: every differentiable row is generated in its function, method and in-place
forms (and as an operator where it has one), or is named in `registry.NOT_GENERATED` with
the reason. How a row is called follows from its sample: one input and number arguments is
a pointwise op on any tensor; two inputs and no arguments broadcast; a reduction that takes
a dim is drawn with dim/keepdim; any other row is called on inputs of its sample's shapes
with its sample's arguments (dims, index tensors), its result shapes read once from torch.

Not generated on purpose: an op mixing float32 and float64 operands (every input of an op
takes its first input's dtype). A float32 result promoted into a float64 one is compared at
float64's tolerance, and float32 rounding that depends on a BLAS kernel's summation order
(addmm, mm) is not the reference engine's to reproduce (found by the generator: a float32
addmm one ulp off, seen through `torch.sub(addmm(...), float64)`). Leaves of both dtypes
still meet in a program's final loss.

The mix is steered, by construction, towards the behaviour that matters: the error paths
(backward twice through freed buffers, modified saved tensors, in-place on leaves and their
views, multi-output views, no_grad) are reached by motifs that set them up on purpose, and
most programs end in a backward or grad call.

Drawing: hypothesis' per-draw bookkeeping dominated the cost of a program, so each action
is ONE integer draw, the seed of the action's `Dice`; its sub-choices are decoded from it.
The shrinker still deletes whole actions (the "another action" draw and the seed together).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from conformance import operators
from conformance import program as ir
from reference_engine import registry

Shape = tuple[int, ...]


@dataclass(frozen=True)
class GenSettings:
    max_rank: int = 3
    max_side: int = 3  # every dimension is 1..max_side
    max_actions: int = 10  # actions after the leaves; a program stays around 12 statements
    devices: tuple[str, ...] = ("cpu",)
    dtypes: tuple[str, ...] = ("float32", "float64")


DEFAULT = GenSettings()
T = TypeVar("T")
# What a factory call without dtype= / device= makes (the run's default dtype is float32).
DEFAULT_DTYPE, DEFAULT_DEVICE = "float32", "cpu"

# Leaf values: negatives, zeros of both signs, and a spread of magnitudes.
VALUES = (-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 3.0)
POSITIVE_VALUES = (0.5, 0.75, 1.0, 1.5, 2.0)


@dataclass(frozen=True)
class Var:
    name: str
    shape: Shape
    requires_grad: bool
    leaf: bool
    positive: bool = False  # all values > 0: log, sqrt and division by it are safe
    dtype: str = DEFAULT_DTYPE
    device: str = DEFAULT_DEVICE
    stale: bool = False  # made from a graph a backward or grad call may have freed


@dataclass(frozen=True)
class State:
    vars: tuple[Var, ...] = ()
    functions: frozenset[str] = frozenset()  # custom Function classes defined so far
    counter: int = 0

    def fresh(self, prefix: str) -> tuple[str, State]:
        return f"{prefix}{self.counter}", replace(self, counter=self.counter + 1)

    def bind(self, var: Var) -> State:
        others = tuple(v for v in self.vars if v.name != var.name)
        return replace(self, vars=(*others, var))

    def differentiable(self) -> tuple[Var, ...]:
        return tuple(v for v in self.vars if v.requires_grad)

    def leaves(self) -> tuple[Var, ...]:
        return tuple(v for v in self.vars if v.leaf and v.requires_grad)

    def backwarded(self) -> State:
        """After a backward or grad call: every result so far may hang from a freed graph."""
        return replace(self, vars=tuple(v if v.leaf else replace(v, stale=True)
                                        for v in self.vars))


@dataclass(frozen=True)
class Emit:
    """What a piece adds: statements, and the state after them."""

    stmts: tuple[ir.Stmt, ...]
    state: State


class Dice:
    """An action's random choices, decoded from the one integer hypothesis drew for it.
    A seeded PRNG rather than digits of the integer: hypothesis draws large integers mostly
    small, which would leave every later digit 0."""

    def __init__(self, seed: int, draw: st.DrawFn | None = None, salt: int = 0) -> None:
        self._rng = random.Random(seed)
        self._draw = draw
        self._salt = salt

    def choose(self, options: Sequence[T], label: str) -> T:
        """One of `options` by a hypothesis draw of its own, for the few choices that decide
        what a part IS (which action, which op): hypothesis repeats a drawn seed often, and
        a choice among many options made from seeds alone came out lumpy (some ops in 13 %
        of programs, others in none)."""
        if self._draw is None:
            return self.pick(options)
        # hypothesis favours some values of any one draw and copies runs of draws within
        # and across examples: the index is offset by the seed's own choice
        n = len(options)
        drawn = self._draw(ints(0, n - 1), label=label)
        return options[(drawn + self.below(n) + self._salt) % n]

    def below(self, n: int) -> int:
        return self._rng.randrange(n) if n > 1 else 0

    def chance(self, k: int, n: int) -> bool:
        """True with probability k/n."""
        return self._rng.randrange(n) < k

    def pick(self, options: Sequence[T]) -> T:
        return options[self.below(len(options))]

    def recent(self, options: Sequence[T]) -> T:
        """One of `options`, the last (the newest name) half of the time: ops chain into
        longer graphs, which a final backward then runs through."""
        if self._rng.randrange(2):
            return options[-1]
        return self.pick(options)


# ---- IR shorthands -----------------------------------------------------------------------

def name(n: str) -> ir.Name:
    return ir.Name(n)


def const(v: Any) -> ir.Const:
    return ir.Const(v)


def attr(value: ir.Expr, a: str) -> ir.Attribute:
    return ir.Attribute(value, a)


def call(func: ir.Expr, *args: ir.Expr, **kwargs: ir.Expr) -> ir.Call:
    return ir.Call(func, tuple(args), tuple(ir.Keyword(k, v) for k, v in kwargs.items()))


def method(obj: ir.Expr, m: str, *args: ir.Expr, **kwargs: ir.Expr) -> ir.Call:
    return call(attr(obj, m), *args, **kwargs)


def torch_fn(path: str) -> ir.Expr:
    expr: ir.Expr = name("torch")
    for part in path.split("."):
        expr = attr(expr, part)
    return expr


def assign(target: str, value: ir.Expr) -> ir.Assign:
    return ir.Assign(name(target), value)


def expr_stmt(value: ir.Expr) -> ir.ExprStmt:
    return ir.ExprStmt(value)


def shape_tuple(shape: Shape) -> ir.Tuple:
    return ir.Tuple(tuple(const(n) for n in shape))


def nested(values: Sequence[Any], shape: Shape) -> ir.Expr:
    if not shape:
        return const(values[0])
    step = len(values) // shape[0]
    return ir.List(tuple(nested(values[i * step:(i + 1) * step], shape[1:])
                         for i in range(shape[0])))


def numel(shape: Shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


@cache
def ints(low: int, high: int) -> st.SearchStrategy[int]:
    """st.integers(low, high), built once per bounds: hypothesis' own strategy cache costs
    more per lookup than the draws it serves here."""
    return st.integers(low, high)


SEED = ints(0, 2**32 - 1)


def _fits(shape: Shape, settings: GenSettings) -> bool:
    return len(shape) <= settings.max_rank and all(1 <= s <= settings.max_side for s in shape)


def _promote(*vs: Var) -> str:
    return "float64" if any(v.dtype == "float64" for v in vs) else vs[0].dtype


# ---- leaves ------------------------------------------------------------------------------

def draw_shape(dice: Dice, settings: GenSettings, min_rank: int = 0) -> Shape:
    rank = min_rank + dice.below(max(settings.max_rank - min_rank, 0) + 1)
    return tuple(1 + dice.below(settings.max_side) for _ in range(rank))


def factory_kwargs(dtype: str, device: str, requires_grad: bool) -> dict[str, ir.Expr]:
    kwargs: dict[str, ir.Expr] = {}
    if dtype != DEFAULT_DTYPE:
        kwargs["dtype"] = torch_fn(dtype)
    if device != DEFAULT_DEVICE:
        kwargs["device"] = const(device)
    if requires_grad:
        kwargs["requires_grad"] = const(True)
    return kwargs


def _leaf(dice: Dice, state: State, settings: GenSettings, shape: Shape | None = None,
          requires_grad: bool | None = None, positive: bool | None = None,
          dtype: str | None = None) -> Emit:
    """A new leaf: random values, or literal ones including signed zeros; `positive` forces
    (True) or forbids (False) values > 0."""
    if shape is None:
        shape = draw_shape(dice, settings)
    if requires_grad is None:
        requires_grad = dice.chance(4, 5)
    dtype = dtype if dtype in settings.dtypes else dice.pick(settings.dtypes)
    device = dice.pick(settings.devices)
    kwargs = factory_kwargs(dtype, device, requires_grad)
    kind = "positive" if positive else dice.pick(("randn", "literal", "positive")[
        :2 if positive is False else 3])
    if kind == "randn":
        value: ir.Expr = call(torch_fn("randn"), *(const(n) for n in shape), **kwargs)
    else:
        pool = POSITIVE_VALUES if kind == "positive" else VALUES
        values = [dice.pick(pool) for _ in range(numel(shape))]
        value = call(torch_fn("tensor"), nested(values, shape), **kwargs)
    n, state = state.fresh("x")
    var = Var(n, shape, requires_grad, True, kind == "positive", dtype, device)
    return Emit((assign(n, value),), state.bind(var))


def _input(dice: Dice, state: State, settings: GenSettings, shape: Shape | None,
           positive: bool, dtype: str | None = None) -> tuple[Var, Emit]:
    """An existing name fit to be an op's input (of `shape` and `dtype`, positive if the
    op's domain says so), or else a new leaf; the Emit holds the leaf's statement, if any."""
    fit = [v for v in state.vars if (shape is None or v.shape == shape)
           and (v.positive or not positive) and (dtype is None or v.dtype == dtype)]
    # mostly a name that requires grad (or a new leaf that does): ops chain into graphs a
    # backward goes through
    graph = [v for v in fit if v.requires_grad and not v.stale]
    if graph and dice.chance(3, 4):
        return dice.recent(graph), Emit((), state)
    if fit and dice.chance(1, 3):
        return dice.recent(fit), Emit((), state)
    emit = _leaf(dice, state, settings, shape=shape, positive=True if positive else None,
                 dtype=dtype, requires_grad=dice.chance(4, 5))
    return emit.state.vars[-1], emit


def _result(state: State, out_shape: Shape, inputs: Sequence[Var], positive: bool = False,
            prefix: str = "y") -> tuple[str, State, Var]:
    n, state = state.fresh(prefix)
    var = Var(n, out_shape, any(v.requires_grad for v in inputs), False, positive,
              _promote(*inputs), inputs[0].device, any(v.stale for v in inputs))
    return n, state, var


# ---- the op table, derived from the registry ---------------------------------------------

POINTWISE, BROADCAST, REDUCTION, SAMPLE = "pointwise", "broadcast", "reduction", "sample"
# The operators that are an op of the registry (`x + y` is `add`): from the operator table,
# by the name of the Python function each evaluates with.
_OPERATOR_NAME = {"truediv": "div"}
OPERATOR_OF: dict[str, str] = {
    _OPERATOR_NAME.get(o.function.__name__, o.function.__name__): o.symbol
    for o in operators.BINARY
    if _OPERATOR_NAME.get(o.function.__name__, o.function.__name__) in registry.FUNCTIONS}
OPERATOR_OP: dict[str, str] = {symbol: op for op, symbol in OPERATOR_OF.items()}
AUGMENTED = frozenset(o.symbol for o in operators.AUGMENTED)


@dataclass(frozen=True)
class GenOp:
    """A registry row as the generator calls it."""

    row: registry.OpRow
    form: str                         # POINTWISE, BROADCAST, REDUCTION or SAMPLE
    outputs: tuple[Shape, ...]        # the sample call's result shapes (several: a tuple)
    dim_result_tuple: bool = False    # REDUCTION: with a dim it returns (values, indices)

    @property
    def name(self) -> str:
        return self.row.name

    @property
    def sample(self) -> registry.Sample:
        assert self.row.sample is not None
        return self.row.sample

    @property
    def weight(self) -> int:
        """How often it is drawn, relative to a pointwise op: see weighted_ops."""
        if self.row.name.endswith("_"):
            return 10  # in-place only: its target must be a clone in a completed graph
        if self.form == SAMPLE or self.sample.positive:
            return 8
        return 3 if self.row.inplace is not None else 1  # a third form to spread over

    @property
    def forms(self) -> tuple[str, ...]:
        """How it is called: `function` (torch.op), `method` (x.op), `inplace` (x.op_, or
        the row itself when its name is an in-place method), `operator` (x + y)."""
        if self.row.name.endswith("_"):
            return ("inplace",)
        found = [f for f, ok in (("function", self.row.function), ("method", self.row.method),
                                 ("inplace", self.row.inplace is not None),
                                 ("operator", self.row.name in OPERATOR_OF)) if ok]
        return tuple(found)

    def fits(self, settings: GenSettings) -> bool:
        """A row called on its sample's shapes can be drawn only where they are allowed."""
        if self.form in (POINTWISE, BROADCAST):
            return True
        shapes = self.sample.shapes + tuple(_const_shape(a.values) for a in self.sample.args
                                            if isinstance(a, registry.Const))
        if self.form == REDUCTION:
            shapes = ()
        return all(_fits(s, settings) for s in shapes)


def _const_shape(values: object) -> Shape:
    return (len(values), *_const_shape(values[0])) if isinstance(values, list) else ()


def _torch_args(sample: registry.Sample) -> list[Any]:
    import torch

    return [torch.tensor(a.values, dtype=getattr(torch, a.dtype))
            if isinstance(a, registry.Const) else a for a in sample.args]


def _torch_call(row: registry.OpRow, inputs: list[Any], args: list[Any], **kwargs: Any
                ) -> Any:
    import torch

    if row.function:
        return getattr(torch, row.name)(*inputs, *args, **kwargs)
    return getattr(inputs[0], row.name)(*inputs[1:], *args, **kwargs)


def _shapes_of(result: Any) -> tuple[Shape, ...]:
    items = result if isinstance(result, (tuple, list)) else (result,)
    return tuple(tuple(t.shape) for t in items)


def _gen_op(row: registry.OpRow) -> GenOp:
    """How the generator calls `row`, from its sample; result shapes read from torch once
    (torch is the oracle: the generator's idea of a shape is torch's)."""
    import torch

    sample = row.sample
    assert sample is not None
    inputs = [torch.full(s, 0.75, dtype=torch.float64) for s in sample.shapes]
    outputs = _shapes_of(_torch_call(row, [t.clone() for t in inputs], _torch_args(sample)))
    numbers = all(isinstance(a, float) for a in sample.args)
    if row.feature == "ops" and len(sample.shapes) == 1 and numbers:
        return GenOp(row, POINTWISE, outputs)
    if row.feature == "ops" and len(sample.shapes) == 2 and not sample.args:
        return GenOp(row, BROADCAST, outputs)
    if row.feature == "reductions" and len(sample.shapes) == 1 and not sample.args:
        try:  # a reduction that takes a dim is drawn on any tensor, with dim and keepdim
            by_dim = _torch_call(row, inputs, [0], keepdim=True)
        except (TypeError, RuntimeError):
            by_dim = None
        if by_dim is not None:
            return GenOp(row, REDUCTION, outputs, isinstance(by_dim, tuple))
    return GenOp(row, SAMPLE, outputs)


@cache
def generated_ops() -> tuple[GenOp, ...]:
    """Every differentiable registry row not in registry.NOT_GENERATED."""
    return tuple(_gen_op(r) for r in registry.OPS
                 if r.differentiable and r.name not in registry.NOT_GENERATED)


@cache
def ops_for(settings: GenSettings) -> tuple[GenOp, ...]:
    return tuple(op for op in generated_ops() if op.fits(settings))


@cache
def weighted_ops(settings: GenSettings) -> tuple[GenOp, ...]:
    """ops_for(settings), an op repeated by its weight: rows called on their sample's fixed
    shapes, or only on positive values, are drawn more often, since they less often
    find an input already there or are nested into another op's statement; with that
    every op is used, and its gradient compared, in a share of programs (the floors in
    tests/conformance/test_strategies.py)."""
    return tuple(op for op in ops_for(settings) for _ in range(op.weight))


def _arg_expr(a: object) -> ir.Expr:
    if isinstance(a, registry.Const):
        values = a.values
        shape = _const_shape(values)
        flat: list[Any] = []

        def collect(v: object) -> None:
            if isinstance(v, list):
                for item in v:
                    collect(item)
            else:
                flat.append(v)

        collect(values)
        return call(torch_fn("tensor"), nested(flat, shape))
    if isinstance(a, tuple):
        return ir.Tuple(tuple(const(v) for v in a))
    return const(a)


def _prepare_target(dice: Dice, state: State, x: Var) -> tuple[Var, Emit]:
    """The name an in-place form writes: mostly a clone when `x` is a leaf that requires
    grad, or an older name that ops made since may have saved (the in-place-on-leaf and
    modified-saved-tensor errors stay reachable a quarter of the time; the motifs reach
    the latter on purpose), so that most in-place ops are in a graph a backward completes."""
    safe = not (x.leaf and x.requires_grad) and (x.leaf or x == state.vars[-1])
    if safe or dice.chance(1, 4):
        return x, Emit((), state)
    n, state, var = _result(state, x.shape, (x,), x.positive, prefix="c")
    return var, Emit((assign(n, method(name(x.name), "clone")),), state.bind(var))


def _op_call(op: GenOp, form: str, inputs: Sequence[Var], args: Sequence[ir.Expr],
             kwargs: dict[str, ir.Expr], exprs: dict[str, ir.Expr]) -> ir.Expr:
    names = [exprs.get(v.name, name(v.name)) for v in inputs]
    if form == "function":
        return call(torch_fn(op.name), *names, *args, **kwargs)
    if form == "operator":
        return ir.BinOp(OPERATOR_OF[op.name], names[0], names[1])
    m = op.name if form == "method" or op.name.endswith("_") else op.name + "_"
    return method(names[0], m, *names[1:], *args, **kwargs)


@dataclass(frozen=True)
class _Value:
    """An op's result before it is named: its expression, shape and inputs."""

    expr: ir.Expr
    shape: Shape
    inputs: tuple[Var, ...]


CHAINED = "<chained>"  # the name a nested op's input has while it is an expression


def _registry_op(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """One registry op in one of its forms, often with one or two more applied to its
    result in the same statement (`y = torch.sin(x).exp()`): more ops per statement, and a
    longer chain for a backward to go through."""
    op = dice.choose(weighted_ops(settings), "op")
    form = dice.pick(op.forms)
    stmts: list[ir.Stmt] = []
    exprs: dict[str, ir.Expr] = {}
    first: Var | None = None
    value: _Value | None = None
    for _ in range(4):
        emit, value = _one_op(dice, state, settings, op, form, first, exprs)
        stmts.extend(emit.stmts)
        state = emit.state
        if value is None:  # an in-place form: a statement of its own
            return Emit(tuple(stmts), state)
        requires = any(v.requires_grad for v in value.inputs)
        first = Var(CHAINED, value.shape, requires, False, False, _promote(*value.inputs),
                    value.inputs[0].device, any(v.stale for v in value.inputs))
        exprs = {CHAINED: value.expr}
        nested = _nested_ops(settings, value.shape)
        if not nested or dice.chance(1, 4):
            break
        op = dice.pick(nested)
        form = dice.pick([f for f in op.forms if f != "inplace"] or ["function"])
        if op.name.endswith("_"):
            break
    assert value is not None
    n, state, var = _result(state, value.shape, value.inputs)
    return Emit((*stmts, assign(n, value.expr)), state.bind(var))


@cache
def _nested_ops(settings: GenSettings, shape: Shape) -> tuple[GenOp, ...]:
    """The ops that can take a value of `shape` of any sign as their first input."""
    return tuple(o for o in ops_for(settings) if not o.sample.positive and (
        o.form != SAMPLE or o.sample.shapes[0] == shape))


def _one_op(dice: Dice, state: State, settings: GenSettings, op: GenOp, form: str,
            first: Var | None, exprs: dict[str, ir.Expr]) -> tuple[Emit, _Value | None]:
    """`op` called in `form`, on `first` (when nested) and inputs drawn for it; an in-place
    form's statement, or the call as a value (None for the Emit's statements then)."""
    positive = op.sample.positive
    stmts: list[ir.Stmt] = []

    def take(shape: Shape | None, dtype: str | None = None) -> Var:
        nonlocal state, first
        if first is not None:
            var, first = first, None
            return var
        var, emit = _input(dice, state, settings, shape, positive, dtype)
        stmts.extend(emit.stmts)
        state = emit.state
        return var

    args: list[ir.Expr] = []
    kwargs: dict[str, ir.Expr] = {}
    index: int | None = None
    if op.form == POINTWISE:
        inputs = [take(None)]
        args = [_arg_expr(a) for a in op.sample.args]
        out_shapes: tuple[Shape, ...] = (inputs[0].shape,)
    elif op.form == BROADCAST:
        x = take(None)
        if form == "operator" and op.name != "pow" and dice.chance(1, 4):
            # a Python number as the right operand (MulBackward1 and the like)
            number = const(dice.pick((2.0, 0.5, 3.0)))
            with_number = ir.BinOp(OPERATOR_OF[op.name], exprs.get(x.name, name(x.name)), number)
            return Emit(tuple(stmts), state), _Value(with_number, x.shape, (x,))
        # a partner of x's dtype: a float32 result promoted into a float64 one would be
        # compared at float64's tolerance, where float32 rounding (BLAS' summation order)
        # is not the engine's to match
        fit = [v for v in state.vars if _broadcasts(v.shape, x.shape) and v.dtype == x.dtype
               and (v.positive or not positive)
               and (form != "inplace" or _broadcast(x.shape, v.shape) == x.shape)]
        if fit and dice.chance(1, 2):
            y = dice.recent(fit)
        else:
            partner = broadcast_partner(x.shape, dice, settings)
            if form != "inplace" and len(x.shape) < settings.max_rank and dice.chance(1, 4):
                # a partner of higher rank broadcasts x
                partner = (1 + dice.below(settings.max_side),
                           *(1 if n > settings.max_side else n for n in x.shape))
            emit = _leaf(dice, state, settings, shape=partner,
                         positive=True if positive else None, dtype=x.dtype)
            stmts.extend(emit.stmts)
            state = emit.state
            y = state.vars[-1]
        inputs = [x, y]
        out_shapes = (_broadcast(x.shape, y.shape),)
    elif op.form == REDUCTION:
        x = take(None)
        inputs = [x]
        out_shapes = op.outputs  # every result of a whole reduction is 0-d
        if x.shape and dice.chance(2, 3):
            dim = dice.below(len(x.shape))
            keepdim = dice.chance(1, 2)
            args = [const(dim)]
            if op.dim_result_tuple:  # (values, indices) or (var, mean): the first
                index = 0
            if keepdim:
                kwargs["keepdim"] = const(True)
            out_shapes = (tuple(1 if i == dim else s for i, s in enumerate(x.shape))
                          if keepdim else tuple(s for i, s in enumerate(x.shape) if i != dim),)
            out_shapes = out_shapes * (2 if op.dim_result_tuple else 1)
    else:
        # products want operands of one dtype (mm: "expected m1 and m2 to have the same
        # dtype"): the later inputs take the first one's
        inputs = [take(op.sample.shapes[0])]
        inputs += [take(s, inputs[0].dtype) for s in op.sample.shapes[1:]]
        args = [_arg_expr(a) for a in op.sample.args]
        out_shapes = op.outputs
    if form == "inplace":
        target, emit = _prepare_target(dice, state, inputs[0])
        stmts.extend(emit.stmts)
        state = emit.state
        inputs = [target, *inputs[1:]]
        stmt: ir.Stmt = expr_stmt(_op_call(op, form, inputs, args, kwargs, exprs))
        if op.row.name in OPERATOR_OF and OPERATOR_OF[op.row.name] in AUGMENTED and \
                dice.chance(1, 4):
            stmt = ir.AugAssign(name(target.name), OPERATOR_OF[op.row.name],
                                name(inputs[1].name))
        written = replace(target, shape=out_shapes[0], positive=False,
                          requires_grad=any(v.requires_grad for v in inputs))
        return Emit((*stmts, stmt), state.bind(written)), None
    value: ir.Expr = _op_call(op, form, inputs, args, kwargs, exprs)
    if index is None:
        index = dice.below(len(out_shapes))
    if len(out_shapes) > 1:
        value = ir.Subscript(value, const(index))
    return Emit(tuple(stmts), state), _Value(value, out_shapes[index], tuple(inputs))


def broadcast_partner(shape: Shape, dice: Dice, settings: GenSettings) -> Shape:
    """A shape that broadcasts against `shape` and fits `settings` (a view's result may not):
    trailing dims kept or set to 1."""
    keep = dice.below(min(len(shape), settings.max_rank) + 1)
    tail = shape[len(shape) - keep:]
    return tuple(s if s <= settings.max_side and dice.chance(2, 3) else 1 for s in tail)


def _broadcasts(a: Shape, b: Shape) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b), strict=False))


def _broadcast(a: Shape, b: Shape) -> Shape:
    n = max(len(a), len(b))
    a1, b1 = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a1, b1, strict=False))


def _matmul(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """x @ w for a new w of compatible shape: 1-D, 2-D and batched operands."""
    ranked = [v for v in state.vars if v.shape and v.shape[-1] <= settings.max_side]
    if not ranked or settings.max_rank < 1:
        return _registry_op(dice, state, settings)
    x = dice.recent(ranked)
    k = x.shape[-1]
    rank = 1 if settings.max_rank < 2 else 1 + dice.below(2)
    m = 1 + dice.below(settings.max_side)
    w_shape = (k,) if rank == 1 else (k, m)
    emit = _leaf(dice, state, settings, shape=w_shape, dtype=x.dtype)
    w = emit.state.vars[-1]
    out = x.shape[:-1] + (() if rank == 1 else (m,))
    n, state, var = _result(emit.state, out, (x, w))
    return Emit((*emit.stmts, assign(n, ir.BinOp("@", name(x.name), name(w.name)))),
                state.bind(var))


def _view(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """A view (possibly of a view): transpose, reshape, unsqueeze, indexing, unbind."""
    x = dice.recent(state.vars)
    options: list[tuple[Callable[[ir.Expr], ir.Expr], Shape]] = [
        (lambda e: method(e, "reshape", const(-1)), (numel(x.shape),)),
    ]
    if len(x.shape) < settings.max_rank:
        options.append((lambda e: method(e, "unsqueeze", const(0)), (1, *x.shape)))
    if len(x.shape) >= 2:
        options.append((lambda e: method(e, "transpose", const(0), const(1)),
                        (x.shape[1], x.shape[0], *x.shape[2:])))
    if x.shape:
        options.append((lambda e: ir.Subscript(e, const(0)), x.shape[1:]))
        options.append((lambda e: ir.Subscript(e, ir.Slice(const(0), const(1))),
                        (1, *x.shape[1:])))
    build, out_shape = dice.pick(options)
    if x.shape and dice.chance(1, 5):
        n, state = state.fresh("u")
        var = replace(x, name=n, shape=x.shape[1:], leaf=False)
        return Emit((assign(n, ir.Subscript(method(name(x.name), "unbind"), const(0))),),
                    state.bind(var))
    n, state = state.fresh("v")
    var = replace(x, name=n, shape=out_shape, leaf=False)
    return Emit((assign(n, build(name(x.name))),), state.bind(var))


def _inplace(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """An in-place write on any name, leaves and views of leaves included: setitem and
    augmented assignment with a number (the registry ops' in-place forms are drawn by
    `_registry_op`)."""
    x = dice.recent(state.vars)
    if x.shape and dice.chance(1, 2):
        stmt: ir.Stmt = ir.Assign(ir.Subscript(name(x.name), const(0)), const(0.0))
    else:
        stmt = ir.AugAssign(name(x.name), dice.pick(sorted(AUGMENTED - {"/"})), const(1.0))
    return Emit((stmt,), state.bind(replace(x, positive=False)))


# ---- autograd actions --------------------------------------------------------------------

def _root(v: Var) -> ir.Expr:
    return name(v.name) if not v.shape else method(name(v.name), "sum")


def _backward(dice: Dice, state: State, settings: GenSettings) -> Emit:
    targets = state.differentiable() or state.vars
    v = dice.recent(targets)
    kwargs: dict[str, ir.Expr] = {}
    if dice.chance(1, 2):
        kwargs["retain_graph"] = const(True)
    if dice.chance(1, 6):
        kwargs["create_graph"] = const(True)
    if not kwargs:
        state = state.backwarded()  # retain_graph or create_graph keep the graph
    leaves = state.leaves()
    if leaves and dice.chance(1, 5):
        kwargs["inputs"] = ir.List((name(dice.pick(leaves).name),))
    if v.shape != () and dice.chance(1, 2):
        gradient = call(torch_fn("ones_like"), name(v.name))
        return Emit((expr_stmt(method(name(v.name), "backward", gradient, **kwargs)),), state)
    return Emit((expr_stmt(method(_root(v), "backward", **kwargs)),), state)


def _final_backward(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """A program's last backward: often of a loss summing the newest results that require
    grad (as training code sums its terms), so the gradients of several chains of ops are
    compared at once."""
    results = [v for v in state.differentiable() if not v.leaf and not v.stale]
    if not results or dice.chance(1, 12):
        return _backward(dice, state, settings)
    terms = results[-12:]
    loss: ir.Expr = _root(terms[0])
    for v in terms[1:]:
        loss = ir.BinOp("+", loss, _root(v))
    kwargs = {"retain_graph": const(True)} if dice.chance(1, 2) else {}
    return Emit((expr_stmt(method(loss, "backward", **kwargs)),), state)


def _autograd_grad(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """torch.autograd.grad, with allow_unused, and optionally a second-order grad."""
    leaves = state.leaves()
    targets = state.differentiable()
    if not leaves or not targets:
        return _backward(dice, state, settings)
    v = dice.recent(targets)
    x = dice.pick(leaves)
    create = dice.chance(1, 2)
    state = state.backwarded()
    kwargs: dict[str, ir.Expr] = {"allow_unused": const(True)}
    if create:
        kwargs["create_graph"] = const(True)
    if dice.chance(1, 2):
        kwargs["retain_graph"] = const(True)
    if v.shape != () and dice.chance(1, 2):
        kwargs["grad_outputs"] = call(torch_fn("ones_like"), name(v.name))
        out: ir.Expr = name(v.name)
    else:
        out = _root(v)
    g, state = state.fresh("g")
    stmts: list[ir.Stmt] = [ir.Assign(ir.Tuple((name(g),)), call(
        torch_fn("autograd.grad"), out, ir.List((name(x.name),)), **kwargs))]
    state = state.bind(replace(x, name=g, requires_grad=create, leaf=not create,
                               positive=False))
    if create and dice.chance(1, 2):
        gg, state = state.fresh("g")
        stmts.append(ir.Assign(ir.Tuple((name(gg),)), call(
            torch_fn("autograd.grad"), method(name(g), "sum"), ir.List((name(x.name),)),
            allow_unused=const(True))))
        state = state.bind(replace(x, name=gg, requires_grad=False, leaf=True,
                                   positive=False))
    return Emit(tuple(stmts), state)


HOOK_BODIES: tuple[Callable[[ir.Expr], ir.Expr], ...] = (
    lambda g: ir.BinOp("*", g, const(2.0)),
    lambda g: const(None),
    lambda g: ir.BinOp("+", g, const(1.0)),
)


def _hook(dice: Dice, state: State, settings: GenSettings) -> Emit:
    targets = state.differentiable()
    if not targets:
        return Emit((), state)
    v = dice.recent(targets)
    body = dice.pick(HOOK_BODIES)
    h, state = state.fresh("h")
    lam = ir.Lambda(("grad",), body(name("grad")))
    stmts: list[ir.Stmt] = [assign(h, method(name(v.name), "register_hook", lam))]
    if dice.chance(1, 4):
        stmts.append(expr_stmt(method(name(h), "remove")))
    return Emit(tuple(stmts), state)


def _tensor_state(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """retain_grad, detach, .data, requires_grad_, and resetting or zeroing .grad."""
    v = dice.recent(state.vars)
    kind = dice.pick(("retain_grad", "detach", "data", "data=", "requires_grad_",
                      "grad=None", "grad.zero_"))
    if kind == "retain_grad":
        return Emit((expr_stmt(method(name(v.name), "retain_grad")),), state)
    if kind == "data=" and _fits(v.shape, settings):
        # new values of the same shape, dtype and device (the settings' own)
        new = call(torch_fn("randn"), *(const(s) for s in v.shape),
                   **factory_kwargs(v.dtype, v.device, False))
        return Emit((ir.Assign(attr(name(v.name), "data"), new),),
                    state.bind(replace(v, positive=False)))
    if kind in ("detach", "data", "data="):
        n, state = state.fresh("d")
        value = method(name(v.name), "detach") if kind == "detach" else attr(name(v.name),
                                                                                "data")
        return Emit((assign(n, value),), state.bind(replace(v, name=n, requires_grad=False,
                                                            leaf=True)))
    if kind == "requires_grad_":
        flag = dice.chance(1, 2)
        stmt = expr_stmt(method(name(v.name), "requires_grad_", const(flag)))
        return Emit((stmt,), state.bind(replace(v, requires_grad=flag or v.requires_grad)))
    if kind == "grad=None":
        return Emit((ir.Assign(attr(name(v.name), "grad"), const(None)),), state)
    return Emit((expr_stmt(method(attr(name(v.name), "grad"), "zero_")),), state)


def _grad_mode_block(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """`with torch.no_grad():` (or enable_grad inside it) around an op or in-place op."""
    body: list[ir.Stmt] = []
    inner = state
    for _ in range(1 + dice.below(2)):
        piece = dice.pick((_registry_op, _inplace, _view))
        emit = piece(dice, inner, settings)
        body += emit.stmts
        inner = emit.state
    # results made here do not require grad (no_grad); the generator's record is a guess
    # for enable_grad blocks, which only steers later draws
    mode = dice.pick(("no_grad", "enable_grad"))
    block = ir.With(call(torch_fn(mode)), tuple(body))
    if mode == "enable_grad":
        block = ir.With(call(torch_fn("no_grad")), (block,))
    else:
        inner = replace(inner, vars=tuple(
            v if v in state.vars else replace(v, requires_grad=False) for v in inner.vars))
    return Emit((block,), inner)


def _loop(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """`for i in range(2):` around a backward that keeps the graph (grads accumulate)."""
    targets = state.differentiable()
    if not targets:
        return Emit((), state)
    v = dice.recent(targets)
    body = expr_stmt(method(_root(v), "backward", retain_graph=const(True)))
    return Emit((ir.For("i", (const(2),), (body,)),), state)


def _shape_assert(dice: Dice, state: State, settings: GenSettings) -> Emit:
    v = dice.recent(state.vars)
    test = ir.Compare(attr(name(v.name), "shape"), ("==",), (shape_tuple(v.shape),))
    return Emit((ir.Assert(test),), state)


# A small library of custom Functions: what each saves decides where its errors fire.
FUNCTIONS: dict[str, ir.FunctionClass] = {}


def _function(src_name: str, forward: tuple[ir.Stmt, ...], backward_: tuple[ir.Stmt, ...]
              ) -> ir.FunctionClass:
    return ir.FunctionClass(src_name, (
        ir.Method("forward", ("ctx", "x"), forward),
        ir.Method("backward", ("ctx", "g"), backward_),
    ))


FUNCTIONS["Square"] = _function(
    "Square",
    (expr_stmt(method(name("ctx"), "save_for_backward", name("x"))),
     ir.Return(ir.BinOp("*", name("x"), name("x")))),
    (ir.Assign(ir.Tuple((name("x"),)), attr(name("ctx"), "saved_tensors")),
     ir.Return(ir.BinOp("*", ir.BinOp("*", const(2.0), name("x")), name("g")))))
FUNCTIONS["Double"] = _function(
    "Double", (ir.Return(ir.BinOp("*", name("x"), const(2.0))),),
    (ir.Return(ir.BinOp("*", name("g"), const(2.0))),))
FUNCTIONS["ExpF"] = _function(
    "ExpF",
    (assign("y", method(name("x"), "exp")),
     expr_stmt(method(name("ctx"), "save_for_backward", name("y"))),
     ir.Return(name("y"))),
    (ir.Assign(ir.Tuple((name("y"),)), attr(name("ctx"), "saved_tensors")),
     ir.Return(ir.BinOp("*", name("g"), name("y")))))


def _custom_function(dice: Dice, state: State, settings: GenSettings) -> Emit:
    x = dice.recent(state.vars)
    fn = dice.pick(sorted(FUNCTIONS))
    stmts: tuple[ir.Stmt, ...] = ()
    if fn not in state.functions:
        stmts = (FUNCTIONS[fn],)
        state = replace(state, functions=state.functions | {fn})
    n, state, var = _result(state, x.shape, (x,), x.positive and fn != "Double")
    apply = call(attr(name(fn), "apply"), name(x.name))
    return Emit((*stmts, assign(n, apply)), state.bind(var))


# ---- motifs: error paths reached on purpose ---------------------------------------------

def _backward_twice(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """A loss through ops that save tensors, backwarded twice (the second may fail)."""
    stmts_before: tuple[ir.Stmt, ...] = ()
    if not state.differentiable():
        emit = _leaf(dice, state, settings, requires_grad=True)
        stmts_before, state = emit.stmts, emit.state
    base = dice.recent(state.differentiable())
    loss, state = state.fresh("loss")
    x = name(base.name)
    savers: tuple[ir.Expr, ...] = (ir.BinOp("**", x, const(2)), method(x, "exp"),
                                   ir.BinOp("*", x, x))
    value = dice.pick(savers)
    first = {} if dice.below(4) else {"retain_graph": const(True)}
    stmts = (*stmts_before, assign(loss, method(value, "sum")),
             expr_stmt(method(name(loss), "backward", **first)),
             expr_stmt(method(name(loss), "backward")))
    return Emit(stmts, state.backwarded().bind(
        replace(base, name=loss, shape=(), leaf=False, stale=True)))


def _modify_saved(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """An op saves a tensor, the tensor is modified in place, then backward runs."""
    emit = _leaf(dice, state, settings, requires_grad=True)
    state = emit.state
    x0 = state.vars[-1]
    a, state = state.fresh("a")
    s, state = state.fresh("s")
    saver = dice.pick(("exp", "mul", "sin", "pow"))
    savers: dict[str, ir.Expr] = {
        "exp": method(name(a), "exp"), "mul": ir.BinOp("*", name(a), name(a)),
        "sin": method(name(a), "sin"), "pow": ir.BinOp("**", name(a), const(2))}
    modified = name(s) if saver == "exp" and dice.chance(1, 2) else name(a)
    op = dice.pick(("add_", "mul_"))
    stmts = (*emit.stmts,
             assign(a, ir.BinOp("*", name(x0.name), const(1.0))),
             assign(s, savers[saver]),
             expr_stmt(method(modified, op, const(2.0))),
             expr_stmt(method(method(name(s), "sum"), "backward")))
    # its backward frees only its own graph: a and s
    state = state.bind(replace(x0, name=a, leaf=False, positive=False, stale=True)).bind(
        replace(x0, name=s, leaf=False, positive=False, stale=True))
    return Emit(stmts, state)


def _new_leaf(dice: Dice, state: State, settings: GenSettings) -> Emit:
    return _leaf(dice, state, settings)


# ---- the action table --------------------------------------------------------------------

Piece = Callable[[Dice, State, GenSettings], Emit]


@dataclass(frozen=True)
class Action:
    """One kind of step a program takes: the piece that builds it, how often it is drawn
    (relative weight), and the feature families (conformance.vocabulary) it is there for."""

    name: str
    piece: Piece
    weight: int
    features: frozenset[str]


def _action(name_: str, piece: Piece, weight: int, *features: str) -> Action:
    return Action(name_, piece, weight, frozenset(features))


# Ops dominate (the registry's rows, each with a share of programs big enough to compare its
# backward); motifs are frequent enough to reach their error paths in a good share.
ACTIONS: tuple[Action, ...] = (
    _action("op", _registry_op, 30, "ops", "reductions", "views", "matmul", "inplace"),
    _action("matmul", _matmul, 1, "matmul"),
    _action("view", _view, 2, "views"),
    _action("inplace", _inplace, 1, "inplace"),
    _action("backward", _backward, 2, "backward_options", "retain_graph", "higher_order"),
    _action("grad", _autograd_grad, 2, "autograd_grad", "higher_order"),
    _action("hook", _hook, 1, "hooks"),
    _action("state", _tensor_state, 1, "data", "retain_grad", "requires_grad"),
    _action("grad_mode", _grad_mode_block, 1, "grad_mode"),
    _action("loop", _loop, 1, "retain_graph"),
    _action("assert", _shape_assert, 1),
    _action("function", _custom_function, 1, "custom_function"),
    _action("backward_twice", _backward_twice, 1, "retain_graph"),
    _action("modify_saved", _modify_saved, 1, "inplace"),
    _action("leaf", _new_leaf, 1),
)
BY_NAME: dict[str, Action] = {a.name: a for a in ACTIONS}
WEIGHTED: tuple[Action, ...] = tuple(a for a in ACTIONS for _ in range(a.weight))
# An action's draw ends the program with probability 1/STOP: about 7 actions on average.
STOP = 8
MOTIFS = (BY_NAME["modify_saved"], BY_NAME["backward_twice"])


@st.composite
def programs(draw: st.DrawFn, settings: GenSettings = DEFAULT) -> ir.Program:
    """A random program: a few leaves, then ops and autograd actions, often a final
    backward."""
    state = State()
    stmts: list[ir.Stmt] = []

    def add(emit: Emit) -> None:
        nonlocal state
        stmts.extend(emit.stmts)
        state = emit.state

    # Every part may shrink away (an action with nothing to act on draws a leaf first), so
    # a failing program shrinks to the few statements its failure needs. Each part is one
    # draw, which with the draw before it seeds the part's dice (hypothesis repeats a drawn
    # value often across examples; the pair keeps the parts diverse, while deleting a part,
    # the shrinker's main move, changes only the part after it). The value 0, which
    # hypothesis draws often and the shrinker aims at, skips the part; any other multiple
    # of STOP ends the actions. (0 ending them all left a quarter of the default profile's
    # programs without an op.) A drawn count would instead tie every later draw to it.
    codes = [0]

    def dice(label: str) -> Dice | None:
        code = draw(SEED, label=label)
        codes.append(code)
        salt = hash(tuple(codes)) & 0xFFFF
        return Dice(code << 32 | codes[-2], draw, salt) if code % STOP else None

    for _ in range(2):
        leaf_dice = dice("leaf")
        if leaf_dice is not None:
            add(_leaf(leaf_dice, state, settings))
    for _ in range(settings.max_actions):
        action_dice = dice("action")
        if action_dice is None:
            if codes[-1]:
                break
            continue
        if not state.vars:
            add(_leaf(action_dice, state, settings))
        add(action_dice.choose(WEIGHTED, "action kind").piece(action_dice, state, settings))
    # the final backward comes before a motif, which would leave its own freed or modified
    # graph as the newest names: the backward is through the ops drawn so far
    end = dice("ending") or Dice(codes[-2])
    if not state.vars:
        add(_leaf(end, state, settings))
    if end.chance(9, 10):
        add(_final_backward(end, state, settings))
    if end.chance(2, 5):
        add(end.pick(MOTIFS).piece(end, state, settings))
    # Function classes first: a class statement defines a name later statements call.
    classes = tuple(s for s in stmts if isinstance(s, ir.FunctionClass))
    rest = tuple(s for s in stmts if not isinstance(s, ir.FunctionClass))
    return ir.Program(classes + rest)


def sample_programs(n: int, settings: GenSettings = DEFAULT) -> list[ir.Program]:
    """The first `n` programs hypothesis generates, derandomized (the same list on every
    run and machine): what the `default` profile's run meets, for measurements."""
    from conformance import profiles  # registers the profiles

    drawn: list[ir.Program] = []

    # every setting from the `default` profile, whatever profile is loaded: the programs
    # hypothesis draws depend on the settings, not only on the seed
    assert "default" in profiles.PROFILES

    @hsettings(parent=hsettings.get_profile("default"), max_examples=n,
               phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(programs(settings))
    def collect(program: ir.Program) -> None:
        drawn.append(program)

    with without_local_constants():
        collect()
    return drawn


@contextlib.contextmanager
def without_local_constants() -> Iterator[None]:
    """Hypothesis mixes into its draws constants it reads from the source of the modules
    imported so far (and caches them), so the same derandomized test draws other programs
    after other imports: in a script, alone under pytest, and in the full suite. Without
    them the list depends on nothing but the code here."""
    from hypothesis.internal.conjecture import providers

    if not all(hasattr(providers, n) for n in (
            "_get_local_constants", "CONSTANTS_CACHE", "Constants", "SortedSet")):
        yield  # a hypothesis without local constants (older) or with them moved (newer)
        return
    sorted_set = providers.SortedSet
    empty = providers.Constants(integers=sorted_set(), floats=sorted_set(), bytes=sorted_set(),
                                strings=sorted_set())
    original, cache = providers._get_local_constants, providers.CONSTANTS_CACHE
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE = type(cache)(1024)
    try:
        yield
    finally:
        providers._get_local_constants, providers.CONSTANTS_CACHE = original, cache
