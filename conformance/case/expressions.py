"""The case language's expressions: each Python expression node a program may use converted
into the Program IR, its names and attributes checked against the API table
(conformance/case/api.py). The statements that hold them are `language`'s."""

from __future__ import annotations

import ast
from collections import Counter

from conformance.case import api, kinds, operators
from conformance.case import program as ir
from conformance.case.diagnostics import CaseError

BINARY_OPS: dict[type, str] = {o.node: o.symbol for o in operators.BINARY}
UNARY_OPS: dict[type, str] = {o.node: o.symbol for o in operators.UNARY}
COMPARE_OPS: dict[type, str] = {o.node: o.symbol for o in operators.COMPARE}


def name_of_node(node: ast.AST) -> str:
    return type(node).__name__


class ExpressionConverter:
    """Converts expressions; `function_class.FunctionClassConverter` adds Function classes,
    `language._Converter` the other statements, and sets the state below for the program
    being converted."""

    # every name some statement of the program binds, with how many times
    bindings: Counter[str]
    assigned: set[str]
    # the names the statement being converted binds (not suggested in its own expressions)
    binding_now: Counter[str]
    # inside a Function method: the ctx parameter's name and the attributes the class
    # stores on ctx
    ctx: tuple[str, frozenset[str]] | None

    def fail(self, node: ast.AST, message: str, fix: str | None = None) -> CaseError:
        return CaseError(message, line=getattr(node, "lineno", None), fix=fix)

    def expr(self, node: ast.expr) -> ir.Expr:
        if isinstance(node, ast.Constant):
            v = node.value
            # complex: an imaginary literal (`2j`; `1+2j` is 1 + 2j, an operator)
            if v is None or isinstance(v, (bool, int, float, complex, str)):
                return ir.Const(v)
            raise self.fail(node, f"constant {v!r} of type {type(v).__name__} is not supported")
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Subscript):
            return ir.Subscript(self.expr(node.value), self.index(node.slice))
        if isinstance(node, ast.Tuple):
            return ir.Tuple(tuple(self.expr(e) for e in node.elts))
        if isinstance(node, ast.List):
            return ir.List(tuple(self.expr(e) for e in node.elts))
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise self.fail(node, "`**` in a dict display is not part of the case language",
                                "write each key: value pair")
            for k in node.keys:
                # the trace names an item by its key's repr, which is the same on every
                # engine only for literals (a tensor's repr is the engine's own)
                if not (isinstance(k, ast.Constant) and type(k.value) in (str, int, bool)):
                    raise self.fail(k or node, "a dict display's key must be a string, int or "
                                    "bool literal", "write the key as a literal, e.g. 'x': ...")
            return ir.Dict(tuple(self.expr(k) for k in node.keys if k is not None),
                           tuple(self.expr(v) for v in node.values))
        if isinstance(node, ast.BinOp):
            op = BINARY_OPS.get(type(node.op))
            if op is None:
                raise self.fail(node, f"operator {name_of_node(node.op)} is not supported",
                                f"use one of {' '.join(BINARY_OPS.values())}")
            return ir.BinOp(op, self.expr(node.left), self.expr(node.right))
        if isinstance(node, ast.UnaryOp):
            operand = node.operand
            if isinstance(node.op, ast.USub) and isinstance(operand, ast.Constant) and \
                    type(operand.value) in (int, float):
                # a negative literal is one constant, as ast.unparse prints Const(-2.0)
                value = operand.value
                assert isinstance(value, (int, float))
                return ir.Const(-value)
            uop = UNARY_OPS.get(type(node.op))
            if uop is None:
                raise self.fail(node, f"operator {name_of_node(node.op)} is not supported",
                                f"use one of {' '.join(UNARY_OPS.values())}")
            return ir.UnaryOp(uop, self.expr(node.operand))
        if isinstance(node, ast.Compare):
            ops = []
            for o in node.ops:
                c = COMPARE_OPS.get(type(o))
                if c is None:
                    raise self.fail(node, f"comparison {name_of_node(o)} is not supported",
                                    f"use one of {' '.join(COMPARE_OPS.values())}")
                ops.append(c)
            return ir.Compare(self.expr(node.left), tuple(ops),
                              tuple(self.expr(c) for c in node.comparators))
        if isinstance(node, ast.BoolOp):
            return ir.BoolOp("and" if isinstance(node.op, ast.And) else "or",
                             tuple(self.expr(v) for v in node.values))
        if isinstance(node, ast.Lambda):
            a = node.args
            if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
                raise self.fail(node, "lambdas take plain positional parameters")
            return ir.Lambda(tuple(p.arg for p in a.args), self.expr(node.body),
                             line=node.lineno, col=node.col_offset)
        kind = name_of_node(node)
        raise self.fail(node, f"`{kind}` expressions are not part of the case language",
                        "see docs/case-format.md for the expressions a program may use")

    def name(self, node: ast.Name) -> ir.Name:
        n = node.id
        if n.startswith("__"):
            raise self.fail(node, f"dunder name `{n}` is not allowed")
        if n not in api.ROOTS and n not in api.BUILTINS and n not in self.assigned:
            bound = {a for a, k in self.bindings.items() if k > self.binding_now[a]}
            known = set(api.ROOTS) | set(api.BUILTINS) | bound
            near = api.nearest(n, known)
            raise self.fail(node, f"unknown name `{n}`",
                            f"did you mean {', '.join(near)}?" if near else
                            "assign it first, or use torch, nn, F, Variable or a builtin: "
                            + ", ".join(sorted(api.BUILTINS)))
        return ir.Name(n)

    def attribute(self, node: ast.Attribute) -> ir.Attribute:
        if node.attr.startswith("__"):
            raise self.fail(node, f"dunder attribute `{node.attr}` is not allowed",
                            "the case language reaches engines only through the API table "
                            "in conformance/case/api.py")
        base = namespace_path(node.value)
        if self._is_ctx_attribute(node, store=False):
            pass
        elif self.ctx is not None and isinstance(node.value, ast.Name) and \
                node.value.id == self.ctx[0] and node.attr not in api.OBJECT_ATTRIBUTES["ctx"]:
            # ctx is also an engine object (in torch, the backward node): through it a
            # program reaches only the ctx table, not `ctx.apply` or `ctx.next_functions`
            ctx_api = api.OBJECT_ATTRIBUTES["ctx"]
            near = api.nearest(node.attr, ctx_api | self.ctx[1])
            raise self.fail(node, f"`{node.value.id}.{node.attr}` is not in the ctx API",
                            f"nearest supported names: {', '.join(near)}" if near else
                            "ctx offers " + ", ".join(sorted(ctx_api)) + ", and what the "
                            "Function stores on it")
        elif isinstance(node.value, ast.Name) and node.value.id == "weakref":
            weakref_api = api.OBJECT_ATTRIBUTES["weakref module"]
            if node.attr not in weakref_api:
                raise self.fail(node, f"`weakref.{node.attr}` is not in the case language",
                                "the builtin weakref offers only " + ", ".join(
                                    f"weakref.{n}" for n in sorted(weakref_api))
                                + " (`ref = weakref.ref(x)`, then `ref() is None`)")
        elif f"{api_object_path(node.value)}.{node.attr}" in api.FUNCTIONS:
            pass  # a path of the table through an API object (Variable._execution_engine)
        elif api_object_path(node.value) is not None and \
                node.attr not in api.OBJECT_ATTRIBUTES["Function class"]:
            # a class or function of the engine's API: calling `torch.autograd.Function.
            # mark_dirty(nn.Parameter)` would write onto a class every later case shares
            raise self.fail(node, f"attribute `{node.attr}` of the engine's "
                            f"`{api_object_path(node.value)}` is not in the supported API",
                            "call it on a value the program made, e.g. `x.requires_grad_()`, "
                            "`ctx.mark_dirty(x)`")
        elif base is not None:
            path = f"{base}.{node.attr}"
            if path not in api.FUNCTIONS and path not in api.NAMESPACES:
                choices = {p[len(base) + 1:] for p in api.FUNCTIONS | api.NAMESPACES
                           if p.startswith(base + ".") and "." not in p[len(base) + 1:]}
                near = api.nearest(node.attr, choices)
                raise self.fail(node, f"`{path}` is not in the supported API",
                                f"nearest supported names: {', '.join(near)}" if near else
                                "add it to conformance/case/api.py if both engines support it")
        elif node.attr not in api.ATTRIBUTES:
            near = api.nearest(node.attr, set(api.ATTRIBUTES))
            raise self.fail(node, f"attribute `{node.attr}` is not in the supported API",
                            f"nearest supported names: {', '.join(near)}" if near else
                            "add it to conformance/case/api.py if both engines support it")
        return ir.Attribute(self.expr(node.value), node.attr)

    def _is_ctx_attribute(self, node: ast.Attribute, *, store: bool) -> bool:
        """A Function's own state on ctx: any public name may be stored, and read back."""
        if self.ctx is None or not (isinstance(node.value, ast.Name)
                                    and node.value.id == self.ctx[0]):
            return False
        if node.attr.startswith("_"):
            raise self.fail(node, f"ctx attribute `{node.attr}` is private",
                            "store Function state under a name without a leading underscore")
        if store and node.attr in api.CTX_ENGINE_MEMBERS:
            raise self.fail(node, f"cannot assign to `{node.value.id}.{node.attr}`: the "
                            "name belongs to the engine's ctx",
                            "store Function state under another name, e.g. "
                            f"`{node.value.id}.my_{node.attr.strip('_')}`")
        return store or (node.attr in self.ctx[1]
                         and node.attr not in api.CTX_ENGINE_MEMBERS)

    def call(self, node: ast.Call) -> ir.Call:
        keywords = []
        for k in node.keywords:
            if k.arg is None:
                raise self.fail(node, "`**kwargs` in calls is not supported")
            keywords.append(ir.Keyword(k.arg, self.expr(k.value)))
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.fail(node, "`*args` in calls is not supported")
        call = ir.Call(self.expr(node.func), tuple(self.expr(a) for a in node.args),
                       tuple(keywords))
        self.check_expectation(node, call)
        self.check_slice(node)
        return call

    def check_slice(self, node: ast.Call) -> None:
        """`slice(None)`, `slice(a, b, c)`: the tests build index tuples of them; literal
        ints or None only, so the object is the one a written `a:b:c` makes."""
        if not (isinstance(node.func, ast.Name) and node.func.id == "slice"):
            return
        def literal(a: ast.expr) -> bool:
            if isinstance(a, ast.Constant):
                return a.value is None or type(a.value) is int
            return (isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub)
                    and isinstance(a.operand, ast.Constant) and type(a.operand.value) is int)
        if node.keywords or not 1 <= len(node.args) <= 3 or \
                not all(literal(a) for a in node.args):
            raise self.fail(node, "slice(...) takes one to three literal ints or None",
                            "e.g. slice(None) or slice(1, None, 2)")

    def check_expectation(self, node: ast.Call, call: ir.Call) -> None:
        """`raises(kind)` / `warns(kind)` must name a known kind, checked at load time."""
        if not (isinstance(call.func, ir.Name) and call.func.id in ("raises", "warns")):
            return
        valid = kinds.WARNING_KINDS if call.func.id == "warns" else kinds.ERROR_KINDS
        name = call.func.id
        self.check_raised_type(node, call, name)
        self.check_warning_count(node, call, name)
        keywords = [k for k in call.keywords
                    if not (name == "raises" and k.name == "type")
                    and not (name == "warns" and k.name == "count")]
        if len(call.args) != 1 or keywords or not (
                isinstance(call.args[0], ir.Const) and isinstance(call.args[0].value, str)):
            raise self.fail(node, f"{call.func.id}() takes one kind name as a string",
                            f'e.g. {call.func.id}("{valid[0]}")')
        kind = call.args[0].value
        unknown = kinds.unknown_kind(kind, warning=call.func.id == "warns")
        if unknown:
            problem, near = unknown
            raise self.fail(node, problem,
                            f"did you mean {', '.join(near)}?" if near else
                            f"valid kinds (conformance/case/kinds.py): {', '.join(valid)}")

    def check_warning_count(self, node: ast.Call, call: ir.Call, name: str) -> None:
        """`warns(kind, count=N)`: N a positive int literal, checked at load time."""
        for k in call.keywords:
            if name == "warns" and k.name == "count" and not (
                    isinstance(k.value, ir.Const) and type(k.value.value) is int
                    and k.value.value >= 1):
                raise self.fail(node, "warns(kind, count=...) takes a positive int literal",
                                'e.g. warns("mark_dirty_not_input", count=1)')

    def check_raised_type(self, node: ast.Call, call: ir.Call, name: str) -> None:
        """`raises(kind, type="Name")`: the error must also be of that class (or derive
        from it), Name one of api.RAISED_TYPES, as a string: checked at load time."""
        for k in call.keywords:
            if name != "raises" or k.name != "type":
                continue
            if not (isinstance(k.value, ir.Const) and isinstance(k.value.value, str)):
                raise self.fail(node, "raises(kind, type=...) takes a class name as a string",
                                'e.g. raises("gradcheck_jacobian_mismatch", '
                                'type="GradcheckError")')
            if k.value.value not in api.RAISED_TYPES:
                near = api.nearest(k.value.value, set(api.RAISED_TYPES))
                raise self.fail(node, f"unknown exception class {k.value.value!r} for "
                                "raises(type=...)",
                                f"did you mean {', '.join(near)}?" if near else
                                f"valid: {', '.join(sorted(api.RAISED_TYPES))}")

    def index(self, node: ast.expr) -> ir.Expr:
        if isinstance(node, ast.Slice):
            return ir.Slice(*(None if p is None else self.expr(p)
                              for p in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Tuple):
            return ir.Tuple(tuple(self.index(e) for e in node.elts))
        if isinstance(node, ast.Constant) and node.value is Ellipsis:
            return ir.Const(Ellipsis)
        return self.expr(node)


def namespace_path(node: ast.expr) -> str | None:
    """The API path of `node` when it is a root or a namespace reached from one."""
    path = api.api_path(node)
    return path if path in api.NAMESPACES else None


def api_object_path(node: ast.expr) -> str | None:
    """The API path of `node` when it is a function or class of the table reached from a
    root (not a namespace)."""
    path = api.api_path(node)
    return path if path in api.FUNCTIONS else None
