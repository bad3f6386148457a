"""The Program: the one intermediate form of a case program.

YAML cases are parsed into it (`language.parse`), hypothesis strategies build it directly,
and `language.to_source` prints it back. Nodes are frozen dataclasses so programs compare
by value; source positions are carried for messages but excluded from equality, so that
`parse(to_source(p)) == p` holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Scalar = int | float | bool | str | None


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
class BinOp:
    op: str  # one of language.BINARY_OPS
    left: Expr
    right: Expr


@dataclass(frozen=True)
class UnaryOp:
    op: str  # "-", "+" or "not"
    operand: Expr


@dataclass(frozen=True)
class Compare:
    left: Expr
    ops: tuple[str, ...]  # one of language.COMPARE_OPS each
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


Expr = (Const | Name | Attribute | Call | Slice | Subscript | Tuple | List | BinOp | UnaryOp
        | Compare | BoolOp | Lambda)


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
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class For:
    var: str
    range_args: tuple[Expr, ...]  # the arguments of range(...)
    body: tuple[Stmt, ...]
    line: int = field(default=0, compare=False)


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
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class FunctionClass:
    """`class Name(torch.autograd.Function)` with static forward and backward."""

    name: str
    methods: tuple[Method, ...]
    line: int = field(default=0, compare=False)


Stmt = Assign | AugAssign | ExprStmt | Assert | With | For | Return | FunctionClass


@dataclass(frozen=True)
class Program:
    body: tuple[Stmt, ...]

    def __repr__(self) -> str:
        # As source text: what hypothesis prints for a falsifying example is then readable.
        from conformance.language import to_source

        return f"parse({to_source(self)!r})"
