"""The piece that draws one registry op (often a short chain of them) into a statement:
its inputs, its form (function, method, in place, operator), its arguments, and the
generator's state after it. The ops and how each is called come from the op table,
`conformance.gen.op_table`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from conformance.case import program as ir
from conformance.gen.op_table import (
    AUGMENTED,
    BLAS_PRODUCTS,
    BROADCAST,
    OPERATOR_OF,
    POINTWISE,
    REDUCTION,
    GenOp,
    blas_dtype,
    broadcast_shape,
    broadcasts,
    nested_ops,
    weighted_ops,
)
from conformance.gen.state import (
    Dice,
    Emit,
    GenSettings,
    Shape,
    State,
    Var,
    assign,
    call,
    const,
    expr_stmt,
    leaf,
    method,
    name,
    new_result,
    operand,
    promoted,
    torch_fn,
)


def _prepare_target(dice: Dice, state: State, x: Var) -> tuple[Var, Emit]:
    """The name an in-place form writes: mostly a clone when `x` is a leaf that requires
    grad, or an older name that ops made since may have saved (the in-place-on-leaf and
    modified-saved-tensor errors stay reachable a quarter of the time; the motifs reach
    the latter on purpose), so that most in-place ops are in a graph a backward completes."""
    safe = not (x.leaf and x.requires_grad) and (x.leaf or x == state.vars[-1])
    if safe or dice.chance(1, 4):
        return x, Emit((), state)
    n, state, var = new_result(state, x.shape, (x,), x.positive, prefix="c")
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
class OpValue:
    """An op's result before it is named: its expression, shape and inputs."""

    expr: ir.Expr
    shape: Shape
    inputs: tuple[Var, ...]


CHAINED = "<chained>"  # the name a nested op's input has while it is an expression


def registry_op(dice: Dice, state: State, settings: GenSettings) -> Emit:
    """One registry op in one of its forms, often with one or two more applied to its
    result in the same statement (`y = torch.sin(x).exp()`): more ops per statement, and a
    longer chain for a backward to go through."""
    op = dice.pick(weighted_ops(settings))
    form = dice.pick(op.forms)
    stmts: list[ir.Stmt] = []
    exprs: dict[str, ir.Expr] = {}
    first: Var | None = None
    value: OpValue | None = None
    for _ in range(4):
        emit, value = one_op(dice, state, settings, op, form, first, exprs)
        stmts.extend(emit.stmts)
        state = emit.state
        if value is None:  # an in-place form: a statement of its own
            return Emit(tuple(stmts), state)
        requires = any(v.requires_grad for v in value.inputs)
        first = Var(CHAINED, value.shape, requires, False, False, promoted(*value.inputs),
                    value.inputs[0].device, any(v.stale for v in value.inputs))
        exprs = {CHAINED: value.expr}
        nested = nested_ops(settings, value.shape)
        if not nested or dice.chance(1, 4):
            break
        op = dice.pick(nested)
        form = dice.pick(op.nested_forms)
        if op.name.endswith("_"):
            break
    assert value is not None
    n, state, var = new_result(state, value.shape, value.inputs)
    return Emit((*stmts, assign(n, value.expr)), state.bind(var))



def one_op(dice: Dice, state: State, settings: GenSettings, op: GenOp, form: str,
            first: Var | None, exprs: dict[str, ir.Expr]) -> tuple[Emit, OpValue | None]:
    """`op` called in `form`, on `first` (when nested) and inputs drawn for it; an in-place
    form's statement, or the call as a value (None for the Emit's statements then)."""
    positive = op.sample.positive
    stmts: list[ir.Stmt] = []

    def take(shape: Shape | None, dtype: str | None = None) -> Var:
        nonlocal state, first
        if first is not None:
            var, first = first, None
            return var
        var, emit = operand(dice, state, settings, shape, positive, dtype)
        stmts.extend(emit.stmts)
        state = emit.state
        return var

    args: Sequence[ir.Expr] = ()
    kwargs: dict[str, ir.Expr] = {}
    index: int | None = None
    if op.form == POINTWISE:
        inputs = [take(None)]
        args = op.arg_exprs(inputs[0].dtype)
        # (several results of the input's shape: frexp's mantissa and exponent)
        out_shapes: tuple[Shape, ...] = (inputs[0].shape,) * len(op.outputs)
    elif op.form == BROADCAST:
        x = take(None)
        if form == "operator" and op.name != "pow" and dice.chance(1, 4):
            # a Python number as the right operand (MulBackward1 and the like)
            number = const(dice.pick((2.0, 0.5, 3.0)))
            with_number = ir.BinOp(OPERATOR_OF[op.name], exprs.get(x.name, name(x.name)), number)
            return Emit(tuple(stmts), state), OpValue(with_number, x.shape, (x,))
        # a partner of x's dtype: a float32 result promoted into a float64 one would be
        # compared at float64's tolerance, where float32 rounding (BLAS' summation order)
        # is not the engine's to match
        fit = [v for v in state.vars if broadcasts(v.shape, x.shape) and v.dtype == x.dtype
               and (v.positive or not positive)
               and (form != "inplace" or broadcast_shape(x.shape, v.shape) == x.shape)]
        if fit and dice.chance(1, 2):
            y = dice.recent(fit)
        else:
            partner = broadcast_partner(x.shape, dice, settings)
            if form != "inplace" and len(x.shape) < settings.rank and dice.chance(1, 4):
                # a partner of higher rank broadcasts x
                partner = (1 + dice.below(settings.side),
                           *(1 if n > settings.max_side else n for n in x.shape))
            emit = leaf(dice, state, settings, shape=partner,
                         positive=True if positive else None, dtype=x.dtype)
            stmts.extend(emit.stmts)
            state = emit.state
            y = state.vars[-1]
        inputs = [x, y]
        out_shapes = (broadcast_shape(x.shape, y.shape),) * len(op.outputs)  # broadcast_tensors
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
        inputs = [take(op.sample.shapes[0], blas_dtype(settings) if op.name in BLAS_PRODUCTS
                       else None)]
        inputs += [take(s, inputs[0].dtype) for s in op.sample.shapes[1:]]
        args = op.arg_exprs(inputs[0].dtype)
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
        written = target._replace(shape=out_shapes[0], positive=False,
                          requires_grad=any(v.requires_grad for v in inputs))
        return Emit((*stmts, stmt), state.bind(written)), None
    value: ir.Expr = _op_call(op, form, inputs, args, kwargs, exprs)
    if index is None:  # one of its floating results (see GenOp.floating)
        index = dice.pick(op.floating or range(len(out_shapes)))
    if len(out_shapes) > 1:
        value = ir.Subscript(value, const(index))
    return Emit(tuple(stmts), state), OpValue(value, out_shapes[index], tuple(inputs))


def broadcast_partner(shape: Shape, dice: Dice, settings: GenSettings) -> Shape:
    """A shape that broadcasts against `shape` and fits `settings` (a view's result may not):
    trailing dims kept or set to 1."""
    keep = dice.below(min(len(shape), settings.max_rank) + 1)
    tail = shape[len(shape) - keep:]
    return tuple(s if s <= settings.max_side and dice.chance(2, 3) else 1 for s in tail)


