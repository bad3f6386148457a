"""The operator vocabulary of the case language, in one table.

Each row: the symbol the IR carries, the `ast` node it is parsed from and printed as, the
Python function that evaluates it, and (for the operators that are also augmented
assignments on tensors) the in-place function. The parser, printer, interpreter and the
program generator all read these tables, so an operator is added in one place.
"""
from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Operator:
    symbol: str
    node: type  # an ast node class (ast.Add, ast.Lt, ...)
    function: Callable[..., Any]
    inplace: Callable[[Any, Any], Any] | None = None


BINARY: tuple[Operator, ...] = (
    Operator("+", ast.Add, operator.add, operator.iadd),
    Operator("-", ast.Sub, operator.sub, operator.isub),
    Operator("*", ast.Mult, operator.mul, operator.imul),
    Operator("/", ast.Div, operator.truediv, operator.itruediv),
    Operator("**", ast.Pow, operator.pow),
    Operator("@", ast.MatMult, operator.matmul),
)
UNARY: tuple[Operator, ...] = (
    Operator("-", ast.USub, operator.neg),
    Operator("+", ast.UAdd, operator.pos),
    Operator("not", ast.Not, operator.not_),
)
COMPARE: tuple[Operator, ...] = (
    Operator("<", ast.Lt, operator.lt),
    Operator("<=", ast.LtE, operator.le),
    Operator(">", ast.Gt, operator.gt),
    Operator(">=", ast.GtE, operator.ge),
    Operator("==", ast.Eq, operator.eq),
    Operator("!=", ast.NotEq, operator.ne),
    Operator("is", ast.Is, operator.is_),
    Operator("is not", ast.IsNot, operator.is_not),
    # membership, as Python reads it (`"tangent=" in str(x)`; of a tensor, its __contains__)
    Operator("in", ast.In, lambda a, b: a in b),
    Operator("not in", ast.NotIn, lambda a, b: a not in b),
)
# Augmented assignment is an in-place op on tensors: the binary operators with an in-place form.
AUGMENTED: tuple[Operator, ...] = tuple(o for o in BINARY if o.inplace is not None)
