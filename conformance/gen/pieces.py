"""The pieces of a generated program, each a function of a `Dice` (the action's random
choices), the generator's symbolic `State` and the `GenSettings` that emits the statements of
one action: a matmul, a view, an in-place op, a backward or grad call, a hook, a tensor's
state, a grad-mode block, a loop, a shape assert, the error-path motifs
(backward twice, a saved tensor modified), a new leaf. `conformance.gen.strategies` lays
them out as the rows of its table `ACTIONS`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from conformance.case import program as ir
from conformance.gen.op_calls import registry_op
from conformance.gen.op_table import AUGMENTED, blas_dtype
from conformance.gen.state import (
    Dice,
    Emit,
    GenSettings,
    Shape,
    State,
    Var,
    assign,
    attr,
    call,
    const,
    expr_stmt,
    factory_kwargs,
    fits_settings,
    leaf,
    method,
    name,
    new_result,
    numel,
    shape_tuple,
    torch_fn,
)


def matmul(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """x @ w for a new w of compatible shape: 1-D, 2-D and batched operands."""
    dtype = blas_dtype(settings)  # (see op_table.BLAS_PRODUCTS)
    ranked = [v for v in state.vars if v.shape and v.shape[-1] <= settings.side
              and dtype in (None, v.dtype)]
    if not ranked or settings.rank < 1:
        return registry_op(dice, state, settings)
    x = dice.recent(ranked)
    k = x.shape[-1]
    rank = 1 if settings.rank < 2 else 1 + dice.below(2)
    m = 1 + dice.below(settings.side)
    w_shape = (k,) if rank == 1 else (k, m)
    emit = leaf(dice, state, settings, shape=w_shape, dtype=x.dtype)
    w = emit.state.vars[-1]
    out = x.shape[:-1] + (() if rank == 1 else (m,))
    n, state, var = new_result(emit.state, out, (x, w))
    return Emit((*emit.stmts, assign(n, ir.BinOp("@", name(x.name), name(w.name)))),
                state.bind(var))


def view(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """A view (possibly of a view): transpose, reshape, unsqueeze, indexing, unbind."""
    x = dice.recent(state.vars)
    options: list[tuple[Callable[[ir.Expr], ir.Expr], Shape]] = [
        (lambda e: method(e, "reshape", const(-1)), (numel(x.shape),)),
    ]
    if len(x.shape) < settings.rank:
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
        var = x._replace(name=n, shape=x.shape[1:], leaf=False)
        return Emit((assign(n, ir.Subscript(method(name(x.name), "unbind"), const(0))),),
                    state.bind(var))
    n, state = state.fresh("v")
    var = x._replace(name=n, shape=out_shape, leaf=False)
    return Emit((assign(n, build(name(x.name))),), state.bind(var))


def inplace(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """An in-place write on any name, leaves and views of leaves included: setitem and
    augmented assignment with a number (the registry ops' in-place forms are drawn by
    `registry_op`)."""
    x = dice.recent(state.vars)
    if x.shape and dice.chance(1, 2):
        stmt: ir.Stmt = ir.Assign(ir.Subscript(name(x.name), const(0)), const(0.0))
    else:
        stmt = ir.AugAssign(name(x.name), dice.pick(sorted(AUGMENTED - {"/"})), const(1.0))
    return Emit((stmt,), state.bind(x._replace(positive=False)))


# ---- autograd actions --------------------------------------------------------------------

def _root(v: Var) -> ir.Expr:
    return name(v.name) if not v.shape else method(name(v.name), "sum")


FINAL_TERMS = 32  # results summed into the final losses at most
LOSS_TERMS = 6  # ... into one of them
GRAD_PREFIX = "g"  # the names of autograd.grad's results


def _live_results(state: State) -> list[Var]:
    """The results a loss may sum: they require grad, hang from no freed graph, and are not
    a gradient autograd.grad returned (None where its input was unused)."""
    return [v for v in state.differentiable() if not v.leaf and not v.stale
            and not v.name.startswith(GRAD_PREFIX)]


def _loss(terms: Sequence[Var]) -> ir.Expr:
    loss: ir.Expr = _root(terms[0])
    for v in terms[1:]:
        loss = ir.BinOp("+", loss, _root(v))
    return loss


def backward(dice: Dice, state: State, settings: GenSettings) -> Emit:
    targets = state.differentiable() or state.vars
    v = dice.recent(targets)
    kwargs: dict[str, ir.Expr] = {}
    if dice.chance(1, 2):
        kwargs["retain_graph"] = const(True)
    if dice.chance(1, 6):
        kwargs["create_graph"] = const(True)
    # a backward that frees the graph leaves every result so far out of later losses: half
    # the time its root is a loss over the newest results too (their gradients compared)
    terms = _live_results(state)[-LOSS_TERMS:] if not kwargs and dice.chance(1, 2) else []
    if not kwargs:
        state = state.backwarded()  # retain_graph or create_graph keep the graph
    if len(terms) > 1:
        return Emit((expr_stmt(method(_loss(terms), "backward")),), state)
    leaves = state.leaves()
    if leaves and dice.chance(1, 5):
        kwargs["inputs"] = ir.List((name(dice.pick(leaves).name),))
    if v.shape != () and dice.chance(1, 2):
        gradient = call(torch_fn("ones_like"), name(v.name))
        return Emit((expr_stmt(method(name(v.name), "backward", gradient, **kwargs)),), state)
    return Emit((expr_stmt(method(_root(v), "backward", **kwargs)),), state)




def final_backward(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """A program's last backward: often of losses summing the newest results that require
    grad (as training code sums its terms), so the gradients of many chains of ops are
    compared at once; several losses of at most LOSS_TERMS terms each (all but the last
    retain the graph they share), so that one term whose backward fails (an input modified
    in place since) leaves the other losses' gradients compared."""
    results = _live_results(state)
    if not results or dice.chance(1, 12):
        return backward(dice, state, settings)
    results = results[-FINAL_TERMS:]
    groups = [results[i:i + LOSS_TERMS] for i in range(0, len(results), LOSS_TERMS)]
    stmts = []
    for i, terms in enumerate(groups):
        last = i == len(groups) - 1
        kwargs = {"retain_graph": const(True)} if not last or dice.chance(1, 2) else {}
        stmts.append(expr_stmt(method(_loss(terms), "backward", **kwargs)))
    return Emit(tuple(stmts), state)


def autograd_grad(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """torch.autograd.grad, with allow_unused and materialize_grads, and optionally a
    second-order grad. The generator does not track which leaves a result depends on, so
    the grad of an unused leaf must be zeros, not None: later statements use it as a
    tensor (a None there made torch and the engine fail with different errors)."""
    leaves = state.leaves()
    targets = state.differentiable()
    if not leaves or not targets:
        return backward(dice, state, settings)
    v = dice.recent(targets)
    x = dice.pick(leaves)
    create = dice.chance(1, 2)
    state = state.backwarded()
    kwargs: dict[str, ir.Expr] = {"allow_unused": const(True),
                                  "materialize_grads": const(True)}
    if create:
        kwargs["create_graph"] = const(True)
    if dice.chance(1, 2):
        kwargs["retain_graph"] = const(True)
    if v.shape != () and dice.chance(1, 2):
        kwargs["grad_outputs"] = call(torch_fn("ones_like"), name(v.name))
        out: ir.Expr = name(v.name)
    else:
        out = _root(v)
    g, state = state.fresh(GRAD_PREFIX)
    stmts: list[ir.Stmt] = [ir.Assign(ir.Tuple((name(g),)), call(
        torch_fn("autograd.grad"), out, ir.List((name(x.name),)), **kwargs))]
    state = state.bind(x._replace(name=g, requires_grad=create, leaf=not create,
                                  positive=False))
    if create and dice.chance(1, 2):
        gg, state = state.fresh(GRAD_PREFIX)
        stmts.append(ir.Assign(ir.Tuple((name(gg),)), call(
            torch_fn("autograd.grad"), method(name(g), "sum"), ir.List((name(x.name),)),
            allow_unused=const(True), materialize_grads=const(True))))
        state = state.bind(x._replace(name=gg, requires_grad=False, leaf=True,
                                      positive=False))
    return Emit(tuple(stmts), state)


HOOK_BODIES: tuple[Callable[[ir.Expr], ir.Expr], ...] = (
    lambda g: ir.BinOp("*", g, const(2.0)),
    lambda g: const(None),
    lambda g: ir.BinOp("+", g, const(1.0)),
)


def hook(dice: Dice, state: State, settings: GenSettings) -> Emit:
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


def tensor_state(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """retain_grad, detach, .data, requires_grad_, and resetting or zeroing .grad."""
    v = dice.recent(state.vars)
    kind = dice.pick(("retain_grad", "detach", "data", "data=", "requires_grad_",
                      "grad=None", "grad.zero_"))
    if kind == "retain_grad":
        return Emit((expr_stmt(method(name(v.name), "retain_grad")),), state)
    if kind == "data=" and fits_settings(v.shape, settings):
        # new values of the same shape, dtype and device (the settings' own)
        new = call(torch_fn("randn"), *(const(s) for s in v.shape),
                   **factory_kwargs(v.dtype, v.device, False))
        return Emit((ir.Assign(attr(name(v.name), "data"), new),),
                    state.bind(v._replace(positive=False)))
    if kind in ("detach", "data", "data="):
        n, state = state.fresh("d")
        value = method(name(v.name), "detach") if kind == "detach" else attr(name(v.name),
                                                                                "data")
        return Emit((assign(n, value),), state.bind(v._replace(name=n, requires_grad=False,
                                                               leaf=True)))
    if kind == "requires_grad_":
        flag = dice.chance(1, 2)
        stmt = expr_stmt(method(name(v.name), "requires_grad_", const(flag)))
        return Emit((stmt,), state.bind(v._replace(requires_grad=flag or v.requires_grad)))
    if kind == "grad=None":
        return Emit((ir.Assign(attr(name(v.name), "grad"), const(None)),), state)
    return Emit((expr_stmt(method(attr(name(v.name), "grad"), "zero_")),), state)


def grad_mode_block(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """`with torch.no_grad():` (or enable_grad inside it) around an op or in-place op."""
    body: list[ir.Stmt] = []
    inner = state
    for _ in range(1 + dice.below(2)):
        piece = dice.pick((registry_op, inplace, view))
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
        inner = inner._replace(vars=tuple(
            v if v in state.vars else v._replace(requires_grad=False) for v in inner.vars))
    return Emit((block,), inner)


def loop(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """`for i in range(2):` around a backward that keeps the graph (grads accumulate)."""
    targets = state.differentiable()
    if not targets:
        return Emit((), state)
    v = dice.recent(targets)
    body = expr_stmt(method(_root(v), "backward", retain_graph=const(True)))
    return Emit((ir.For("i", (const(2),), (body,)),), state)


def shape_assert(dice: Dice, state: State, settings: GenSettings) -> Emit:
    v = dice.recent(state.vars)
    test = ir.Compare(attr(name(v.name), "shape"), ("==",), (shape_tuple(v.shape),))
    return Emit((ir.Assert(test),), state)


# ---- motifs: error paths reached on purpose ---------------------------------------------

def backward_twice(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """A loss through ops that save tensors, backwarded twice (the second may fail)."""
    stmts_before: tuple[ir.Stmt, ...] = ()
    if not state.differentiable():
        emit = leaf(dice, state, settings, requires_grad=True)
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
        base._replace(name=loss, shape=(), leaf=False, stale=True)))


def modify_saved(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """An op saves a tensor, the tensor is modified in place, then backward runs."""
    emit = leaf(dice, state, settings, requires_grad=True)
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
    state = state.bind(x0._replace(name=a, leaf=False, positive=False, stale=True)).bind(
        x0._replace(name=s, leaf=False, positive=False, stale=True))
    return Emit(stmts, state)


def new_leaf(dice: Dice, state: State, settings: GenSettings) -> Emit:
    return leaf(dice, state, settings)


# ---- the action table --------------------------------------------------------------------

Piece = Callable[[Dice, State, GenSettings], Emit]
