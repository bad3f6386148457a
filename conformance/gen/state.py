"""The generator's vocabulary: settings, the symbolic state of a program being drawn, an
action's dice, IR shorthands, and leaves (conformance.gen.strategies draws programs from them).

`State` is what the generator knows of the names it made (shapes, dtypes, devices, whether
they require grad, are positive, may hang from a freed graph); it only steers later draws,
torch decides what actually happens. Every size, rank, dtype and device comes from
`GenSettings`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple, TypeVar

from hypothesis import strategies as st

from conformance.case import program as ir

Shape = tuple[int, ...]


@dataclass(frozen=True)
class GenSettings:
    # Every tensor a program makes has rank <= max_rank and dimensions 1..max_side: room
    # for the registry rows called on their sample's shapes (pixel_shuffle's (1, 4, 1, 2),
    # split_with_sizes' (5, 2)). The shapes drawn at random stay within rank 3 and side 3.
    max_rank: int = 4
    max_side: int = 6
    max_actions: int = 40  # actions after the leaves
    devices: tuple[str, ...] = ("cpu",)
    dtypes: tuple[str, ...] = ("float32", "float64")

    @property
    def rank(self) -> int:
        """The largest rank of a shape drawn at random."""
        return min(self.max_rank, 3)

    @property
    def side(self) -> int:
        """The largest dimension of a shape drawn at random."""
        return min(self.max_side, 3)


DEFAULT = GenSettings()
T = TypeVar("T")
# What a factory call without dtype= / device= makes (the run's default dtype is float32).
DEFAULT_DTYPE, DEFAULT_DEVICE = "float32", "cpu"

# Leaf values: negatives, zeros of both signs, and a spread of magnitudes.
VALUES = (-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 3.0)
POSITIVE_VALUES = (0.5, 0.75, 1.0, 1.5, 2.0)
# their nodes, built once (a dict by value would make -0.0 and 0.0 one node)
VALUE_NODES = tuple(ir.Const(v) for v in VALUES)
POSITIVE_NODES = tuple(ir.Const(v) for v in POSITIVE_VALUES)


# Var, State and Emit are named tuples, not frozen dataclasses: a program's draw makes
# dozens of each, and a frozen dataclass' __init__ and dataclasses.replace cost several
# times a tuple's (they were a tenth of the draw).
class Var(NamedTuple):
    name: str
    shape: Shape
    requires_grad: bool
    leaf: bool
    positive: bool = False  # all values > 0: log, sqrt and division by it are safe
    dtype: str = DEFAULT_DTYPE
    device: str = DEFAULT_DEVICE
    stale: bool = False  # made from a graph a backward or grad call may have freed


class State(NamedTuple):
    vars: tuple[Var, ...] = ()
    functions: frozenset[str] = frozenset()  # custom Function classes defined so far
    counter: int = 0

    def fresh(self, prefix: str) -> tuple[str, State]:
        return f"{prefix}{self.counter}", State(self.vars, self.functions, self.counter + 1)

    def bind(self, var: Var) -> State:
        name_ = var.name
        others = tuple(v for v in self.vars if v.name != name_)
        return State((*others, var), self.functions, self.counter)

    def differentiable(self) -> tuple[Var, ...]:
        return tuple(v for v in self.vars if v.requires_grad)

    def leaves(self) -> tuple[Var, ...]:
        return tuple(v for v in self.vars if v.leaf and v.requires_grad)

    def backwarded(self) -> State:
        """After a backward or grad call: every result so far may hang from a freed graph."""
        return State(tuple(v if v.leaf else v._replace(stale=True) for v in self.vars),
                     self.functions, self.counter)


class Emit(NamedTuple):
    """What a piece adds: statements, and the state after them."""

    stmts: tuple[ir.Stmt, ...]
    state: State


class Dice:
    """An action's random choices, decoded from the one integer hypothesis drew for it.
    A seeded PRNG rather than digits of the integer: hypothesis draws large integers mostly
    small, which would leave every later digit 0."""

    __slots__ = ("_rng", "parts")

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        # where the program's draws are at hand (strategies.programs), the dice of a part
        # of the action, one draw each (None: the part is skipped), so that the shrinker
        # can delete an action's parts one by one (forward.own_dual_block)
        self.parts: Callable[[], Dice | None] | None = None

    # from random() (one call into C) rather than randrange (several Python frames): the
    # bias of a 53-bit float scaled to a few dozen options is far below anything measured
    def below(self, n: int) -> int:
        return int(self._rng.random() * n)

    def chance(self, k: int, n: int) -> bool:
        """True with probability k/n."""
        return self._rng.random() * n < k

    def pick(self, options: Sequence[T]) -> T:
        return options[int(self._rng.random() * len(options))]

    def recent(self, options: Sequence[T]) -> T:
        """One of `options`, the last (the newest name) half of the time: ops chain into
        longer graphs, which a final backward then runs through."""
        if self._rng.random() < 0.5:
            return options[-1]
        return options[int(self._rng.random() * len(options))]


# ---- IR shorthands -----------------------------------------------------------------------
# (the node classes themselves where a shorthand would only forward: a frame less per node)
name = ir.Name
const = ir.Const
attr = ir.Attribute
expr_stmt = ir.ExprStmt


def call(func: ir.Expr, *args: ir.Expr, **kwargs: ir.Expr) -> ir.Call:
    if not kwargs:
        return ir.Call(func, args)
    return ir.Call(func, args, tuple([ir.Keyword(k, v) for k, v in kwargs.items()]))


def method(obj: ir.Expr, m: str, *args: ir.Expr, **kwargs: ir.Expr) -> ir.Call:
    return call(ir.Attribute(obj, m), *args, **kwargs)


@cache  # nodes are immutable: one `torch.autograd.grad` serves every program
def torch_fn(path: str) -> ir.Expr:
    expr: ir.Expr = name("torch")
    for part in path.split("."):
        expr = attr(expr, part)
    return expr


def assign(target: str, value: ir.Expr) -> ir.Assign:
    return ir.Assign(name(target), value)


def shape_tuple(shape: Shape) -> ir.Tuple:
    return ir.Tuple(tuple(const(n) for n in shape))


def nested(values: Sequence[Any], shape: Shape) -> ir.Expr:
    """The nested list literal of `values` (flat, row-major) in `shape`."""
    return nested_nodes([const(v) for v in values], shape)


def nested_nodes(items: list[ir.Expr], shape: Shape) -> ir.Expr:
    """`items` (flat, row-major) grouped into nested lists of `shape`, innermost first."""
    for n in reversed(shape):
        items = [ir.List(tuple(items[i:i + n])) for i in range(0, len(items), n)]
    return items[0]


def numel(shape: Shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


SEED_MAX = 2**32 - 1
SEED = st.integers(0, SEED_MAX)  # a part's seed (conformance.gen.strategies.seed_source)


def fits_settings(shape: Shape, settings: GenSettings) -> bool:
    return len(shape) <= settings.max_rank and all(1 <= s <= settings.max_side for s in shape)


def promoted(*vs: Var) -> str:
    return "float64" if any(v.dtype == "float64" for v in vs) else vs[0].dtype


# ---- leaves ------------------------------------------------------------------------------

def draw_shape(dice: Dice, settings: GenSettings, min_rank: int = 0) -> Shape:
    rank = min_rank + dice.below(max(settings.rank - min_rank, 0) + 1)
    return tuple(1 + dice.below(settings.side) for _ in range(rank))


def factory_kwargs(dtype: str, device: str, requires_grad: bool) -> dict[str, ir.Expr]:
    kwargs: dict[str, ir.Expr] = {}
    if dtype != DEFAULT_DTYPE:
        kwargs["dtype"] = torch_fn(dtype)
    if device != DEFAULT_DEVICE:
        kwargs["device"] = const(device)
    if requires_grad:
        kwargs["requires_grad"] = const(True)
    return kwargs


@cache  # (a handful of combinations; nodes are immutable)
def factory_keywords(dtype: str, device: str, requires_grad: bool) -> tuple[ir.Keyword, ...]:
    return tuple(ir.Keyword(k, v) for k, v in factory_kwargs(dtype, device,
                                                             requires_grad).items())


@cache
def shape_args(shape: Shape) -> tuple[ir.Expr, ...]:
    """`shape` as a factory's positional arguments (torch.randn(2, 3))."""
    return tuple(const(n) for n in shape)


def leaf(dice: Dice, state: State, settings: GenSettings, shape: Shape | None = None,
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
    keywords = factory_keywords(dtype, device, requires_grad)
    kind = "positive" if positive else dice.pick(("randn", "literal", "positive")[
        :2 if positive is False else 3])
    if kind == "randn":
        value: ir.Expr = ir.Call(torch_fn("randn"), shape_args(shape), keywords)
    else:
        pool = POSITIVE_NODES if kind == "positive" else VALUE_NODES
        values: list[ir.Expr] = [dice.pick(pool) for _ in range(numel(shape))]
        value = ir.Call(torch_fn("tensor"), (nested_nodes(values, shape),), keywords)
    n, state = state.fresh("x")
    var = Var(n, shape, requires_grad, True, kind == "positive", dtype, device)
    return Emit((assign(n, value),), state.bind(var))


def operand(dice: Dice, state: State, settings: GenSettings, shape: Shape | None,
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
    emit = leaf(dice, state, settings, shape=shape, positive=True if positive else None,
                 dtype=dtype, requires_grad=dice.chance(4, 5))
    return emit.state.vars[-1], emit


def new_result(state: State, out_shape: Shape, inputs: Sequence[Var], positive: bool = False,
            prefix: str = "y") -> tuple[str, State, Var]:
    n, state = state.fresh(prefix)
    var = Var(n, out_shape, any(v.requires_grad for v in inputs), False, positive,
              promoted(*inputs), inputs[0].device, any(v.stale for v in inputs))
    return n, state, var
