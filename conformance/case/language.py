"""The case language: a small, closed subset of Python syntax.

`parse` reads source with `ast.parse` (which only builds a syntax tree) and converts each
node it recognises into the Program IR, rejecting everything else with the file line and
the fix. `to_source` prints a Program back through `ast.unparse`. Nothing here, or anywhere
in the harness, passes program text to eval, exec or compile.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable

from conformance.case import api, operators
from conformance.case import program as ir
from conformance.case.diagnostics import CaseError
from conformance.case.expressions import name_of_node
from conformance.case.function_class import FunctionClassConverter
from conformance.case.nesting import line_too_deep_to_parse, nests_beyond, too_deep
from conformance.case.program import to_source  # noqa: F401  (printing lives with the IR)

AUG_OPS: dict[type, str] = {o.node: o.symbol for o in operators.AUGMENTED}

_SYNTAX_FIX = {
    "Import": "the case language has no imports; use the names torch, nn, F and Variable",
    "ImportFrom": "the case language has no imports; use the names torch, nn, F and Variable",
    "While": "use `for i in range(n)` with a bounded n",
    "If": "the case language has no branches; write one case per behaviour",
    "Try": "use `with raises(\"kind\"):` to expect an error",
    "Global": "names are global already", "Nonlocal": "names are global already",
    "Delete": "`del` takes one of a tensor's attributes " + ", ".join(api.DELETABLE) +
              " (e.g. `del x.grad`); to let go of a value, rebind its name instead (e.g. "
              "`x = None`)",
}


class _Converter(FunctionClassConverter):
    """Converts one ast.Module into a Program, checking names against the API table."""

    def __init__(self, tree: ast.Module) -> None:
        self.bindings = _bindings(tree)
        self.assigned = set(self.bindings)
        # the names the statement being converted binds (its targets): its own
        # expressions run before they are bound, so they are not suggested there
        self.binding_now: Counter[str] = Counter()
        self.classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        # Names bound to an engine object or a class (`P = nn.Parameter`, `g = y.grad_fn`),
        # with the line of that binding: a program may not set attributes through them.
        self.engine_aliases = _engine_aliases(tree, self.classes)
        # Inside a Function method: the ctx parameter's name and the attributes the class
        # stores on ctx (`ctx.k = k`), which the methods may then read.
        self.ctx: tuple[str, frozenset[str]] | None = None
        # the program's exception classes defined so far (a base must be defined before),
        # with their lines
        self.exception_classes: dict[str, int] = {}

    # ---- statements -------------------------------------------------------------------
    def body(self, stmts: Iterable[ast.stmt], *, in_method: bool) -> tuple[ir.Stmt, ...]:
        return tuple(self.stmt(s, in_method=in_method) for s in stmts)

    def stmt(self, node: ast.stmt, *, in_method: bool) -> ir.Stmt:
        line = node.lineno
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.For)) else []
        self.binding_now = sum(map(_bindings, targets), Counter())
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1:
                raise self.fail(node, "chained assignment is not supported",
                                "write one assignment per line")
            return ir.Assign(self.target(node.targets[0]), self.expr(node.value), line=line)
        if isinstance(node, ast.AugAssign):
            op = AUG_OPS.get(type(node.op))
            if op is None:
                raise self.fail(node, f"augmented assignment {name_of_node(node.op)} is "
                                "not supported", "use one of += -= *= /=")
            if not isinstance(node.target, (ast.Name, ast.Subscript)):
                raise self.fail(node, "augmented assignment needs a name or subscript target")
            return ir.AugAssign(self.target(node.target), op, self.expr(node.value), line=line)
        if isinstance(node, ast.Expr):
            return ir.ExprStmt(self.expr(node.value), line=line)
        if isinstance(node, ast.Assert):
            msg = None if node.msg is None else self.expr(node.msg)
            return ir.Assert(self.expr(node.test), msg, line=line)
        if isinstance(node, ast.With):
            return self.with_block(node, in_method=in_method)
        if isinstance(node, ast.Raise):
            return self.raise_stmt(node)
        if isinstance(node, ast.For):
            return self.for_loop(node, in_method=in_method)
        if isinstance(node, ast.Return):
            if not in_method:
                raise self.fail(node, "`return` outside a function or a Function's method")
            return ir.Return(None if node.value is None else self.expr(node.value), line=line)
        if isinstance(node, ast.ClassDef):
            if in_method:
                raise self.fail(node, "classes must be defined at the top level")
            if node.name in api.ROOTS or node.name in api.BUILTINS:
                raise self.fail(node, f"cannot name a class `{node.name}`: a reserved name",
                                "choose another class name")
            if len(node.bases) == 1 and isinstance(node.bases[0], ast.Name) and \
                    node.bases[0].id in api.EXCEPTIONS | self.exception_classes.keys():
                return self.exception_class(node)
            return self.function_class(node)
        if isinstance(node, ast.FunctionDef):
            return self.function_def(node, in_method=in_method)
        if isinstance(node, ast.Pass):
            return ir.ExprStmt(ir.Const(None), line=line)
        if isinstance(node, ast.Delete) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Attribute) and \
                node.targets[0].attr in api.DELETABLE:
            target = node.targets[0]
            owner = "not a name" if not isinstance(target.value, ast.Name) else \
                self._not_owned(target.value)
            if owner is not None:
                raise self.fail(node, "`del` takes an attribute of a value the program "
                                f"made ({ast.unparse(target.value)}: {owner})",
                                "e.g. `del x.grad`")
            return ir.Delete(self.expr(target.value), target.attr, line=line)
        kind = name_of_node(node)
        raise self.fail(node, f"`{kind}` statements are not part of the case language",
                        _SYNTAX_FIX.get(kind, "see docs/case-format.md for the statements "
                                        "a case program may use"))

    def with_block(self, node: ast.With, *, in_method: bool) -> ir.With:
        if len(node.items) != 1:
            raise self.fail(node, "`with` takes exactly one context",
                            "nest `with` statements, e.g. `with torch.no_grad():`")
        item = node.items[0]
        name = None
        if item.optional_vars is not None:
            context = item.context_expr
            if isinstance(context, ast.Call) and isinstance(context.func, ast.Name) and \
                    context.func.id in ("raises", "warns", "no_warnings"):
                # the caught exception (its traceback and frames) is not the program's to read
                raise self.fail(node, f"`with {context.func.id}(...)` takes no `as`",
                                "the kind names what is expected; the comparator compares "
                                "the error's type and text")
            target = item.optional_vars
            if not isinstance(target, ast.Name):
                raise self.fail(node, "`with ... as` binds one name",
                                "write `with CONTEXT as NAME:`")
            self.target(target)   # a reserved name is refused as in an assignment
            name = target.id
        return ir.With(self.expr(item.context_expr),
                       self.body(node.body, in_method=in_method), name, line=node.lineno)

    def raise_stmt(self, node: ast.Raise) -> ir.Raise:
        if node.exc is None:
            raise self.fail(node, "a bare `raise` has nothing to re-raise here",
                            "raise an exception: `raise RuntimeError(\"...\")`")
        if node.cause is not None:
            raise self.fail(node, "`raise ... from ...` is not part of the case language",
                            "raise the exception alone")
        exc = node.exc
        func = exc.func if isinstance(exc, ast.Call) else exc
        if not isinstance(func, ast.Name):
            raise self.fail(node, f"cannot raise `{ast.unparse(exc)}`",
                            "raise an exception class of the case language or an instance "
                            f"of one ({', '.join(sorted(api.EXCEPTIONS))}, or a class the "
                            "program derives from one), e.g. `raise RuntimeError(\"...\")`")
        return ir.Raise(self.expr(exc), line=node.lineno)

    def function_def(self, node: ast.FunctionDef, *, in_method: bool) -> ir.Def:
        if in_method:
            raise self.fail(node, "functions must be defined at the top level",
                            "define it before the class, or use a lambda")
        if node.name in api.ROOTS or node.name in api.BUILTINS:
            raise self.fail(node, f"cannot name a function `{node.name}`: a reserved name",
                            "choose another function name")
        a = node.args
        if node.decorator_list or node.returns or a.kwonlyargs or a.posonlyargs or \
                (a.defaults and (a.vararg or a.kwarg)) or \
                any(p.annotation for p in (a.vararg, a.kwarg) if p):
            raise self.fail(node, "a function of the program takes plain positional "
                            "parameters (the last ones may have literal defaults; or "
                            "`*args`, `**kwargs`), with no decorators or annotations",
                            f"write `def {node.name}(grad):`")
        # literal defaults, as the tests' helpers take them (`def fn(x, retain=True)`)
        defaults = tuple(self.default_value(d, node.name) for d in a.defaults)
        body = self.body(node.body, in_method=True)   # `return` and `raise` as in a method
        return ir.Def(node.name, tuple(p.arg for p in a.args), body, line=node.lineno,
                      vararg=a.vararg.arg if a.vararg else None,
                      kwarg=a.kwarg.arg if a.kwarg else None, defaults=defaults)

    def exception_class(self, node: ast.ClassDef) -> ir.ExceptionClass:
        base = node.bases[0]
        assert isinstance(base, ast.Name)
        if node.keywords or node.decorator_list or not all(
                isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(
                    s.value, ast.Constant) and isinstance(s.value.value, str))
                for s in node.body):
            raise self.fail(node, "an exception class holds only `pass` (or a docstring)",
                            f"write `class {node.name}({base.id}): pass`")
        self.exception_classes[node.name] = node.lineno
        return ir.ExceptionClass(node.name, base.id, line=node.lineno)

    def for_loop(self, node: ast.For, *, in_method: bool) -> ir.For:
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and \
                it.func.id == "product":
            return self.product_loop(node, it, in_method=in_method)
        if isinstance(node.target, ast.Name) and isinstance(it, (ast.Tuple, ast.List)) \
                and not node.orelse:
            # `for x in (True, False):`, the loop the tests write over a few values
            if not it.elts or len(it.elts) > api.MAX_RANGE or any(
                    isinstance(e, ast.Starred) for e in it.elts):
                raise self.fail(node, f"a loop over a written tuple takes 1 to "
                                f"{api.MAX_RANGE} values, none starred")
            return ir.For(node.target.id, (), self.body(node.body, in_method=in_method),
                          line=node.lineno, items=tuple(self.expr(e) for e in it.elts))
        if not (isinstance(node.target, ast.Name) and isinstance(it, ast.Call)
                and isinstance(it.func, ast.Name) and it.func.id == "range"
                and not it.keywords and 1 <= len(it.args) <= 3) or node.orelse:
            raise self.fail(node, "only `for NAME in range(...)` loops, loops over a "
                            "written tuple or list (`for NAME in (a, b):`) and over "
                            "product(...) of such tuples of literals are supported")
        args = tuple(self.expr(a) for a in it.args)
        for a in args:
            if isinstance(a, ir.Const) and isinstance(a.value, int) and a.value > api.MAX_RANGE:
                raise self.fail(node, f"range bound {a.value} exceeds {api.MAX_RANGE}",
                                f"keep loops to at most {api.MAX_RANGE} iterations")
        return ir.For(node.target.id, args, self.body(node.body, in_method=in_method),
                      line=node.lineno)

    def product_loop(self, node: ast.For, it: ast.Call, *, in_method: bool) -> ir.For:
        """`for a, b in product((True, False), (1, 2)):` or `product((True, False),
        repeat=2)`, itertools.product over tuples of literals as the tests write their
        grids: nested loops, the first name outermost (product's order). Literals only, so
        that a nested loop's evaluating an inner tuple at each outer pass is product's
        evaluating it once."""
        example = "write `for a, b in product((True, False), (1, 2)):`"
        repeat = 1
        for kw in it.keywords:
            n = kw.value.value if isinstance(kw.value, ast.Constant) else None
            if kw.arg != "repeat" or type(n) is not int or not 1 <= n <= 8:
                raise self.fail(node, "product(...) takes tuples and at most `repeat=N` "
                                "(1 to 8)", example)
            repeat = n
        pools, names = list(it.args) * repeat, getattr(node.target, "elts", None)
        if node.orelse or not pools or names is None or len(names) != len(pools) or \
                not all(isinstance(n, ast.Name) for n in names):
            raise self.fail(node, "a loop over product(...) names one variable per tuple "
                            f"({len(pools)} here)", example)
        for pool in pools:
            if not isinstance(pool, (ast.Tuple, ast.List)) or not pool.elts or \
                    len(pool.elts) > api.MAX_RANGE or not all(map(_literal, pool.elts)):
                raise self.fail(pool, f"product(...) takes tuples or lists written in the "
                                f"program of 1 to {api.MAX_RANGE} literals (numbers, "
                                "strings, True, False, None)", example)
        body = self.body(node.body, in_method=in_method)
        loop: ir.For | None = None
        for name, pool in reversed(list(zip(names, pools, strict=True))):
            loop = ir.For(name.id, (), body, line=node.lineno,
                          items=tuple(self.expr(e) for e in pool.elts))
            body = (loop,)
        assert loop is not None
        return loop

    def target(self, node: ast.expr) -> ir.Expr:
        if isinstance(node, ast.Name):
            if node.id in api.ROOTS or node.id in api.BUILTINS:
                raise self.fail(node, f"cannot assign to the reserved name `{node.id}`",
                                "choose another variable name")
            return ir.Name(node.id)
        if isinstance(node, (ast.Tuple, ast.List)):
            return ir.Tuple(tuple(self.target(e) for e in node.elts))
        if isinstance(node, ast.Subscript):
            if not _node_metadata(node.value):
                self.check_owned(node.value, node)
            return ir.Subscript(self.expr(node.value), self.index(node.slice))
        if isinstance(node, ast.Attribute):
            if self._is_ctx_attribute(node, store=True):
                return ir.Attribute(self.expr(node.value), node.attr)
            self.check_owned(node.value, node)
            if node.attr not in api.SETTABLE:
                raise self.fail(node, f"cannot assign to attribute `{node.attr}`",
                                f"assignable attributes: {', '.join(sorted(api.SETTABLE))}")
            return ir.Attribute(self.expr(node.value), node.attr)
        raise self.fail(node, f"cannot assign to `{name_of_node(node)}`")

    def check_owned(self, base: ast.expr, target: ast.expr) -> None:
        """Isolation: an assignment changes only a value the program made, never an engine
        object that every later case in the process would see changed."""
        problem = self._not_owned(base)
        if problem is not None:
            raise self.fail(target, f"cannot assign to `{ast.unparse(target)}`: {problem}",
                            "a program may set attributes only on values it made: its "
                            "tensors (`x.requires_grad = False`), its modules' parameters "
                            "(`model.weight.grad = None`) and, in a Function, its ctx "
                            "(`ctx.k = k`)")

    def _not_owned(self, node: ast.expr) -> str | None:
        """Why `node` may be an object the program did not make; None when it is its own
        (or, for a call's result, when only the run-time check can tell)."""
        if api.api_path(node) is not None:
            return (f"`{ast.unparse(node)}` belongs to the engine and is shared by every "
                    "case run in the process")
        if isinstance(node, ast.Name):
            if node.id in api.BUILTINS:
                return f"`{node.id}` is a harness builtin"
            if node.id in self.classes:
                return f"`{node.id}` is a class; changing it is not a program's business"
            if node.id in self.engine_aliases:
                line, value = self.engine_aliases[node.id]
                return f"`{node.id}` is bound to `{value}` (line {line}), an engine object"
            return None
        if isinstance(node, ast.Attribute):
            if self.ctx is not None and isinstance(node.value, ast.Name) and \
                    node.value.id == self.ctx[0] and node.attr in self.ctx[1]:
                return None  # the Function's own state
            if node.attr not in api.TENSOR_VALUED:
                return (f"`{ast.unparse(node)}` is an engine object reached by attribute, "
                        "not a value the program made")
            return self._not_owned(node.value)
        if isinstance(node, ast.Subscript):
            return self._not_owned(node.value)
        return None



def _node_metadata(node: ast.expr) -> bool:
    """`<value>.metadata`, a backward node's metadata dict (`out.grad_fn.metadata`): the
    node's own, made for this run's graph, so a program may store items into it, as torch's
    tests store objects whose lifetime they then watch (test_anomaly_assign_parent_cleanup).
    Checked again when run (sandbox._check_item_store)."""
    return isinstance(node, ast.Attribute) and node.attr == "metadata" and \
        api.api_path(node.value) is None


def _engine_aliases(tree: ast.Module, classes: set[str]) -> dict[str, tuple[int, str]]:
    """Names some assignment binds to a class, or to an engine object reached by a dotted
    path or by an attribute other than a tensor-valued one: name -> (line, value source)."""
    aliases: dict[str, tuple[int, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.With):   # `with CONTEXT as NAME:` binds what entering returned
            for item in node.items:
                if isinstance(item.optional_vars, ast.Name):
                    aliases.setdefault(item.optional_vars.id,
                                       (node.lineno, ast.unparse(item.context_expr)))
            continue
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            continue
        value = node.value
        if api.api_path(value) is not None \
                or (isinstance(value, ast.Name) and value.id in classes) \
                or (isinstance(value, ast.Attribute) and value.attr not in api.TENSOR_VALUED):
            aliases.setdefault(node.targets[0].id, (node.lineno, ast.unparse(value)))
    return aliases


def _literal(node: ast.expr) -> bool:
    """A number, string, bool or None written as such (a negative number too)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
        return isinstance(node, ast.Constant) and isinstance(node.value, (int, float,
                                                                           complex))
    return isinstance(node, ast.Constant) and (node.value is None or isinstance(
        node.value, (bool, int, float, complex, str)))


def _bindings(tree: ast.AST) -> Counter[str]:
    """How many times each name is bound under `tree` (targets, parameters, classes)."""
    names: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names[node.id] += 1
        elif isinstance(node, ast.arg):
            names[node.arg] += 1
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names[node.name] += 1
    return names


def parse(source: str, max_nesting: int | None = None) -> ir.Program:
    """The Program written in `source`; CaseError (line relative to `source`) otherwise.
    With `max_nesting`, a program whose statements and expressions nest deeper is refused
    at the line where they do, before the (recursive) conversion."""
    nul = source.find("\x00")
    if nul >= 0:  # ast.parse would refuse it without a line
        raise CaseError("the program contains a null character (U+0000)",
                        line=source.count("\n", 0, nul) + 1,
                        fix="remove it (a `\\0` escape in a quoted scalar makes one)")
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as e:
        raise CaseError(f"syntax error: {e.msg}", line=e.lineno,
                        fix="the program must be valid Python syntax") from None
    except (RecursionError, MemoryError):  # Python's own parser gave up: far too deep
        raise too_deep(max_nesting, line_too_deep_to_parse(source)) from None
    if max_nesting is not None:
        line = nests_beyond(tree, max_nesting)
        if line is not None:
            raise too_deep(max_nesting, line)
    converter = _Converter(tree)
    return ir.Program(converter.body(tree.body, in_method=False))
