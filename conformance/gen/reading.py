"""Reading a generated program: its statements and expressions walked, the registry ops and
API paths it calls, the names it reads, its feature families. What `check` and `flows` count
as a program's hits is read through these."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import fields, replace
from typing import Any

from conformance.case import api, operators, vocabulary
from conformance.case import program as ir
from conformance.gen.op_table import OPERATOR_OP
from reference_engine import registry

BACKWARD_CALLS = frozenset({"backward", "grad"})


def walk(body: tuple[ir.Stmt, ...]) -> Iterator[ir.Stmt]:
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ir.With, ir.For)):
            yield from walk(stmt.body)
        elif isinstance(stmt, ir.FunctionClass):
            for m in stmt.methods:
                yield from walk(m.body)


def rebuilt(node: Any, change: Callable[[Any], Any]) -> Any:
    """`node` rebuilt bottom-up with `change` applied to every IR node (dataclass) after its
    fields are rebuilt: how a program is rewritten into its twin (rounding, nan_sign)."""
    if isinstance(node, tuple):
        return tuple(rebuilt(n, change) for n in node)
    if not hasattr(node, "__dataclass_fields__"):
        return node
    return change(replace(node, **{f.name: rebuilt(getattr(node, f.name), change)
                                   for f in fields(node) if f.init}))


def nodes(node: object, *, into_lambdas: bool = True) -> Iterator[object]:
    """Every IR node below `node` (dataclass fields, tuples); a lambda's body only with
    `into_lambdas` (a hook's body runs in backward, not where it is written)."""
    yield node
    if isinstance(node, ir.Lambda) and not into_lambdas:
        return
    if isinstance(node, tuple):
        for item in node:
            yield from nodes(item, into_lambdas=into_lambdas)
    elif hasattr(node, "__dataclass_fields__"):
        for name in node.__dataclass_fields__:
            yield from nodes(getattr(node, name), into_lambdas=into_lambdas)


# Attribute or method names, and keywords, that say which feature family a program touches:
# the op registry's family of each op (in-place forms: `inplace`), and the autograd API.
_FEATURE_OF_NAME = {
    **{r.name: r.feature for r in registry.OPS},
    **{r.inplace_name: "inplace" for r in registry.OPS if r.inplace_name},
    "backward": "backward_options", "grad": "autograd_grad", "retain_grad": "retain_grad",
    "register_hook": "hooks", "remove": "hooks", "detach": "data", "data": "data",
    "requires_grad_": "requires_grad", "no_grad": "grad_mode", "enable_grad": "grad_mode",
    "apply": "custom_function",
    **dict.fromkeys(("dual_level", "make_dual", "unpack_dual"), "forward_ad"),
    **dict.fromkeys(("complex64", "complex128"), "complex"),
}
_FEATURE_OF_KEYWORD = {
    "retain_graph": "retain_graph", "create_graph": "higher_order", "inputs": "backward_options",
    "grad_outputs": "autograd_grad", "allow_unused": "autograd_grad",
}


def features_of(program: ir.Program) -> set[str]:
    """Feature names (conformance.case.vocabulary) a program's text exercises."""
    found = {"ops"}
    for node in nodes(program.body):
        if isinstance(node, ir.Attribute):
            found.add(_FEATURE_OF_NAME.get(node.attr, "ops"))
        elif isinstance(node, ir.Keyword):
            found.add(_FEATURE_OF_KEYWORD.get(node.name, "ops"))
        elif isinstance(node, ir.BinOp) and node.op == "@":
            found.add("matmul")
        elif isinstance(node, ir.Subscript):
            found.add("views")
        elif isinstance(node, ir.AugAssign):
            found.add("inplace")
    return found & set(vocabulary.FEATURES)


def is_backward(stmt: ir.Stmt) -> bool:
    return any(isinstance(n, ir.Attribute) and n.attr in BACKWARD_CALLS
               for n in nodes(stmt))


# ---- API paths and gradients through each op ------------------------------------------

_OP_NAMES = frozenset(r.name for r in registry.OPS)
_OP_OF_METHOD = {**{r.name: r.name for r in registry.OPS if r.method or r.name.endswith("_")},
                 **{r.inplace_name: r.name for r in registry.OPS if r.inplace_name}}
_TENSOR_METHODS = api.OBJECT_ATTRIBUTES["tensor method"]
# operator symbol -> (dunder name, registry op), and the augmented forms
_OPERATORS = {o.symbol: (f"__{o.function.__name__}__", OPERATOR_OP.get(o.symbol))
              for o in operators.BINARY}
_AUGMENTED = {o.symbol: (f"__{o.inplace.__name__}__", OPERATOR_OP.get(o.symbol))
              for o in operators.AUGMENTED if o.inplace is not None}


def api_of(node: object) -> tuple[str, str | None] | None:
    """(`api:` path, registry op or None) of one IR node that calls into an engine."""
    if isinstance(node, ir.Call) and isinstance(node.func, ir.Attribute):
        path = ir.dotted(node.func)
        if path is not None and path.startswith("torch."):
            row = path.removeprefix("torch.")  # a namespaced row: nn.functional.relu
            return f"api:{path}", row if row in _OP_NAMES else None
        m = node.func.attr
        if m in _TENSOR_METHODS:
            return f"api:Tensor.{m}", _OP_OF_METHOD.get(m)
        if m == "apply":
            return "api:Function.apply", None
    elif isinstance(node, ir.BinOp) and node.op in _OPERATORS:
        dunder, op = _OPERATORS[node.op]
        return f"api:Tensor.{dunder}", op
    elif isinstance(node, ir.AugAssign) and node.op in _AUGMENTED:
        dunder, op = _AUGMENTED[node.op]
        return f"api:Tensor.{dunder}", op
    return None


def ops_in(node: object) -> set[str]:
    found = set()
    for n in nodes(node, into_lambdas=False):
        a = api_of(n)
        if a is not None and a[1] is not None:
            found.add(a[1])
    return found


def names_in(node: object) -> set[str]:
    return {n.id for n in nodes(node, into_lambdas=False)
            if isinstance(n, ir.Name) and n.id != "torch"}


def detaches(e: ir.Expr) -> bool:
    return (isinstance(e, ir.Attribute) and e.attr == "data") or (
        isinstance(e, ir.Call) and isinstance(e.func, ir.Attribute)
        and e.func.attr == "detach")


def makes_leaf_requiring_grad(e: object) -> bool:
    return any(isinstance(n, ir.Keyword) and n.name == "requires_grad"
               and n.value == ir.Const(True) for n in nodes(e, into_lambdas=False))
