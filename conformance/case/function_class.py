"""The case language's Function classes: `class F(torch.autograd.Function):` converted into
the Program IR, under torch's rules for what such a class holds (static methods and their
decorators and parameters, the attributes its methods store on ctx, the class flags). The
other statements are `language`'s, the expressions in them `expressions`'.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from conformance.case import api
from conformance.case import program as ir
from conformance.case.expressions import ExpressionConverter

# torch's Function defines each of them raising (forward: "You must implement the forward
# function", backward and its alias vjp: "... either the backward or vjp method"; a class with
# both is refused at backward), so a class may leave any out, as torch's tests do.
FUNCTION_METHODS = ("forward", "backward", "vjp")
JVP = "jvp"   # optional: forward mode's formula (ctx, *input tangents)
SETUP_CONTEXT = ir.SETUP_CONTEXT
# Decorators a Function method may carry, outermost first: staticmethod, then optionally
# once_differentiable (on backward); or classmethod alone (`cls` first, then what the static
# method takes); or none, torch's legacy style (`self` first, in ctx's place), which torch
# refuses at the call (test_legacy_function_deprecation_exception).
FUNCTION_DECORATORS = frozenset({"staticmethod", "torch.autograd.function.once_differentiable"})
CLASSMETHOD = "classmethod"


class FunctionClassConverter(ExpressionConverter):
    """Converts Function classes; `language._Converter` adds the other statements (the
    methods' bodies are statements)."""

    def body(self, stmts: Iterable[ast.stmt], *, in_method: bool) -> tuple[ir.Stmt, ...]:
        raise NotImplementedError  # language._Converter's

    def function_class(self, node: ast.ClassDef) -> ir.FunctionClass:
        if (len(node.bases) != 1 or node.keywords or node.decorator_list
                or ir.dotted(node.bases[0]) not in ("torch.autograd.Function",)):
            raise self.fail(node, "a class must derive from torch.autograd.Function alone, "
                            "or from one exception class (" + ", ".join(sorted(api.EXCEPTIONS))
                            + ", or one the program defined before)",
                            f"write `class {node.name}(torch.autograd.Function):` or "
                            f"`class {node.name}(RuntimeError): pass`")
        methods = []
        attributes: list[tuple[str, bool]] = []
        setup = _has_setup_context(node)
        for item in node.body:
            if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) and \
                    isinstance(item.value.value, str):
                continue  # a docstring
            if isinstance(item, ast.Assign):
                attributes.append(self.class_attribute(item, attributes))
                continue
            if not isinstance(item, ast.FunctionDef) or \
                    item.name not in (*FUNCTION_METHODS, SETUP_CONTEXT, JVP):
                raise self.fail(item, "a Function class holds only `forward`, `backward` "
                                "(or its alias `vjp`), `setup_context` and `jvp`, and the "
                                "flags " + ", ".join(sorted(ir.FUNCTION_CLASS_ATTRIBUTES)),
                                "define `@staticmethod def forward(ctx, ...)` and "
                                "`@staticmethod def backward(ctx, ...)`")
            decorators = tuple(ir.dotted(d) or "?" for d in item.decorator_list)
            if decorators not in ((), (CLASSMETHOD,)) and (
                    decorators[:1] != ("staticmethod",) or not set(decorators) <=
                    FUNCTION_DECORATORS or len(set(decorators)) != len(decorators)):
                raise self.fail(item, f"`{item.name}` must be decorated with @staticmethod "
                                "(outermost), optionally followed by "
                                "@torch.autograd.function.once_differentiable; or with "
                                "@classmethod alone; or not at all (the legacy style)")
            a = item.args
            if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or \
                    (a.defaults and item.name != "forward"):
                raise self.fail(item, "Function methods take plain positional parameters "
                                "(forward's may have literal defaults)")
            defaults = tuple(self.default_value(d) for d in a.defaults)
            params = tuple(p.arg for p in a.args)
            first = _first_ctx_parameter(item)
            if first and not params:
                raise self.fail(item, f"`{item.name}` takes cls as its first parameter")
            if setup and item.name == "forward":
                self.ctx = None   # forward(*inputs): ctx is setup_context's
            elif len(params) <= first:
                raise self.fail(item, f"`{item.name}` takes ctx as its "
                                f"{'second' if first else 'first'} parameter")
            else:
                self.ctx = (params[first], _ctx_attributes(node))
            try:
                body = self.body(item.body, in_method=True)
            finally:
                self.ctx = None
            methods.append(ir.Method(item.name, params, body, decorators, defaults,
                                     line=item.lineno))
        if not {m.name for m in methods} & set(FUNCTION_METHODS):
            raise self.fail(node, f"class {node.name} defines none of forward, backward and "
                            "vjp", "define `@staticmethod def forward(ctx, ...)` and "
                            "`@staticmethod def backward(ctx, ...)`")
        return ir.FunctionClass(node.name, tuple(methods), tuple(attributes),
                                line=node.lineno)

    def default_value(self, node: ast.expr, function: str = "forward") -> ir.Const:
        """A default of forward's (or of a top-level def's): a number, a bool or None, as
        written (never an expression that would run when the function is made)."""
        value = self.expr(node)
        if not isinstance(value, ir.Const) or isinstance(value.value, str) or \
                value.value is Ellipsis:
            raise self.fail(node, f"a default of {function} is a literal number, bool or None",
                            f"write e.g. `def {function}(x, y=3):`")
        return value

    def class_attribute(self, item: ast.Assign,
                        before: list[tuple[str, bool]]) -> tuple[str, bool]:
        """`clear_saved_tensors_on_access = True` in a Function class: one name of
        ir.FUNCTION_CLASS_ATTRIBUTES, set once, to a bool literal (torch reads the flag from
        the class; anything else would store the program's state on an engine class)."""
        names = ", ".join(sorted(ir.FUNCTION_CLASS_ATTRIBUTES))
        fix = "write `clear_saved_tensors_on_access = True` (or False)"
        target = item.targets[0] if len(item.targets) == 1 else None
        if not isinstance(target, ast.Name) or target.id not in ir.FUNCTION_CLASS_ATTRIBUTES:
            raise self.fail(item, f"a Function class may set only the flags {names}", fix)
        if any(n == target.id for n, _ in before):
            raise self.fail(item, f"`{target.id}` is set twice", "set it once")
        if not (isinstance(item.value, ast.Constant) and isinstance(item.value.value, bool)):
            raise self.fail(item, f"`{target.id}` takes True or False", fix)
        return target.id, item.value.value


def _has_setup_context(cls: ast.ClassDef) -> bool:
    return any(isinstance(m, ast.FunctionDef) and m.name == SETUP_CONTEXT for m in cls.body)


def _first_ctx_parameter(method: ast.FunctionDef) -> int:
    """Where a method's ctx parameter is: after a classmethod's cls, else first."""
    return int(any(ir.dotted(d) == CLASSMETHOD for d in method.decorator_list))


def _ctx_attributes(cls: ast.ClassDef) -> frozenset[str]:
    """Attribute names the class's methods assign on their ctx parameter."""
    names: set[str] = set()
    setup = _has_setup_context(cls)
    for method in cls.body:
        first = _first_ctx_parameter(method) if isinstance(method, ast.FunctionDef) else 0
        if isinstance(method, ast.FunctionDef) and len(method.args.args) > first and \
                ir.method_has_ctx(method.name, setup):
            ctx = method.args.args[first].arg
            for node in ast.walk(method):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                        isinstance(node.value, ast.Name) and node.value.id == ctx:
                    names.add(node.attr)
    return frozenset(names)
