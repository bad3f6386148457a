"""Hypothesis strategies that build random autograd Programs.

They build the same IR the YAML cases parse into (`conformance.program`), from small named
pieces, each a function of hypothesis' `draw` and the generator's symbolic `State` (which
names exist, their shapes, whether they require grad, whether their values are positive),
called by the one composite strategy `programs()`. Every `draw` is
labelled. `GenSettings` caps sizes in one place.

The mix is steered, by construction, towards the behaviour that matters: the error paths
(backward twice through freed buffers, modified saved tensors, in-place on leaves and their
views, multi-output views, no_grad) are reached by motifs that set them up on purpose, and
most programs end in a backward or grad call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from hypothesis import strategies as st

from conformance import operators
from conformance import program as ir


@dataclass(frozen=True)
class GenSettings:
    max_rank: int = 3
    max_side: int = 3  # every dimension is 1..max_side
    max_actions: int = 10  # actions after the leaves; a program stays around 12 statements
    devices: tuple[str, ...] = ("cpu",)
    dtypes: tuple[str, ...] = ("float32", "float64")


DEFAULT = GenSettings()
T = TypeVar("T")

# Leaf values: negatives, zeros of both signs, and a spread of magnitudes.
VALUES = (-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 3.0)
POSITIVE_VALUES = (0.5, 0.75, 1.0, 1.5, 2.0)


@dataclass(frozen=True)
class Var:
    name: str
    shape: tuple[int, ...]
    requires_grad: bool
    leaf: bool
    positive: bool = False  # all values > 0: log, sqrt and division by it are safe


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


@dataclass(frozen=True)
class Emit:
    """What a piece adds: statements, and the state after them."""

    stmts: tuple[ir.Stmt, ...]
    state: State


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


def shape_tuple(shape: tuple[int, ...]) -> ir.Tuple:
    return ir.Tuple(tuple(const(n) for n in shape))


def nested(values: list[float], shape: tuple[int, ...]) -> ir.Expr:
    if not shape:
        return const(values[0])
    step = len(values) // shape[0]
    return ir.List(tuple(nested(values[i * step:(i + 1) * step], shape[1:])
                         for i in range(shape[0])))


BOOLS = st.booleans()


@functools.cache
def ints(low: int, high: int) -> st.SearchStrategy[int]:
    """st.integers(low, high), built once per bounds: hypothesis' own strategy cache costs
    more per lookup than the draws it serves here."""
    return st.integers(low, high)


def pick(draw: st.DrawFn, options: Sequence[T], label: str) -> T:
    """One of `options`, shrinking towards the first. An index draw rather than
    sampled_from: the integers strategy is built once and cached, where a sampled_from over
    each state's names would be built and validated anew on every draw."""
    return options[draw(ints(0, len(options) - 1), label=label)]


def literal_values(draw: st.DrawFn, pool: Sequence[float], n: int, label: str
                   ) -> list[float]:
    """n values from `pool` out of ONE draw: a tensor's elements are numerous and rarely
    what a failure hinges on, and one draw per element made up most of the drawing time.
    Shrinks towards every element being pool[0] (0 is drawn as all-first)."""
    code = draw(ints(0, len(pool) ** n - 1), label=label)
    values = []
    for _ in range(n):
        code, i = divmod(code, len(pool))
        values.append(pool[i])
    return values


def numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# ---- leaves ------------------------------------------------------------------------------

def shapes(settings: GenSettings = DEFAULT, min_rank: int = 0) -> st.SearchStrategy[
        tuple[int, ...]]:
    return st.lists(st.integers(1, settings.max_side), min_size=min_rank,
                    max_size=settings.max_rank).map(tuple)


def _leaf(draw: st.DrawFn, state: State, settings: GenSettings = DEFAULT,
         shape: tuple[int, ...] | None = None, requires_grad: bool | None = None) -> Emit:
    """A new leaf: random values, or literal ones including signed zeros."""
    if shape is None:
        shape = draw(shapes(settings), label="leaf shape")
    if requires_grad is None:
        requires_grad = draw(BOOLS, label="leaf requires_grad")
    kwargs: dict[str, ir.Expr] = {}
    dtype = pick(draw, settings.dtypes, "leaf dtype")
    if dtype != settings.dtypes[0]:
        kwargs["dtype"] = torch_fn(dtype)
    device = pick(draw, settings.devices, "leaf device")
    if device != "cpu":
        kwargs["device"] = const(device)
    if requires_grad:
        kwargs["requires_grad"] = const(True)
    kind = pick(draw, ("randn", "literal", "positive"), "leaf values")
    positive = kind == "positive"
    if kind == "randn":
        value: ir.Expr = call(torch_fn("randn"), *(const(n) for n in shape), **kwargs)
    else:
        pool = POSITIVE_VALUES if positive else VALUES
        values = literal_values(draw, pool, numel(shape), "leaf values")
        value = call(torch_fn("tensor"), nested(values, shape), **kwargs)
    n, state = state.fresh("x")
    var = Var(n, shape, requires_grad, leaf=True, positive=positive)
    return Emit((assign(n, value),), state.bind(var))


# ---- ops ---------------------------------------------------------------------------------
# Unary ops: (method name, needs positive input, gives positive output).
UNARY = (("exp", False, True), ("sin", False, False), ("cos", False, False),
         ("tanh", False, False), ("sigmoid", False, True), ("relu", False, False),
         ("neg", False, False), ("abs", False, False), ("log", True, False),
         ("sqrt", True, True))
# Binary operators with a tensor or a Python number: the arithmetic ones (** and @ need
# sign and shape rules the generator does not model).
BINARY = tuple(o.symbol for o in operators.AUGMENTED)


def broadcast_partner(shape: tuple[int, ...], draw: st.DrawFn) -> tuple[int, ...]:
    """A shape that broadcasts against `shape`: trailing dims kept or set to 1."""
    keep = draw(ints(0, len(shape)), label="partner rank")
    tail = shape[len(shape) - keep:]
    return tuple(pick(draw, (s, 1), "partner dim") for s in tail)


def _result(state: State, out_shape: tuple[int, ...], inputs: tuple[Var, ...],
            positive: bool = False, prefix: str = "y") -> tuple[str, State, Var]:
    n, state = state.fresh(prefix)
    var = Var(n, out_shape, any(v.requires_grad for v in inputs), leaf=False, positive=positive)
    return n, state, var


def _unary_op(draw: st.DrawFn, state: State) -> Emit:
    x = pick(draw, state.vars, "unary input")
    choices = [u for u in UNARY if x.positive or not u[1]]
    op, _, positive = pick(draw, choices, "unary op")
    n, state, var = _result(state, x.shape, (x,), positive)
    return Emit((assign(n, method(name(x.name), op)),), state.bind(var))


def _binary_op(draw: st.DrawFn, state: State, settings: GenSettings = DEFAULT) -> Emit:
    x = pick(draw, state.vars, "binary left")
    op = pick(draw, BINARY, "binary op")
    stmts: tuple[ir.Stmt, ...] = ()
    partner_kind = pick(draw, ("number", "var", "new"), "binary right")
    right: ir.Expr
    if partner_kind == "number":
        right = const(pick(draw, (2.0, 0.5, 3.0), "number"))
        out_shape, positive = x.shape, x.positive and op in "*/"
        inputs: tuple[Var, ...] = (x,)
    else:
        candidates = [v for v in state.vars
                      if _broadcasts(v.shape, x.shape) and (op != "/" or v.positive)]
        if partner_kind == "var" and candidates:
            y = pick(draw, candidates, "binary partner")
        else:
            shape = broadcast_partner(x.shape, draw)
            # keep away from division by zero: a new denominator is positive
            emit = (_positive_leaf(draw, state, shape) if op == "/" else
                    _leaf(draw, state, settings, shape=shape))
            stmts, state = emit.stmts, emit.state
            y = state.vars[-1]
        right = name(y.name)
        out_shape = _broadcast(x.shape, y.shape)
        positive = x.positive and y.positive and op in "+*/"
        inputs = (x, y)
    n, state, var = _result(state, out_shape, inputs, positive)
    return Emit((*stmts, assign(n, ir.BinOp(op, name(x.name), right))), state.bind(var))


def _positive_leaf(draw: st.DrawFn, state: State, shape: tuple[int, ...]) -> Emit:
    values = literal_values(draw, POSITIVE_VALUES, numel(shape), "positive values")
    rg = draw(BOOLS, label="positive requires_grad")
    kwargs = {"requires_grad": const(True)} if rg else {}
    n, state = state.fresh("x")
    return Emit((assign(n, call(torch_fn("tensor"), nested(values, shape), **kwargs)),),
                state.bind(Var(n, shape, rg, leaf=True, positive=True)))


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b), strict=False))


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    n = max(len(a), len(b))
    a1, b1 = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a1, b1, strict=False))


def _reduction(draw: st.DrawFn, state: State) -> Emit:
    x = pick(draw, state.vars, "reduction input")
    op = pick(draw, ("sum", "mean", "amax", "prod"), "reduction op")
    args: tuple[ir.Expr, ...] = ()
    kwargs: dict[str, ir.Expr] = {}
    out_shape: tuple[int, ...] = ()
    if x.shape and (op == "amax" or draw(BOOLS, label="reduce a dim")):
        dim = draw(ints(0, len(x.shape) - 1), label="dim")
        keepdim = draw(BOOLS, label="keepdim")
        args = (const(dim),)
        if keepdim:
            kwargs["keepdim"] = const(True)
        out_shape = tuple(1 if i == dim else s for i, s in enumerate(x.shape)) if keepdim \
            else tuple(s for i, s in enumerate(x.shape) if i != dim)
    n, state, var = _result(state, out_shape, (x,), x.positive and op != "sum")
    return Emit((assign(n, method(name(x.name), op, *args, **kwargs)),), state.bind(var))


def _matmul(draw: st.DrawFn, state: State, settings: GenSettings = DEFAULT) -> Emit:
    """x @ w for a new w of compatible shape: 1-D, 2-D and batched operands."""
    ranked = [v for v in state.vars if v.shape]
    if not ranked:
        return _unary_op(draw, state)
    x = pick(draw, ranked, "matmul left")
    k = x.shape[-1]
    rank = draw(ints(1, 2), label="matmul right rank")
    m = draw(ints(1, settings.max_side), label="matmul m")
    w_shape = (k,) if rank == 1 else (k, m)
    emit = _leaf(draw, state, settings, shape=w_shape)
    w = emit.state.vars[-1]
    out = x.shape[:-1] + (() if rank == 1 else (m,))
    n, state, var = _result(emit.state, out, (x, w))
    return Emit((*emit.stmts, assign(n, ir.BinOp("@", name(x.name), name(w.name)))),
                state.bind(var))


def _view(draw: st.DrawFn, state: State) -> Emit:
    """A view (possibly of a view): t, transpose, reshape, unsqueeze, indexing, unbind."""
    x = pick(draw, state.vars, "view input")
    options: list[tuple[str, Callable[[ir.Expr], ir.Expr], tuple[int, ...]]] = [
        ("unsqueeze", lambda e: method(e, "unsqueeze", const(0)), (1, *x.shape)),
        ("reshape", lambda e: method(e, "reshape", const(-1)), (numel(x.shape),)),
    ]
    if len(x.shape) >= 2:
        options.append(("t", lambda e: method(e, "transpose", const(0), const(1)),
                        (x.shape[1], x.shape[0], *x.shape[2:])))
    if x.shape:
        options.append(("select", lambda e: ir.Subscript(e, const(0)), x.shape[1:]))
        options.append(("slice", lambda e: ir.Subscript(e, ir.Slice(const(0), const(1))),
                        (1, *x.shape[1:])))
    _kind, build, out_shape = pick(draw, options, "view kind")
    if x.shape and draw(ints(0, 4), label="multi-output view") == 0:
        n, state = state.fresh("u")
        var = Var(n, x.shape[1:], x.requires_grad, leaf=False, positive=x.positive)
        return Emit((assign(n, ir.Subscript(method(name(x.name), "unbind"), const(0))),),
                    state.bind(var))
    n, state, var = _result(state, out_shape, (x,), x.positive, prefix="v")
    return Emit((assign(n, build(name(x.name))),), state.bind(var))


INPLACE = (("add_", 1.0), ("mul_", 2.0), ("exp_", None), ("zero_", None), ("sin_", None))


def _inplace(draw: st.DrawFn, state: State) -> Emit:
    """An in-place op on any name: leaves, views of leaves and saved tensors included."""
    x = pick(draw, state.vars, "inplace target")
    kind = pick(draw, ("method", "setitem", "augassign"), "inplace kind")
    if kind == "setitem" and x.shape:
        stmt: ir.Stmt = ir.Assign(ir.Subscript(name(x.name), const(0)), const(0.0))
    elif kind == "augassign":
        stmt = ir.AugAssign(name(x.name), "+", const(1.0))
    else:
        op, arg = pick(draw, INPLACE, "inplace op")
        stmt = expr_stmt(method(name(x.name), op, *(() if arg is None else (const(arg),))))
    return Emit((stmt,), state.bind(replace(x, positive=False)))


# ---- autograd actions --------------------------------------------------------------------

def _root(v: Var) -> ir.Expr:
    return name(v.name) if not v.shape else method(name(v.name), "sum")


def _backward(draw: st.DrawFn, state: State) -> Emit:
    targets = state.differentiable() or state.vars
    v = pick(draw, targets, "backward target")
    kwargs: dict[str, ir.Expr] = {}
    if draw(BOOLS, label="retain_graph"):
        kwargs["retain_graph"] = const(True)
    if draw(ints(0, 5), label="create_graph") == 0:
        kwargs["create_graph"] = const(True)
    leaves = state.leaves()
    if leaves and draw(ints(0, 4), label="inputs=") == 0:
        kwargs["inputs"] = ir.List((name(pick(draw, leaves, "input").name),))
    if v.shape != () and draw(BOOLS, label="explicit gradient"):
        gradient = call(torch_fn("ones_like"), name(v.name))
        return Emit((expr_stmt(method(name(v.name), "backward", gradient, **kwargs)),), state)
    return Emit((expr_stmt(method(_root(v), "backward", **kwargs)),), state)


def _autograd_grad(draw: st.DrawFn, state: State) -> Emit:
    """torch.autograd.grad, with allow_unused, and optionally a second-order grad."""
    leaves = state.leaves()
    targets = state.differentiable()
    if not leaves or not targets:
        return _backward(draw, state)
    v = pick(draw, targets, "grad output")
    x = pick(draw, leaves, "grad input")
    create = draw(BOOLS, label="grad create_graph")
    kwargs: dict[str, ir.Expr] = {"allow_unused": const(True)}
    if create:
        kwargs["create_graph"] = const(True)
    if draw(BOOLS, label="grad retain_graph"):
        kwargs["retain_graph"] = const(True)
    if v.shape != () and draw(BOOLS, label="grad_outputs"):
        kwargs["grad_outputs"] = call(torch_fn("ones_like"), name(v.name))
        out: ir.Expr = name(v.name)
    else:
        out = _root(v)
    g, state = state.fresh("g")
    stmts: list[ir.Stmt] = [ir.Assign(ir.Tuple((name(g),)), call(
        torch_fn("autograd.grad"), out, ir.List((name(x.name),)), **kwargs))]
    state = state.bind(Var(g, x.shape, create, leaf=not create))
    if create and draw(BOOLS, label="second order"):
        gg, state = state.fresh("g")
        stmts.append(ir.Assign(ir.Tuple((name(gg),)), call(
            torch_fn("autograd.grad"), method(name(g), "sum"), ir.List((name(x.name),)),
            allow_unused=const(True))))
        state = state.bind(Var(gg, x.shape, False, leaf=True))
    return Emit(tuple(stmts), state)


HOOK_BODIES: tuple[Callable[[ir.Expr], ir.Expr], ...] = (
    lambda g: ir.BinOp("*", g, const(2.0)),
    lambda g: const(None),
    lambda g: ir.BinOp("+", g, const(1.0)),
)


def _hook(draw: st.DrawFn, state: State) -> Emit:
    targets = state.differentiable()
    if not targets:
        return Emit((), state)
    v = pick(draw, targets, "hook target")
    body = pick(draw, HOOK_BODIES, "hook body")
    h, state = state.fresh("h")
    lam = ir.Lambda(("grad",), body(name("grad")))
    stmts: list[ir.Stmt] = [assign(h, method(name(v.name), "register_hook", lam))]
    if draw(ints(0, 3), label="remove hook") == 0:
        stmts.append(expr_stmt(method(name(h), "remove")))
    return Emit(tuple(stmts), state)


def _tensor_state(draw: st.DrawFn, state: State) -> Emit:
    """retain_grad, detach, .data, requires_grad_, and resetting or zeroing .grad."""
    v = pick(draw, state.vars, "state target")
    kind = pick(draw, ("retain_grad", "detach", "data", "data=", "requires_grad_",
                                 "grad=None", "grad.zero_"), "state action")
    if kind == "retain_grad":
        return Emit((expr_stmt(method(name(v.name), "retain_grad")),), state)
    if kind in ("detach", "data"):
        n, state = state.fresh("d")
        value = method(name(v.name), "detach") if kind == "detach" else attr(name(v.name),
                                                                                "data")
        return Emit((assign(n, value),), state.bind(Var(n, v.shape, False, leaf=True,
                                                        positive=v.positive)))
    if kind == "data=":
        new = call(torch_fn("randn"), *(const(s) for s in v.shape))
        return Emit((ir.Assign(attr(name(v.name), "data"), new),),
                    state.bind(replace(v, positive=False)))
    if kind == "requires_grad_":
        flag = draw(BOOLS, label="requires_grad_ flag")
        stmt = expr_stmt(method(name(v.name), "requires_grad_", const(flag)))
        return Emit((stmt,), state.bind(replace(v, requires_grad=flag or v.requires_grad)))
    if kind == "grad=None":
        return Emit((ir.Assign(attr(name(v.name), "grad"), const(None)),), state)
    return Emit((expr_stmt(method(attr(name(v.name), "grad"), "zero_")),), state)


def _grad_mode_block(draw: st.DrawFn, state: State) -> Emit:
    """`with torch.no_grad():` (or enable_grad inside it) around an op or in-place op."""
    body: list[ir.Stmt] = []
    inner = state
    for _ in range(draw(ints(1, 2), label="block size")):
        piece = pick(draw, (_unary_op, _inplace, _view), "block statement")
        emit = piece(draw, inner)
        body += emit.stmts
        inner = emit.state
    # results made here do not require grad (no_grad); the generator's record is a guess
    # for enable_grad blocks, which only steers later draws
    mode = pick(draw, ("no_grad", "enable_grad"), "grad mode")
    block = ir.With(call(torch_fn(mode)), tuple(body))
    if mode == "enable_grad":
        block = ir.With(call(torch_fn("no_grad")), (block,))
    else:
        inner = replace(inner, vars=tuple(
            v if v in state.vars else replace(v, requires_grad=False) for v in inner.vars))
    return Emit((block,), inner)


def _loop(draw: st.DrawFn, state: State) -> Emit:
    """`for i in range(2):` around a backward that keeps the graph (grads accumulate)."""
    targets = state.differentiable()
    if not targets:
        return Emit((), state)
    v = pick(draw, targets, "loop target")
    body = expr_stmt(method(_root(v), "backward", retain_graph=const(True)))
    return Emit((ir.For("i", (const(2),), (body,)),), state)


def _shape_assert(draw: st.DrawFn, state: State) -> Emit:
    v = pick(draw, state.vars, "assert target")
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


def _custom_function(draw: st.DrawFn, state: State) -> Emit:
    x = pick(draw, state.vars, "function input")
    fn = pick(draw, sorted(FUNCTIONS), "function")
    stmts: tuple[ir.Stmt, ...] = ()
    if fn not in state.functions:
        stmts = (FUNCTIONS[fn],)
        state = replace(state, functions=state.functions | {fn})
    n, state, var = _result(state, x.shape, (x,), x.positive and fn != "Double")
    apply = call(attr(name(fn), "apply"), name(x.name))
    return Emit((*stmts, assign(n, apply)), state.bind(var))


# ---- motifs: error paths reached on purpose ---------------------------------------------

def _backward_twice(draw: st.DrawFn, state: State) -> Emit:
    """A loss through ops that save tensors, backwarded twice (the second may fail)."""
    stmts_before: tuple[ir.Stmt, ...] = ()
    if not state.differentiable():
        emit = _leaf(draw, state, requires_grad=True)
        stmts_before, state = emit.stmts, emit.state
    base = pick(draw, state.differentiable(), "twice base")
    loss, state = state.fresh("loss")
    saver = pick(draw, ("square", "exp", "mul"), "twice saver")
    x = name(base.name)
    savers: dict[str, ir.Expr] = {"square": ir.BinOp("**", x, const(2)),
                                  "exp": method(x, "exp"), "mul": ir.BinOp("*", x, x)}
    value = savers[saver]
    first = {} if draw(ints(0, 3), label="twice retain") else {
        "retain_graph": const(True)}
    stmts = (*stmts_before, assign(loss, method(value, "sum")),
             expr_stmt(method(name(loss), "backward", **first)),
             expr_stmt(method(name(loss), "backward")))
    return Emit(stmts, state.bind(Var(loss, (), base.requires_grad, leaf=False)))


def _modify_saved(draw: st.DrawFn, state: State, settings: GenSettings = DEFAULT) -> Emit:
    """An op saves a tensor, the tensor is modified in place, then backward runs."""
    emit = _leaf(draw, state, settings, requires_grad=True)
    state = emit.state
    x0 = state.vars[-1]
    a, state = state.fresh("a")
    s, state = state.fresh("s")
    saver = pick(draw, ("exp", "mul", "sin", "pow"), "saver op")
    savers: dict[str, ir.Expr] = {
        "exp": method(name(a), "exp"), "mul": ir.BinOp("*", name(a), name(a)),
        "sin": method(name(a), "sin"), "pow": ir.BinOp("**", name(a), const(2))}
    value = savers[saver]
    modified = name(s) if saver == "exp" and draw(BOOLS, label="modify output") \
        else name(a)
    op = pick(draw, ("add_", "mul_"), "modify op")
    stmts = (*emit.stmts,
             assign(a, ir.BinOp("*", name(x0.name), const(1.0))),
             assign(s, value),
             expr_stmt(method(modified, op, const(2.0))),
             expr_stmt(method(method(name(s), "sum"), "backward")))
    state = state.bind(Var(a, x0.shape, True, leaf=False)).bind(
        Var(s, x0.shape, True, leaf=False))
    return Emit(stmts, state)


# ---- programs ----------------------------------------------------------------------------

Piece = Callable[[st.DrawFn, State], Emit]
ACTIONS: dict[str, Piece] = {
    "unary": _unary_op, "binary": _binary_op, "reduction": _reduction, "matmul": _matmul,
    "view": _view, "inplace": _inplace, "backward": _backward, "grad": _autograd_grad,
    "hook": _hook, "state": _tensor_state, "grad_mode": _grad_mode_block, "loop": _loop,
    "assert": _shape_assert, "function": _custom_function, "backward_twice": _backward_twice,
    "modify_saved": _modify_saved, "leaf": lambda draw, s: _leaf(draw, s),
}
# Draw weights (repetitions in the sampled list); ops dominate, motifs are frequent enough
# to reach their error paths in a good share of programs.
WEIGHTS = {"unary": 4, "binary": 4, "reduction": 2, "matmul": 2, "view": 3, "inplace": 2,
           "backward": 3, "grad": 2, "hook": 2, "state": 2, "grad_mode": 1, "loop": 1,
           "assert": 1, "function": 1, "backward_twice": 1, "modify_saved": 1, "leaf": 1}
WEIGHTED_ACTIONS = tuple(a for a, w in WEIGHTS.items() for _ in range(w))


@st.composite
def programs(draw: st.DrawFn, settings: GenSettings = DEFAULT) -> ir.Program:
    """A random program: a few leaves, then ops and autograd actions, often a final
    backward."""
    state = State()
    stmts: list[ir.Stmt] = []
    # Every part may shrink away (an action with nothing to act on draws a leaf first), so
    # a failing program shrinks to the few statements its failure needs.
    # "One more?" draws rather than a drawn count: the shrinker deletes an unneeded part
    # together with its "more" draw, where a count would tie every later draw to it.
    for _ in range(2):
        if not draw(ints(0, 1), label="another leaf"):
            break
        emit = _leaf(draw, state, settings)
        stmts += emit.stmts
        state = emit.state
    for _ in range(settings.max_actions):
        if not draw(ints(0, 3), label="another action"):
            break
        if not state.vars:
            emit = _leaf(draw, state, settings)
            stmts += emit.stmts
            state = emit.state
        action = pick(draw, WEIGHTED_ACTIONS, "action")
        emit = ACTIONS[action](draw, state)
        stmts += emit.stmts
        state = emit.state
    if draw(ints(0, 9), label="motif") < 4:
        motif = pick(draw, ("modify_saved", "backward_twice"), "motif kind")
        emit = ACTIONS[motif](draw, state)
        stmts += emit.stmts
        state = emit.state
    if not state.vars:
        emit = _leaf(draw, state, settings)
        stmts += emit.stmts
        state = emit.state
    if draw(ints(0, 9), label="final backward") < 8:
        emit = _backward(draw, state)
        stmts += emit.stmts
    # Function classes first: a class statement defines a name later statements call.
    classes = tuple(s for s in stmts if isinstance(s, ir.FunctionClass))
    rest = tuple(s for s in stmts if not isinstance(s, ir.FunctionClass))
    return ir.Program(classes + rest)
