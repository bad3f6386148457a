"""The generator's forward-mode and complex pieces (issue 22): a dual-level block of op
chains whose tangents are observed, and a chain of ops on complex values ending in a real
one.

A forward-mode block is `with fwAD.dual_level():` around: duals of a few names with drawn
tangents (`fwAD.make_dual`), a few pieces on them (registry op chains, views, in-place
ops, a custom Function with a `jvp`), and the tangents of its newest results read with
`fwAD.unpack_dual(...).tangent` into names: the trace compares a name's value, so an
unpacked tangent is what puts a jvp formula under comparison (a dual tensor's snapshot
shows its primal only). Inside the block the pieces see only the duals and what is made
from them, so that every op they draw takes an input that carries a tangent.

The block's statements run under `torch.no_grad()` (forward mode computes tangents whatever
the grad mode): in torch a tangent computed from values that require grad records a graph
of its own (forward-over-reverse: the tangent requires grad, its grad_fn chain holds the
jvp formula's nodes and torch's CppFunction views of the primals), which the reference
engine does not model yet (a probe of 250 programs with the blocks under grad mode: 25
diverged so, at a tangent's requires_grad, grad_fn or graph).

A complex chain makes a complex value (`torch.complex` of two real names, or a complex
literal leaf that requires grad), applies ops of COMPLEX_OPS to it, and ends in a real
value (`abs`, `.real`, `.imag`, `view_as_real`) that joins the state: a later loss's
backward then runs through the complex ops (conjugate Wirtinger gradients), and a complex
leaf's `.grad` is compared.
"""

from __future__ import annotations

from conformance.case import program as ir
from conformance.gen import op_calls, op_table
from conformance.gen.custom_functions import jvp_function
from conformance.gen.pieces import inplace, view
from conformance.gen.state import (
    Dice,
    Emit,
    GenSettings,
    State,
    Var,
    assign,
    attr,
    call,
    const,
    fits_settings,
    leaf,
    method,
    name,
    nested_nodes,
    new_result,
    numel,
    promoted,
    torch_fn,
)

FWAD = name("fwAD")  # torch.autograd.forward_ad, as the case language (and test_autograd) name it
TANGENT_PREFIX = "t"  # the names unpacked tangents are assigned to
COMPLEX_PREFIX = "z"  # complex values: kept out of the state (real pieces never meet them)


def fwad(fn: str, *args: ir.Expr) -> ir.Call:
    return call(attr(FWAD, fn), *args)


# ---- the dual-level block ------------------------------------------------------------------

# Rows whose forward mode the engine does not model alike yet, which the dual-level block
# does not draw (they matter where it draws every row). Found by a dual-level block of each
# drawn row alone on a new dual, every result's tangent unpacked, against torch (h31fwd,
# 2026-11-27, 313 rows: 26 diverged; fixed since: the 9 *_copy ops, logsumexp and
# masked.logsumexp (h31fwd); logcumsumexp, the norm family and diag of a matrix (a tangent's
# version: torch's formula's in-place steps, or set_fw_grad's copy), mse_loss,
# smooth_l1_loss and soft_margin_loss (a reduced loss's storage), linalg.solve (agrees on the
# same probe now) (h32fwd, cases/forward_ad/); ldexp (a ZeroTensor times a Python float
# promotes it as a 0-d tensor) and masked.median (a 0-d dual's tangent is a view of a gather)
# (h33fwd, cases/forward_ad/)). A row whose forward mode is found to diverge goes here, with
# its measured cause, until it is fixed.
FORWARD_PENDING: dict[str, str] = dict.fromkeys(
    ("linalg.slogdet", "slogdet"),
    "its sign's tangent is torch's immutable ZeroTensor (a dual's sign is constant), which "
    "the engine models as plain zeros: an in-place op on the sign or on a value made from it "
    "(rad2deg, a product: still ZeroTensors) raises 'ZeroTensors are immutable' in torch and "
    "succeeds in the engine (the default probe with 310 rows, program 78: `y35 -= 1.0` of "
    "ScaleJ(SquareJ(slogdet(d)[0].rad2deg())), h35gen); no other drawn row's tangent is a "
    "ZeroTensor on its sample (h35gen's scan)")


def _in(rows: frozenset[str] | None, op: op_table.GenOp) -> bool:
    """Whether the block draws `op`: of `rows` where given, never a FORWARD_PENDING row."""
    return (rows is None or op.name in rows) and op.name not in FORWARD_PENDING


def _takes(op: op_table.GenOp, x: Var, settings: GenSettings) -> bool:
    """Whether `op` takes `x` as its first input: of its sample's shape (any for a
    pointwise, broadcasting or reduction op), of its domain's sign, a BLAS product in its
    dtype (see op_table.BLAS_PRODUCTS)."""
    return (op.form != op_table.SAMPLE or op.sample.shapes[0] == x.shape) and (
        x.positive or not op.sample.positive) and (
        op.name not in op_table.BLAS_PRODUCTS or x.dtype == op_table.blas_dtype(settings)
        or op_table.blas_dtype(settings) is None)


def _tangent(dice: Dice, state: State, settings: GenSettings, x: Var
             ) -> tuple[tuple[ir.Stmt, ...], str, State]:
    """A tangent for `x` (of its shape and dtype: torch refuses another): a new leaf kept
    out of the state. make_dual keeps that very tensor as the dual's tangent: a piece that
    wrote it, or made it a primal, would alias a tangent with a primal (torch's in-place
    formulas then read values written in between, which the engine does not model)."""
    emit = leaf(dice, state, settings, shape=x.shape, requires_grad=False, dtype=x.dtype)
    t = emit.state.vars[-1]
    return emit.stmts, t.name, emit.state._replace(vars=emit.state.vars[:-1])


def _new_dual(dice: Dice, state: State, settings: GenSettings, op: op_table.GenOp) -> Emit:
    """A new leaf `op` takes, its tangent, and their dual; the leaves are kept out of the
    state (a partner of an in-place op on the dual would alias it, see _tangent)."""
    shape = op.sample.shapes[0] if op.form == op_table.SAMPLE else None
    dtype = op_table.blas_dtype(settings) if op.name in op_table.BLAS_PRODUCTS else None
    emit = leaf(dice, state, settings, shape=shape, requires_grad=False,
                positive=True if op.sample.positive else None, dtype=dtype)
    x = emit.state.vars[-1]
    stmts, t, state = _tangent(dice, emit.state._replace(vars=state.vars), settings, x)
    d, state = state.fresh("d")
    make = assign(d, fwad("make_dual", name(x.name), name(t)))
    return Emit((*emit.stmts, *stmts, make),
                state.bind(x._replace(name=d, requires_grad=True, leaf=False)))


def _dual_op(dice: Dice, state: State, settings: GenSettings,
             rows: frozenset[str] | None = None) -> Emit:
    """A registry op on a dual (a new one when none fits the op), in any of its forms,
    sometimes with a second op applied to the result in the same statement; of `rows`
    only, where given."""
    op = dice.pick([o for o in op_table.weighted_ops(settings) if _in(rows, o)])
    fit = [v for v in state.vars if not v.leaf and _takes(op, v, settings)]
    stmts: list[ir.Stmt] = []
    if fit:
        x = dice.recent(fit)
    else:
        emit = _new_dual(dice, state, settings, op)
        stmts += emit.stmts
        state = emit.state
        x = state.vars[-1]
    first: Var | None = x
    exprs: dict[str, ir.Expr] = {}
    value: op_calls.OpValue | None = None
    # in place only with another name to be its partner: with the dual alone one_op would
    # take the dual itself (`d.pow_(d)`), see below
    alone = all(v.name == x.name for v in state.vars)
    forms = [f for f in op.forms if not (alone and f == "inplace")] or op.forms
    for form in (dice.pick(forms), None):
        if form is None:  # the second op, nested
            nested: tuple[op_table.GenOp, ...] = tuple(
                o for o in (op_table.nested_ops(settings, value.shape) if value else ())
                if _in(rows, o) and not o.name.endswith("_") and (
                    o.form != op_table.SAMPLE or len(o.sample.shapes) == 1))
            if not nested or dice.chance(1, 2):
                break
            op = dice.pick(nested)
            form = dice.pick(op.nested_forms)
        if form == "inplace":
            # its partner is not the dual it writes (`d.mul_(d)`): torch's in-place formula
            # then reads a tangent it has written already, which the engine does not model
            others = state._replace(vars=tuple(v for v in state.vars if v.name != x.name)
                                    ) if not alone else state  # (an op only in place)
            emit, value = op_calls.one_op(dice, others, settings, op, form, first, exprs)
            if all(v.name != x.name for v in emit.state.vars):  # (a clone was written)
                return Emit((*stmts, *emit.stmts), emit.state.bind(x))
            return Emit((*stmts, *emit.stmts), emit.state)
        emit, value = op_calls.one_op(dice, state, settings, op, form, first, exprs)
        stmts += emit.stmts
        state = emit.state
        assert value is not None  # (an in-place form is a statement of its own, above)
        first = Var(op_calls.CHAINED, value.shape, True, False, False,
                    promoted(*value.inputs), value.inputs[0].device)
        exprs = {op_calls.CHAINED: value.expr}
    assert value is not None
    n, state, var = new_result(state, value.shape, value.inputs)
    return Emit((*stmts, assign(n, value.expr)), state.bind(var._replace(requires_grad=True)))


def dual_block(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """`with fwAD.dual_level():` around duals of one or two names, a few pieces on them, and
    the newest results' tangents (two to four) unpacked into names (see the module
    docstring): the FORWARD table's action."""
    return _dual_block(dice, state, settings, own=False)


def own_dual_block(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """dual_block on a dual of a new leaf (its ops make more), one to four tangents
    unpacked, each piece and each unpack drawn apart (`Dice.parts`): the default profile's
    action, made for shrinking. A block drawn from one seed, on names made before it, could
    not lose its parts one by one nor the actions that made its primals: a wrong mul jvp
    was shrunk to 23 and 24 statements so (h31fwd)."""
    return _dual_block(dice, state, settings, own=True)


def _dual_block(dice: Dice, state: State, settings: GenSettings, *, own: bool) -> Emit:
    stmts: list[ir.Stmt] = []
    body: list[ir.Stmt] = []
    duals: list[Var] = []

    def part() -> Dice | None:
        """The dice of one part of an own block (None: skip it), else the block's."""
        return dice.parts() if own and dice.parts is not None else dice

    for _ in range(1 if own else 1 + dice.below(2)):
        # a name whose tangent, a leaf of its shape, keeps to the settings (a view's shape
        # may not), else a new primal, positive (log, sqrt, div in the block's domain)
        fit = [] if own else [v for v in state.vars if fits_settings(v.shape, settings)]
        if not fit or dice.chance(1, 3):
            emit = leaf(dice, state, settings, positive=True)
            stmts += emit.stmts
            state = emit.state
            fit = [state.vars[-1]]
        x = dice.recent(fit)
        made_t, t, state = _tangent(dice, state, settings, x)
        stmts += made_t
        d, state = state.fresh("d")
        body.append(assign(d, fwad("make_dual", name(x.name), name(t))))
        # inside the block the flag stands for "carries a tangent"
        duals.append(x._replace(name=d, requires_grad=True, leaf=False, stale=False))
    # The pieces see only the names that carry a tangent (the duals and what is made from
    # them), so that they act on those; a leaf one makes (an op's partner) is set aside.
    carrying = State(tuple(duals), state.functions, state.counter)
    made: list[Var] = []
    pieces = (_dual_op, _dual_op, _dual_op, view, inplace, jvp_function)
    for _ in range(1 + dice.below(4)):
        piece_dice = part()
        if piece_dice is None:
            continue
        emit = piece_dice.pick(pieces)(piece_dice, carrying, settings)
        body += emit.stmts
        made += [v for v in emit.state.vars if v.leaf]
        carrying = emit.state._replace(vars=tuple(v for v in emit.state.vars if not v.leaf))
    classes = [s for s in body if isinstance(s, ir.FunctionClass)]
    body = [s for s in body if not isinstance(s, ir.FunctionClass)]
    for v in carrying.vars[-(1 if own else 2) - dice.below(3):]:
        unpack_dice = part()
        if unpack_dice is None:
            continue
        t, carrying = carrying.fresh(TANGENT_PREFIX)
        if unpack_dice.chance(1, 4):  # the named tuple unpacked: primal and tangent
            p, carrying = carrying.fresh("p")
            body.append(ir.Assign(ir.Tuple((name(p), name(t))),
                                  fwad("unpack_dual", name(v.name))))
        else:
            body.append(assign(t, attr(fwad("unpack_dual", name(v.name)), "tangent")))
    # after the block the tangents are gone: the names made in it are ordinary tensors
    # that do not require grad (the block ran under no_grad)
    after = tuple(v._replace(requires_grad=False) for v in (*made, *carrying.vars))
    state = State(state.vars + after, carrying.functions, carrying.counter)
    inner = ir.With(call(torch_fn("no_grad")), tuple(body))
    return Emit((*classes, *stmts, ir.With(call(attr(FWAD, "dual_level")), (inner,))), state)


# ---- complex chains ------------------------------------------------------------------------

# The rows whose complex forward and backward the reference engine computes as torch does
# (ops/basic/complex_numbers.py and the ops it extends; test_gradcheck.py's complex rows): unary
# and broadcasting ops, then reductions to a scalar. Not reciprocal: the engine's complex
# reciprocal is numpy's (1/(0+0j) nan+nanj where torch gives inf+nanj, 1/(0.5+0j) 2-0j
# where torch gives 2+0j: its division kernel), found by the generator, not yet fixed.
COMPLEX_UNARY = ("neg", "exp", "log", "sqrt", "clone", "conj")
COMPLEX_BINARY = ("add", "sub", "mul", "div")
COMPLEX_REDUCTIONS = ("sum", "mean")
COMPLEX_OPS = COMPLEX_UNARY + COMPLEX_BINARY + COMPLEX_REDUCTIONS
BRANCH_CUT = ("log", "sqrt")   # a zero part's sign chooses their value's side of the cut
# a nonzero complex value's parts: log, sqrt, reciprocal and div by it stay finite
_PARTS = (0.5, 1.0, -1.0, 1.5, -0.5, 2.0)
COMPLEX_DTYPE = {"float32": "complex64", "float64": "complex128"}


def _complex_const(dice: Dice) -> ir.Expr:
    """`a + bj` as the case language parses it: a real number and an imaginary one."""
    re, im = dice.pick(_PARTS), dice.pick(_PARTS)
    return ir.BinOp("+" if im > 0 else "-", const(re), const(complex(0, abs(im))))


def _complex_leaf(dice: Dice, state: State, settings: GenSettings
                  ) -> tuple[ir.Expr, str, Emit]:
    """A complex value of a drawn shape: a literal leaf that requires grad, or
    `torch.complex` of two real names (a new leaf's and another's of its shape); with the
    real dtype of its parts."""
    emit = leaf(dice, state, settings)
    x = emit.state.vars[-1]
    if dice.chance(1, 2):
        values = [_complex_const(dice) for _ in range(numel(x.shape))]
        value = call(torch_fn("tensor"), nested_nodes(values, x.shape),
                     dtype=torch_fn(COMPLEX_DTYPE[x.dtype]), requires_grad=const(True))
        return value, x.dtype, Emit((), state)  # the real leaf drawn only for its shape and dtype
    partners = [v for v in emit.state.vars[:-1] if v.shape == x.shape and v.dtype == x.dtype]
    y = dice.recent(partners) if partners and dice.chance(1, 2) else x
    return call(torch_fn("complex"), name(x.name), name(y.name)), x.dtype, emit


def complex_chain(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """A complex value through COMPLEX_OPS, ended by a real value bound in the state."""
    value, dtype, emit = _complex_leaf(dice, state, settings)
    stmts = list(emit.stmts)
    state = emit.state
    z, state = state.fresh(COMPLEX_PREFIX)
    stmts.append(assign(z, value))
    zs = [z]
    negated: set[str] = set()   # the names that descend from a neg
    for _ in range(1 + dice.below(4)):
        op = dice.pick(COMPLEX_UNARY + COMPLEX_BINARY)
        x = name(dice.recent(zs))
        tainted = x.id in negated
        if op in BRANCH_CUT and tainted:
            # torch's complex neg gives a zero part the sign its kernel path gives it: on
            # this CPU (AVX-512) 0 - x in the vectorized loop (+0), -x in its scalar tail
            # (-0), so one tensor holds both (neg of six complex128 zeros: four +0, two
            # -0), and log and sqrt turn that sign into +-pi, +-j (generator_probe.py 100
            # --table COMPLEX, program 65). Not drawn after a neg: exp instead, the same
            # dice (the programs without it stay as they were)
            op = "exp"
        if op in COMPLEX_BINARY:
            other = name(dice.pick(zs)) if dice.chance(2, 3) else _complex_const(dice)
            tainted = tainted or (isinstance(other, ir.Name) and other.id in negated)
            expr = (call(torch_fn(op), x, other) if dice.chance(1, 2) else
                    ir.BinOp({"add": "+", "sub": "-", "mul": "*", "div": "/"}[op], x, other))
        elif dice.chance(1, 2):
            expr = call(torch_fn(op), x)
        else:
            expr = method(x, op)
        if dice.chance(1, 4):
            expr = method(expr, dice.pick(COMPLEX_REDUCTIONS))
        n, state = state.fresh(COMPLEX_PREFIX)
        stmts.append(assign(n, expr))
        zs.append(n)
        if tainted or op == "neg":
            negated.add(n)
    last = name(zs[-1])
    ends: tuple[ir.Expr, ...] = (method(last, "abs"), attr(last, "real"), attr(last, "imag"),
                                 call(torch_fn("view_as_real"), last))
    real = dice.pick(ends)
    r, state = state.fresh("r")
    stmts.append(assign(r, real))
    # the real result's shape: the generator does not follow the chain's reductions, so it
    # binds only a 0-d sum of it (a loss term)
    s, state = state.fresh("y")
    stmts.append(assign(s, method(name(r), "sum")))
    return Emit(tuple(stmts), state.bind(Var(s, (), True, False, False, dtype)))
