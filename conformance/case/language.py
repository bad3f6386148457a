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

from conformance.case import api, kinds, operators
from conformance.case import program as ir
from conformance.case.diagnostics import CaseError
from conformance.case.program import to_source  # noqa: F401  (printing lives with the IR)

BINARY_OPS: dict[type, str] = {o.node: o.symbol for o in operators.BINARY}
UNARY_OPS: dict[type, str] = {o.node: o.symbol for o in operators.UNARY}
COMPARE_OPS: dict[type, str] = {o.node: o.symbol for o in operators.COMPARE}
AUG_OPS: dict[type, str] = {o.node: o.symbol for o in operators.AUGMENTED}
# torch's Function defines each of them raising (forward: "You must implement the forward
# function", backward and its alias vjp: "... either the backward or vjp method"; a class with
# both is refused at backward), so a class may leave any out, as torch's tests do.
FUNCTION_METHODS = ("forward", "backward", "vjp")
JVP = "jvp"   # optional: forward mode's formula (ctx, *input tangents)
SETUP_CONTEXT = ir.SETUP_CONTEXT
# Decorators a Function method may carry, outermost first: staticmethod, then optionally
# once_differentiable (on backward).
FUNCTION_DECORATORS = frozenset({"staticmethod", "torch.autograd.function.once_differentiable"})

_SYNTAX_FIX = {
    "Import": "the case language has no imports; use the names torch, nn, F and Variable",
    "ImportFrom": "the case language has no imports; use the names torch, nn, F and Variable",
    "FunctionDef": "use a lambda for hooks, or a class deriving torch.autograd.Function",
    "While": "use `for i in range(n)` with a bounded n",
    "If": "the case language has no branches; write one case per behaviour",
    "Try": "use `with raises(\"kind\"):` to expect an error",
    "Global": "names are global already", "Nonlocal": "names are global already",
    "Delete": "rebind the name instead (e.g. `x = None`)",
}


def _name_of_node(node: ast.AST) -> str:
    return type(node).__name__


class _Converter:
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

    def fail(self, node: ast.AST, message: str, fix: str | None = None) -> CaseError:
        return CaseError(message, line=getattr(node, "lineno", None), fix=fix)

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
                raise self.fail(node, f"augmented assignment {_name_of_node(node.op)} is "
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
            if len(node.items) != 1 or node.items[0].optional_vars is not None:
                raise self.fail(node, "`with` takes exactly one context and no `as`",
                                "nest `with` statements, e.g. `with torch.no_grad():`")
            return ir.With(self.expr(node.items[0].context_expr),
                           self.body(node.body, in_method=in_method), line=line)
        if isinstance(node, ast.For):
            return self.for_loop(node, in_method=in_method)
        if isinstance(node, ast.Return):
            if not in_method:
                raise self.fail(node, "`return` outside a Function's forward/backward")
            return ir.Return(None if node.value is None else self.expr(node.value), line=line)
        if isinstance(node, ast.ClassDef):
            if in_method:
                raise self.fail(node, "classes must be defined at the top level")
            if node.name in api.ROOTS or node.name in api.BUILTINS:
                raise self.fail(node, f"cannot name a class `{node.name}`: a reserved name",
                                "choose another class name")
            return self.function_class(node)
        if isinstance(node, ast.Pass):
            return ir.ExprStmt(ir.Const(None), line=line)
        kind = _name_of_node(node)
        raise self.fail(node, f"`{kind}` statements are not part of the case language",
                        _SYNTAX_FIX.get(kind, "see docs/case-format.md for the statements "
                                        "a case program may use"))

    def for_loop(self, node: ast.For, *, in_method: bool) -> ir.For:
        it = node.iter
        if not (isinstance(node.target, ast.Name) and isinstance(it, ast.Call)
                and isinstance(it.func, ast.Name) and it.func.id == "range"
                and not it.keywords and 1 <= len(it.args) <= 3) or node.orelse:
            raise self.fail(node, "only `for NAME in range(...)` loops are supported")
        args = tuple(self.expr(a) for a in it.args)
        for a in args:
            if isinstance(a, ir.Const) and isinstance(a.value, int) and a.value > api.MAX_RANGE:
                raise self.fail(node, f"range bound {a.value} exceeds {api.MAX_RANGE}",
                                f"keep loops to at most {api.MAX_RANGE} iterations")
        return ir.For(node.target.id, args, self.body(node.body, in_method=in_method),
                      line=node.lineno)

    def function_class(self, node: ast.ClassDef) -> ir.FunctionClass:
        if (len(node.bases) != 1 or node.keywords or node.decorator_list
                or _dotted(node.bases[0]) not in ("torch.autograd.Function",)):
            raise self.fail(node, "a class must derive from torch.autograd.Function alone",
                            f"write `class {node.name}(torch.autograd.Function):`")
        methods = []
        setup = _has_setup_context(node)
        for item in node.body:
            if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) and \
                    isinstance(item.value.value, str):
                continue  # a docstring
            if not isinstance(item, ast.FunctionDef) or \
                    item.name not in (*FUNCTION_METHODS, SETUP_CONTEXT, JVP):
                raise self.fail(item, "a Function class holds only `forward`, `backward` "
                                "(or its alias `vjp`), `setup_context` and `jvp`",
                                "define `@staticmethod def forward(ctx, ...)` and "
                                "`@staticmethod def backward(ctx, ...)`")
            decorators = tuple(_dotted(d) or "?" for d in item.decorator_list)
            if decorators[:1] != ("staticmethod",) or not set(decorators) <= \
                    FUNCTION_DECORATORS or len(set(decorators)) != len(decorators):
                raise self.fail(item, f"`{item.name}` must be decorated with @staticmethod "
                                "(outermost), optionally followed by "
                                "@torch.autograd.function.once_differentiable")
            a = item.args
            if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
                raise self.fail(item, "Function methods take plain positional parameters")
            params = tuple(p.arg for p in a.args)
            if setup and item.name == "forward":
                self.ctx = None   # forward(*inputs): ctx is setup_context's
            elif not params:
                raise self.fail(item, f"`{item.name}` takes ctx as its first parameter")
            else:
                self.ctx = (params[0], _ctx_attributes(node))
            try:
                body = self.body(item.body, in_method=True)
            finally:
                self.ctx = None
            methods.append(ir.Method(item.name, params, body, decorators, line=item.lineno))
        if not {m.name for m in methods} & set(FUNCTION_METHODS):
            raise self.fail(node, f"class {node.name} defines none of forward, backward and "
                            "vjp", "define `@staticmethod def forward(ctx, ...)` and "
                            "`@staticmethod def backward(ctx, ...)`")
        return ir.FunctionClass(node.name, tuple(methods), line=node.lineno)

    def target(self, node: ast.expr) -> ir.Expr:
        if isinstance(node, ast.Name):
            if node.id in api.ROOTS or node.id in api.BUILTINS:
                raise self.fail(node, f"cannot assign to the reserved name `{node.id}`",
                                "choose another variable name")
            return ir.Name(node.id)
        if isinstance(node, (ast.Tuple, ast.List)):
            return ir.Tuple(tuple(self.target(e) for e in node.elts))
        if isinstance(node, ast.Subscript):
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
        raise self.fail(node, f"cannot assign to `{_name_of_node(node)}`")

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
        if _api_path(node) is not None:
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

    # ---- expressions ------------------------------------------------------------------
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
        if isinstance(node, ast.BinOp):
            op = BINARY_OPS.get(type(node.op))
            if op is None:
                raise self.fail(node, f"operator {_name_of_node(node.op)} is not supported",
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
                raise self.fail(node, f"operator {_name_of_node(node.op)} is not supported",
                                f"use one of {' '.join(UNARY_OPS.values())}")
            return ir.UnaryOp(uop, self.expr(node.operand))
        if isinstance(node, ast.Compare):
            ops = []
            for o in node.ops:
                c = COMPARE_OPS.get(type(o))
                if c is None:
                    raise self.fail(node, f"comparison {_name_of_node(o)} is not supported",
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
        kind = _name_of_node(node)
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
        base = _namespace_path(node.value)
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
        elif f"{_api_object_path(node.value)}.{node.attr}" in api.FUNCTIONS:
            pass  # a path of the table through an API object (Variable._execution_engine)
        elif _api_object_path(node.value) is not None and \
                node.attr not in api.OBJECT_ATTRIBUTES["Function class"]:
            # a class or function of the engine's API: calling `torch.autograd.Function.
            # mark_dirty(nn.Parameter)` would write onto a class every later case shares
            raise self.fail(node, f"attribute `{node.attr}` of the engine's "
                            f"`{_api_object_path(node.value)}` is not in the supported API",
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
        return call

    def check_expectation(self, node: ast.Call, call: ir.Call) -> None:
        """`raises(kind)` / `warns(kind)` must name a known kind, checked at load time."""
        if not (isinstance(call.func, ir.Name) and call.func.id in ("raises", "warns")):
            return
        valid = kinds.WARNING_KINDS if call.func.id == "warns" else kinds.ERROR_KINDS
        if len(call.args) != 1 or call.keywords or not (
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

    def index(self, node: ast.expr) -> ir.Expr:
        if isinstance(node, ast.Slice):
            return ir.Slice(*(None if p is None else self.expr(p)
                              for p in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Tuple):
            return ir.Tuple(tuple(self.index(e) for e in node.elts))
        if isinstance(node, ast.Constant) and node.value is Ellipsis:
            return ir.Const(Ellipsis)
        return self.expr(node)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _api_path(node: ast.expr) -> str | None:
    """The API path `node` spells from a root, whether or not the table has it (api.rooted)."""
    return api.rooted(_dotted(node))


def _namespace_path(node: ast.expr) -> str | None:
    """The API path of `node` when it is a root or a namespace reached from one."""
    path = _api_path(node)
    return path if path in api.NAMESPACES else None


def _api_object_path(node: ast.expr) -> str | None:
    """The API path of `node` when it is a function or class of the table reached from a
    root (not a namespace)."""
    path = _api_path(node)
    return path if path in api.FUNCTIONS else None


def _has_setup_context(cls: ast.ClassDef) -> bool:
    return any(isinstance(m, ast.FunctionDef) and m.name == SETUP_CONTEXT for m in cls.body)


def _ctx_attributes(cls: ast.ClassDef) -> frozenset[str]:
    """Attribute names the class's methods assign on their first parameter (ctx)."""
    names: set[str] = set()
    setup = _has_setup_context(cls)
    for method in cls.body:
        if isinstance(method, ast.FunctionDef) and method.args.args and \
                ir.method_has_ctx(method.name, setup):
            ctx = method.args.args[0].arg
            for node in ast.walk(method):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                        isinstance(node.value, ast.Name) and node.value.id == ctx:
                    names.add(node.attr)
    return frozenset(names)


def _engine_aliases(tree: ast.Module, classes: set[str]) -> dict[str, tuple[int, str]]:
    """Names some assignment binds to a class, or to an engine object reached by a dotted
    path or by an attribute other than a tensor-valued one: name -> (line, value source)."""
    aliases: dict[str, tuple[int, str]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            continue
        value = node.value
        if _api_path(value) is not None \
                or (isinstance(value, ast.Name) and value.id in classes) \
                or (isinstance(value, ast.Attribute) and value.attr not in api.TENSOR_VALUED):
            aliases.setdefault(node.targets[0].id, (node.lineno, ast.unparse(value)))
    return aliases


def _bindings(tree: ast.AST) -> Counter[str]:
    """How many times each name is bound under `tree` (targets, parameters, classes)."""
    names: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names[node.id] += 1
        elif isinstance(node, ast.arg):
            names[node.arg] += 1
        elif isinstance(node, ast.ClassDef):
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
        raise _too_deep(max_nesting, _line_too_deep_to_parse(source)) from None
    if max_nesting is not None:
        line = _nests_beyond(tree, max_nesting)
        if line is not None:
            raise _too_deep(max_nesting, line)
    converter = _Converter(tree)
    return ir.Program(converter.body(tree.body, in_method=False))


def _too_deep(max_nesting: int | None, line: int | None) -> CaseError:
    deep = "too deep for Python's parser" if max_nesting is None else \
        f"more than {max_nesting} levels deep"
    return CaseError(f"the program nests {deep}", line=line,
                     fix="split deep expressions into several assignments")


def _nests_beyond(tree: ast.Module, limit: int) -> int | None:
    """The first line where statements and expressions nest more than `limit` deep, or
    None. Iterative: the tree may be deeper than the stack allows. A negative number literal
    is one level, as the IR has it (Const(-2.0))."""
    stack: list[tuple[ast.AST, int, int]] = [(tree, 0, 0)]
    while stack:
        node, depth, line = stack.pop()
        if isinstance(node, (ast.stmt, ast.expr)):
            depth += 1
            line = getattr(node, "lineno", line)
            if depth > limit:
                return line
        children = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
                isinstance(node.operand, ast.Constant) and \
                type(node.operand.value) in (int, float):
            children = []  # one constant in the IR
        stack.extend((child, depth, line) for child in reversed(children))
    return None


def _line_too_deep_to_parse(source: str) -> int | None:
    """The line at which Python's parser gives up for depth: the fewest first lines of
    `source` it cannot parse for depth (bisected; a prefix cut inside the deep part is as
    deep), or None if none is."""
    lines = source.split("\n")

    def too_deep(count: int) -> bool:
        try:
            ast.parse("\n".join(lines[:count]))
        except (RecursionError, MemoryError):
            return True
        except SyntaxError:  # an unfinished statement, before its depth was reached
            return False
        return False

    low, high = 1, len(lines)
    if not too_deep(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if too_deep(middle):
            high = middle
        else:
            low = middle + 1
    return low
