"""The Program: the one intermediate form of a case program.

YAML cases are parsed into it (`language.parse`), hypothesis strategies build it directly,
and `language.to_source` prints it back. Nodes are frozen dataclasses so programs compare
by value; source positions are carried for messages but excluded from equality, so that
`parse(to_source(p)) == p` holds.
"""

from __future__ import annotations

import ast
import sys
import types
from dataclasses import dataclass, field
from typing import Any

from conformance.case import operators

# Ellipsis only as an index (`x[..., 0]`); the parser admits it nowhere else.
Scalar = int | float | complex | bool | str | None | types.EllipsisType


@dataclass(frozen=True)
class Const:
    value: Scalar


@dataclass(frozen=True)
class Name:
    id: str


@dataclass(frozen=True)
class Attribute:
    value: Expr
    attr: str


@dataclass(frozen=True)
class Keyword:
    name: str
    value: Expr


@dataclass(frozen=True)
class Call:
    func: Expr
    args: tuple[Expr, ...] = ()
    keywords: tuple[Keyword, ...] = ()


@dataclass(frozen=True)
class Slice:
    lower: Expr | None = None
    upper: Expr | None = None
    step: Expr | None = None


@dataclass(frozen=True)
class Subscript:
    value: Expr
    index: Expr


@dataclass(frozen=True)
class Tuple:
    elts: tuple[Expr, ...]


@dataclass(frozen=True)
class List:
    elts: tuple[Expr, ...]


@dataclass(frozen=True)
class Dict:
    """A dict display `{k: v, ...}` (no `**` unpacking): a structure of tensors a function
    takes or returns (test_checkpointing_without_reentrant_arbitrary_input_output)."""
    keys: tuple[Expr, ...]
    values: tuple[Expr, ...]


@dataclass(frozen=True)
class BinOp:
    op: str  # one of expressions.BINARY_OPS
    left: Expr
    right: Expr


@dataclass(frozen=True)
class UnaryOp:
    op: str  # "-", "+" or "not"
    operand: Expr


@dataclass(frozen=True)
class Compare:
    left: Expr
    ops: tuple[str, ...]  # one of expressions.COMPARE_OPS each
    comparators: tuple[Expr, ...]


@dataclass(frozen=True)
class BoolOp:
    op: str  # "and" or "or"
    values: tuple[Expr, ...]


@dataclass(frozen=True)
class Lambda:
    params: tuple[str, ...]
    body: Expr
    # Where the lambda stands; names the hook in traces.
    line: int = field(default=0, compare=False)
    col: int = field(default=0, compare=False)


Expr = (Const | Name | Attribute | Call | Slice | Subscript | Tuple | List | Dict | BinOp
        | UnaryOp | Compare | BoolOp | Lambda)


@dataclass(frozen=True)
class Assign:
    target: Expr  # Name, Tuple of targets, Subscript, or Attribute in api.SETTABLE
    value: Expr
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class AugAssign:
    target: Expr  # Name or Subscript
    op: str
    value: Expr
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class ExprStmt:
    value: Expr
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Assert:
    test: Expr
    msg: Expr | None = None
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class With:
    context: Expr
    body: tuple[Stmt, ...]
    name: str | None = None  # `with CONTEXT as NAME:` binds what entering it returned
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Raise:
    """`raise E` or `raise E(...)`: E an exception class of the case language (a builtin of
    api.EXCEPTIONS or a class the program derives from one), or an instance of one."""

    exc: Expr
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class For:
    var: str
    range_args: tuple[Expr, ...]  # the arguments of range(...); () when `items` is given
    body: tuple[Stmt, ...]
    line: int = field(default=0, compare=False)
    # `for NAME in (a, b, ...)`: the elements of the tuple or list written in the program,
    # evaluated once before the first iteration, as Python does; None for a range loop
    items: tuple[Expr, ...] | None = None


@dataclass(frozen=True)
class Return:
    value: Expr | None
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Method:
    name: str  # "forward" or "backward"
    params: tuple[str, ...]
    body: tuple[Stmt, ...]
    decorators: tuple[str, ...] = ("staticmethod",)
    # forward's default values, literals, for its last parameters (`def forward(x, y=3)`):
    # torch's apply binds them into setup_context's inputs
    defaults: tuple[Const, ...] = ()
    line: int = field(default=0, compare=False)


# torch's newer Function style: `forward(*inputs)` without ctx, and `setup_context(ctx,
# inputs, output)` to fill ctx from them.
SETUP_CONTEXT = "setup_context"


def method_has_ctx(name: str, class_has_setup_context: bool) -> bool:
    """Whether a Function method's first parameter is ctx (all but a forward paired with
    setup_context)."""
    return not (class_has_setup_context and name == "forward")


@dataclass(frozen=True)
class FunctionClass:
    """`class Name(torch.autograd.Function)` with static forward and backward."""

    name: str
    methods: tuple[Method, ...]
    # class attributes torch's Function reads (FUNCTION_CLASS_ATTRIBUTES), each a bool:
    # `clear_saved_tensors_on_access = True`
    attributes: tuple[tuple[str, bool], ...] = ()
    line: int = field(default=0, compare=False)


# The class attributes a Function class may set: flags torch's Function reads from the class
# (torch/autograd/function.py), never the engine's own names (apply, _backward_cls, ...).
FUNCTION_CLASS_ATTRIBUTES = frozenset({"clear_saved_tensors_on_access"})


@dataclass(frozen=True)
class Def:
    """`def name(params):` at the top level: a function of the program's own (a hook that
    needs statements, `raise` among them), whose body runs as a Function method's does.
    `vararg` and `kwarg` name its `*args` and `**kwargs` parameters, if it has them (a
    selective-checkpoint policy is called with each op's arguments)."""

    name: str
    params: tuple[str, ...]
    body: tuple[Stmt, ...]
    line: int = field(default=0, compare=False)
    vararg: str | None = None
    kwarg: str | None = None
    # literal values of its last parameters (`def fn(x, retain=True)`), as a method's
    defaults: tuple[Const, ...] = ()


@dataclass(frozen=True)
class ExceptionClass:
    """`class Name(Base): pass`, Base one of api.EXCEPTIONS or an exception class the
    program defined before: an exception type of the program's own, for `raise`."""

    name: str
    base: str
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Delete:
    """`del obj.attr`, attr one of a tensor's attributes that torch deletes or refuses to
    delete (api.DELETABLE: test_attribute_deletion's)."""

    obj: Expr
    attr: str
    line: int = field(default=0, compare=False)


Stmt = (Assign | AugAssign | ExprStmt | Assert | With | For | Return | FunctionClass | Raise
        | ExceptionClass | Def | Delete)


@dataclass(frozen=True)
class Program:
    body: tuple[Stmt, ...]

    def __repr__(self) -> str:
        # As source text: what hypothesis prints for a falsifying example is then readable.
        return f"parse({to_source(self)!r})"


# ---- printing ---------------------------------------------------------------------------
# The IR printed back as Python source: here, not in language, so that Program's repr needs
# no import of the parser (no program <-> language cycle).
_BIN = {o.symbol: o.node for o in operators.BINARY}
_UN = {o.symbol: o.node for o in operators.UNARY}
_CMP = {o.symbol: o.node for o in operators.COMPARE}


def dotted(e: Expr | ast.expr) -> str | None:
    """`torch.autograd.grad` for that chain of attributes on a name; None for anything else.
    It reads a Program's expression or the syntax tree a program is parsed from (the parser
    asks before converting: a decorator, a base class): the one helper for both."""
    if isinstance(e, (Name, ast.Name)):
        return e.id
    if isinstance(e, (Attribute, ast.Attribute)):
        base = dotted(e.value)
        return None if base is None else f"{base}.{e.attr}"
    return None


def _ast_expr(e: Expr, ctx: ast.expr_context | None = None) -> ast.expr:
    load = ctx or ast.Load()
    if isinstance(e, Const):
        return ast.Constant(e.value)
    if isinstance(e, Name):
        return ast.Name(e.id, load)
    if isinstance(e, Attribute):
        return ast.Attribute(_ast_expr(e.value), e.attr, load)
    if isinstance(e, Call):
        return ast.Call(_ast_expr(e.func), [_ast_expr(a) for a in e.args],
                        [ast.keyword(k.name, _ast_expr(k.value)) for k in e.keywords])
    if isinstance(e, Slice):
        return ast.Slice(*(None if p is None else _ast_expr(p)
                           for p in (e.lower, e.upper, e.step)))
    if isinstance(e, Subscript):
        return ast.Subscript(_ast_expr(e.value), _ast_expr(e.index), load)
    if isinstance(e, Tuple):
        return ast.Tuple([_ast_expr(x, ctx) for x in e.elts], load)
    if isinstance(e, List):
        return ast.List([_ast_expr(x) for x in e.elts], load)
    if isinstance(e, Dict):
        return ast.Dict([_ast_expr(k) for k in e.keys], [_ast_expr(v) for v in e.values])
    if isinstance(e, BinOp):
        return ast.BinOp(_ast_expr(e.left), _BIN[e.op](), _ast_expr(e.right))
    if isinstance(e, UnaryOp):
        return ast.UnaryOp(_UN[e.op](), _ast_expr(e.operand))
    if isinstance(e, Compare):
        return ast.Compare(_ast_expr(e.left), [_CMP[o]() for o in e.ops],
                           [_ast_expr(c) for c in e.comparators])
    if isinstance(e, BoolOp):
        return ast.BoolOp(ast.And() if e.op == "and" else ast.Or(),
                          [_ast_expr(v) for v in e.values])
    if isinstance(e, Lambda):
        args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in e.params],
                             kwonlyargs=[], kw_defaults=[], defaults=[])
        return ast.Lambda(args, _ast_expr(e.body))
    raise TypeError(f"not an expression: {e!r}")


# Python 3.12 added type parameters to function and class nodes; unparse needs them there.
_TYPE_PARAMS: dict[str, Any] = {"type_params": []} if sys.version_info >= (3, 12) else {}


def _ast_stmt(s: Stmt) -> ast.stmt:
    if isinstance(s, Assign):
        return ast.Assign([_ast_expr(s.target, ast.Store())], _ast_expr(s.value), lineno=0)
    if isinstance(s, AugAssign):
        target = _ast_expr(s.target, ast.Store())
        assert isinstance(target, (ast.Name, ast.Subscript, ast.Attribute))
        return ast.AugAssign(target, _BIN[s.op](), _ast_expr(s.value))
    if isinstance(s, ExprStmt):
        if s.value == Const(None):
            return ast.Pass()
        return ast.Expr(_ast_expr(s.value))
    if isinstance(s, Assert):
        return ast.Assert(_ast_expr(s.test), None if s.msg is None else _ast_expr(s.msg))
    if isinstance(s, With):
        name = None if s.name is None else ast.Name(s.name, ast.Store())
        return ast.With([ast.withitem(_ast_expr(s.context), name)], _ast_body(s.body),
                        lineno=0)
    if isinstance(s, Raise):
        return ast.Raise(_ast_expr(s.exc), None)
    if isinstance(s, Def):
        args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in s.params],
                             vararg=None if s.vararg is None else ast.arg(s.vararg),
                             kwarg=None if s.kwarg is None else ast.arg(s.kwarg),
                             kwonlyargs=[], kw_defaults=[],
                             defaults=[_ast_expr(d) for d in s.defaults])
        return ast.FunctionDef(s.name, args, _ast_body(s.body), [], None, lineno=0,
                               **_TYPE_PARAMS)
    if isinstance(s, Delete):
        return ast.Delete([ast.Attribute(_ast_expr(s.obj), s.attr, ast.Del())], lineno=0)
    if isinstance(s, ExceptionClass):
        return ast.ClassDef(s.name, [ast.Name(s.base, ast.Load())], [], [ast.Pass()], [],
                            **_TYPE_PARAMS)
    if isinstance(s, For):
        it: ast.expr = ast.Call(ast.Name("range", ast.Load()),
                                [_ast_expr(a) for a in s.range_args], [])
        if s.items is not None:
            it = ast.Tuple([_ast_expr(a) for a in s.items], ast.Load())
        return ast.For(ast.Name(s.var, ast.Store()), it, _ast_body(s.body), [], lineno=0)
    if isinstance(s, Return):
        return ast.Return(None if s.value is None else _ast_expr(s.value))
    if isinstance(s, FunctionClass):
        base = ast.Attribute(ast.Attribute(ast.Name("torch", ast.Load()), "autograd",
                                           ast.Load()), "Function", ast.Load())
        methods: list[ast.stmt] = [
            ast.Assign([ast.Name(n, ast.Store())], ast.Constant(v), lineno=0)
            for n, v in s.attributes]
        for m in s.methods:
            args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in m.params],
                                 kwonlyargs=[], kw_defaults=[],
                                 defaults=[_ast_expr(d) for d in m.defaults])
            methods.append(ast.FunctionDef(
                m.name, args, _ast_body(m.body),
                [ast.Name(d, ast.Load()) for d in m.decorators], None, lineno=0,
                **_TYPE_PARAMS))
        return ast.ClassDef(s.name, [base], [], methods, [], **_TYPE_PARAMS)
    raise TypeError(f"not a statement: {s!r}")


def _ast_body(body: tuple[Stmt, ...]) -> list[ast.stmt]:
    return [_ast_stmt(s) for s in body] or [ast.Pass()]


def to_source(program: Program) -> str:
    """Source text that `parse` reads back into an equal Program."""
    module = ast.Module([_ast_stmt(s) for s in program.body], type_ignores=[])
    return ast.unparse(ast.fix_missing_locations(module)) + "\n"
