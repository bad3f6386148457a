"""The custom autograd.Functions a generated program declares and applies: a library for
reverse mode (`FUNCTIONS`: forward and backward) and one for forward mode (`JVP_FUNCTIONS`:
with a jvp too), both built by `function_class`, and `apply_function`, the piece that applies
one to a recent name, its class statement first where the program has not declared it."""

from __future__ import annotations

from conformance.case import program as ir
from conformance.gen.state import (
    Dice,
    Emit,
    GenSettings,
    State,
    assign,
    attr,
    call,
    const,
    expr_stmt,
    method,
    name,
    new_result,
)


def function_class(src_name: str, forward: tuple[ir.Stmt, ...], backward: tuple[ir.Stmt, ...],
                   jvp: tuple[ir.Stmt, ...] = ()) -> ir.FunctionClass:
    """`class src_name(torch.autograd.Function)` of one input: forward(ctx, x), a
    jvp(ctx, x_t) where `jvp` is given, and backward(ctx, g)."""
    return ir.FunctionClass(src_name, (
        ir.Method("forward", ("ctx", "x"), forward),
        *((ir.Method("jvp", ("ctx", "x_t"), jvp),) if jvp else ()),
        ir.Method("backward", ("ctx", "g"), backward),
    ))


def apply_function(dice: Dice, state: State, library: dict[str, ir.FunctionClass],
                   keeps_positive: frozenset[str]) -> Emit:
    """One of `library`'s Functions applied to a recent name (its class statement comes
    first); its result positive where the input is and the Function is in `keeps_positive`."""
    x = dice.recent(state.vars)
    fn = dice.pick(sorted(library))
    stmts: tuple[ir.Stmt, ...] = ()
    if fn not in state.functions:
        stmts = (library[fn],)
        state = state._replace(functions=state.functions | {fn})
    n, state, var = new_result(state, x.shape, (x,), x.positive and fn in keeps_positive)
    return Emit((*stmts, assign(n, call(attr(name(fn), "apply"), name(x.name)))),
                state.bind(var))


_X, _XT, _G, _CTX = name("x"), name("x_t"), name("g"), name("ctx")

# ---- reverse mode: what each saves decides where its errors fire ---------------------------

FUNCTIONS: dict[str, ir.FunctionClass] = {
    "Square": function_class(
        "Square",
        (expr_stmt(method(_CTX, "save_for_backward", _X)), ir.Return(ir.BinOp("*", _X, _X))),
        (ir.Assign(ir.Tuple((_X,)), attr(_CTX, "saved_tensors")),
         ir.Return(ir.BinOp("*", ir.BinOp("*", const(2.0), _X), _G)))),
    "Double": function_class(
        "Double", (ir.Return(ir.BinOp("*", _X, const(2.0))),),
        (ir.Return(ir.BinOp("*", _G, const(2.0))),)),
    "ExpF": function_class(
        "ExpF",
        (assign("y", method(_X, "exp")),
         expr_stmt(method(_CTX, "save_for_backward", name("y"))),
         ir.Return(name("y"))),
        (ir.Assign(ir.Tuple((name("y"),)), attr(_CTX, "saved_tensors")),
         ir.Return(ir.BinOp("*", _G, name("y"))))),
}


def custom_function(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """A Function of FUNCTIONS applied to a recent name."""
    return apply_function(dice, state, FUNCTIONS, frozenset({"Square", "ExpF"}))


# ---- forward mode: what each saves for its jvp (save_for_forward) decides what the jvp's
# ctx.saved_tensors gives; the backward reads save_for_backward's -----------------------------

_SAVED = ir.Assign(ir.Tuple((name("s"),)), attr(_CTX, "saved_tensors"))
JVP_FUNCTIONS: dict[str, ir.FunctionClass] = {
    "SquareJ": function_class(
        "SquareJ",
        (expr_stmt(method(_CTX, "save_for_backward", _X)),
         expr_stmt(method(_CTX, "save_for_forward", _X)),
         ir.Return(ir.BinOp("*", _X, _X))),
        jvp=(_SAVED, ir.Return(ir.BinOp("*", ir.BinOp("*", const(2.0), name("s")), _XT))),
        backward=(_SAVED, ir.Return(ir.BinOp("*", ir.BinOp("*", const(2.0), name("s")), _G)))),
    "ScaleJ": function_class(
        "ScaleJ", (ir.Return(ir.BinOp("*", _X, const(3.0))),),
        jvp=(ir.Return(ir.BinOp("*", _XT, const(3.0))),),
        backward=(ir.Return(ir.BinOp("*", _G, const(3.0))),)),
    "ExpJ": function_class(
        "ExpJ",
        (assign("y", method(_X, "exp")),
         expr_stmt(method(_CTX, "save_for_backward", name("y"))),
         expr_stmt(method(_CTX, "save_for_forward", name("y"))),
         ir.Return(name("y"))),
        jvp=(_SAVED, ir.Return(ir.BinOp("*", _XT, name("s")))),
        backward=(_SAVED, ir.Return(ir.BinOp("*", _G, name("s"))))),
}


def jvp_function(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """A Function of JVP_FUNCTIONS applied to a dual (in a dual-level block)."""
    return apply_function(dice, state, JVP_FUNCTIONS, frozenset({"ExpJ"}))
