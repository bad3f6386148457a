"""The interpreter's evaluation of expressions: each expression node of the IR evaluated on an
engine's values with Python's own semantics (chained comparisons, `and`/`or`), operators
and calls through the guards of operation_limits. The statements that hold them are
evaluate's, lambdas (which run the program's statements) the interpreter's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.case import api, operators
from conformance.case import program as ir
from conformance.run.harness_builtins import HarnessBuiltins
from conformance.run.operation_limits import returns
from conformance.run.sandbox import CaseFailure, Expectation, Namespace, Scope

BINARY: dict[str, Callable[[Any, Any], Any]] = {o.symbol: o.function for o in operators.BINARY}
INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    o.symbol: o.inplace for o in operators.BINARY if o.inplace is not None}
COMPARE: dict[str, Callable[[Any, Any], Any]] = {o.symbol: o.function for o in operators.COMPARE}
UNARY: dict[str, Callable[[Any], Any]] = {o.symbol: o.function for o in operators.UNARY}
_IDENTITY = frozenset({"is", "is not"})  # comparisons that compute nothing


class ExpressionEvaluator(HarnessBuiltins):
    """Expressions evaluated (Evaluator, evaluate.py, adds the statements)."""

    # ---- expressions -----------------------------------------------------------------
    def _eval(self, e: ir.Expr, scope: Scope) -> Any:
        # one lookup by the node's class instead of a chain of isinstance tests: this runs
        # for every node of every statement (the IR's classes have no subclasses)
        evaluate = _EVALUATORS.get(type(e))
        if evaluate is None:  # pragma: no cover - the parser produces nothing else
            raise TypeError(f"unknown expression {e!r}")
        return evaluate(self, e, scope)

    def _const(self, e: ir.Const, scope: Scope) -> Any:
        return e.value

    def _name(self, e: ir.Name, scope: Scope) -> Any:
        if e.id in api.ROOTS:
            return self._path(api.ROOTS[e.id])
        if e.id in api.BUILTINS:
            return self.builtins[e.id]
        return scope.get(e.id)

    def _attribute_read(self, e: ir.Attribute, scope: Scope) -> Any:
        obj = self._eval(e.value, scope)
        if isinstance(obj, Namespace):
            return self._path(f"{obj.path}.{e.attr}")
        path = api.api_path(e)
        if path in api.FUNCTIONS:  # a path through an API object (Variable._execution_engine)
            return self._path(path)
        self._check_object_attribute(obj, e.attr)
        return self._attribute(obj, e.attr)

    def _call(self, e: ir.Call, scope: Scope) -> Any:
        func = self._eval(e.func, scope)
        if isinstance(func, (Namespace, Expectation)):
            raise CaseFailure(f"{func} is not callable")
        args = [self._eval(a, scope) for a in e.args]
        kwargs = {k.name: self._eval(k.value, scope) for k in e.keywords}
        args = self._check_call(e.func, func, args, kwargs)
        owner = getattr(func, "__self__", None)
        return self._check_made(func(*args, **kwargs), [owner, *args, *kwargs.values()])

    def _subscript(self, e: ir.Subscript, scope: Scope) -> Any:
        return self._item(self._eval(e.value, scope), self._index(e.index, scope))

    def _tuple(self, e: ir.Tuple, scope: Scope) -> Any:
        return tuple(self._eval(x, scope) for x in e.elts)

    def _list(self, e: ir.List, scope: Scope) -> Any:
        return [self._eval(x, scope) for x in e.elts]

    def _dict(self, e: ir.Dict, scope: Scope) -> Any:
        # Python's order: each key, then its value
        return {self._eval(k, scope): self._eval(v, scope)
                for k, v in zip(e.keys, e.values, strict=True)}

    def _binop(self, e: ir.BinOp, scope: Scope) -> Any:
        return self._binary(BINARY[e.op], e.op, self._eval(e.left, scope),
                            self._eval(e.right, scope))

    def _unaryop(self, e: ir.UnaryOp, scope: Scope) -> Any:
        v = self._eval(e.operand, scope)
        if e.op == "not":
            return not self._truth(v)
        op = UNARY[e.op]
        if not self.engine.is_tensor(v):
            return op(v)
        self._limit(f"`{e.op}`", returns(op), [v])
        return self._check_made(op(v), (v,))

    def _compare(self, e: ir.Compare, scope: Scope) -> Any:
        # Python's chaining: a < b < c is (a < b) and (b < c), b evaluated once.
        left = self._eval(e.left, scope)
        result: Any = True
        for i, (op, right_e) in enumerate(zip(e.ops, e.comparators, strict=True)):
            if i and not self._truth(result):
                return result
            right = self._eval(right_e, scope)
            compare = COMPARE[op]
            if op not in _IDENTITY and (self.engine.is_tensor(left) or
                                        self.engine.is_tensor(right)):
                self._limit(f"`{op}`", returns(compare), [left, right])
                result = self._check_made(compare(left, right), (left, right))
            else:
                result = compare(left, right)
            left = right
        return result

    def _boolop(self, e: ir.BoolOp, scope: Scope) -> Any:
        value: Any = None
        for v_e in e.values:
            value = self._eval(v_e, scope)
            if self._truth(value) == (e.op == "or"):
                return value
        return value

    def _index(self, e: ir.Expr, scope: Scope) -> Any:
        if isinstance(e, ir.Slice):
            return slice(*(None if p is None else self._eval(p, scope)
                           for p in (e.lower, e.upper, e.step)))
        if isinstance(e, ir.Tuple):
            return tuple(self._index(x, scope) for x in e.elts)
        return self._eval(e, scope)

    def _truth(self, value: Any) -> bool:
        return bool(value)

    def _lambda(self, e: ir.Lambda, scope: Scope) -> Callable[..., Any]:
        raise NotImplementedError


# How each expression node is evaluated (ExpressionEvaluator._eval).
_EVALUATORS: dict[type, Callable[[ExpressionEvaluator, Any, Scope], Any]] = {
    ir.Const: ExpressionEvaluator._const, ir.Name: ExpressionEvaluator._name,
    ir.Attribute: ExpressionEvaluator._attribute_read, ir.Call: ExpressionEvaluator._call,
    ir.Subscript: ExpressionEvaluator._subscript, ir.Tuple: ExpressionEvaluator._tuple,
    ir.List: ExpressionEvaluator._list, ir.Dict: ExpressionEvaluator._dict,
    ir.BinOp: ExpressionEvaluator._binop,
    ir.UnaryOp: ExpressionEvaluator._unaryop, ir.Compare: ExpressionEvaluator._compare,
    ir.BoolOp: ExpressionEvaluator._boolop,
    # dispatched on the instance: the interpreter defines it
    ir.Lambda: lambda self, e, scope: self._lambda(e, scope),
    ir.Slice: ExpressionEvaluator._index,
}
