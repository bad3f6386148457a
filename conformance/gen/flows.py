"""Where a generated program compares a tangent or a complex gradient: static data-flow
walks of its assignments, as `check._GradFlow` does for backward mode, for the hit-rate
table (conformance.gen.program_check.hits).

- `jvp:<op>`: a tangent unpacked (`fwAD.unpack_dual(y)`, on a statement that completed on
  torch) went through that op: `y` was made, inside a dual level, by expressions over
  names that carry a tangent (`fwAD.make_dual`'s results and what is made from them);
  `jvp:Function.apply` for a custom Function's jvp. `observed_tangent` when one was.
- `complex_grad:<op>`: a backward that completed on torch ran from a value made, through
  that op, from complex values (`torch.complex(...)`, a `dtype=torch.complex*` factory and
  what is made from them; a real value made of complex ones, `abs`, `.real`, `.imag`,
  `view_as_real`, carries their ops but adds none of its own). `completed_complex_backward`
  when one did.

Like `_GradFlow` they follow assignments only (not views' bases nor hooks): they can miss
an op, never invent one a statement lacks.
"""

from __future__ import annotations

from conformance.case import program as ir
from conformance.gen.reading import BACKWARD_CALLS, names_in, nodes, ops_in

Ops = frozenset[str]
APPLY = "Function.apply"
_REAL_OF_COMPLEX_METHODS = frozenset({"abs", "angle"})
_REAL_OF_COMPLEX_ATTRS = frozenset({"real", "imag"})
COMPLEX_DTYPES = frozenset({"complex64", "complex128", "cfloat", "cdouble"})


def _targets(target: ir.Expr) -> list[str]:
    elts = target.elts if isinstance(target, ir.Tuple) else (target,)
    return [e.id for e in elts if isinstance(e, ir.Name)]


def _through(e: object, history: dict[str, Ops]) -> Ops | None:
    """The ops `e` goes through from the names in `history` (theirs and its own), None if
    it reads none of them."""
    refs = [r for r in names_in(e) if r in history]
    if not refs:
        return None
    own = set(ops_in(e))
    if any(isinstance(n, ir.Attribute) and n.attr == "apply" for n in nodes(e)):
        own.add(APPLY)
    return frozenset(own).union(*(history[r] for r in refs))


class _Flow:
    """Walks assignments, in-place methods and augmented assignments, keeping for each
    name the ops its value went through (`history`); subclasses say which names start one
    and where a comparison happens."""

    def __init__(self, ok_lines: set[int]) -> None:
        self.ok_lines = ok_lines
        self.history: dict[str, Ops] = {}
        self.compared: set[str] = set()
        self.observed = False

    def run(self, body: tuple[ir.Stmt, ...]) -> None:
        for stmt in body:
            if isinstance(stmt, ir.With):
                self.block(stmt)
            elif isinstance(stmt, ir.For):
                self.run(stmt.body)
            elif isinstance(stmt, ir.Assign):
                self.assign(stmt)
            elif isinstance(stmt, ir.AugAssign) and isinstance(stmt.target, ir.Name):
                self.write(stmt.target.id, stmt)
            elif isinstance(stmt, ir.ExprStmt) and isinstance(stmt.value, ir.Call) and \
                    isinstance(stmt.value.func, ir.Attribute):
                self.call(stmt, stmt.value.func)

    def block(self, stmt: ir.With) -> None:
        self.run(stmt.body)

    def assign(self, stmt: ir.Assign) -> None:
        if isinstance(stmt.target, ir.Subscript) and isinstance(stmt.target.value, ir.Name):
            self.write(stmt.target.value.id, stmt.value)
            return
        history = self.made(stmt.value)
        for n in _targets(stmt.target):
            if history is None:
                self.history.pop(n, None)
            else:
                self.history[n] = history

    def made(self, value: ir.Expr) -> Ops | None:
        return _through(value, self.history)

    def write(self, target: str, e: object) -> None:
        """An in-place write into `target` of a value computed from `e` (and target)."""
        found = _through(e, self.history)
        if found is not None or target in self.history:
            self.history[target] = self.history.get(target, frozenset()) | (found or Ops())

    def call(self, stmt: ir.Stmt, func: ir.Attribute) -> None:
        if func.attr.endswith("_") and isinstance(func.value, ir.Name):
            self.write(func.value.id, stmt)


def _unpacked(value: ir.Expr) -> str | None:
    """`y` of `fwAD.unpack_dual(y)` or `fwAD.unpack_dual(y).tangent`."""
    if isinstance(value, ir.Attribute) and value.attr == "tangent":
        value = value.value
    if isinstance(value, ir.Call) and ir.dotted(value.func) == "fwAD.unpack_dual" and \
            value.args and isinstance(value.args[0], ir.Name):
        return value.args[0].id
    return None


class _TangentFlow(_Flow):
    def __init__(self, ok_lines: set[int]) -> None:
        super().__init__(ok_lines)
        self.level = False

    def block(self, stmt: ir.With) -> None:
        context = stmt.context.func if isinstance(stmt.context, ir.Call) else stmt.context
        if ir.dotted(context) != "fwAD.dual_level":
            self.run(stmt.body)
            return
        self.level = True
        self.run(stmt.body)
        self.level = False
        self.history.clear()  # the level's exit drops every tangent made in it

    def assign(self, stmt: ir.Assign) -> None:
        source = _unpacked(stmt.value)
        if source is not None and source in self.history and stmt.line in self.ok_lines:
            self.compared |= self.history[source]
            self.observed = True
        super().assign(stmt)

    def made(self, value: ir.Expr) -> Ops | None:
        if not self.level or _unpacked(value) is not None:
            return None  # an unpacked primal or tangent carries no tangent
        if isinstance(value, ir.Call) and ir.dotted(value.func) == "fwAD.make_dual":
            return Ops()
        return super().made(value)


def _makes_complex(value: ir.Expr) -> bool:
    for n in nodes(value, into_lambdas=False):
        if isinstance(n, ir.Call) and ir.dotted(n.func) == "torch.complex":
            return True
        if isinstance(n, ir.Keyword) and n.name == "dtype" and \
                (ir.dotted(n.value) or "").removeprefix("torch.") in COMPLEX_DTYPES:
            return True
    return False


def _real_of_complex(value: ir.Expr) -> bool:
    """A real value of a complex one, at the top of the expression."""
    if isinstance(value, ir.Attribute):
        return value.attr in _REAL_OF_COMPLEX_ATTRS
    if isinstance(value, ir.Call) and isinstance(value.func, ir.Attribute):
        return value.func.attr in _REAL_OF_COMPLEX_METHODS or \
            ir.dotted(value.func) == "torch.view_as_real"
    return False


class _ComplexFlow(_Flow):
    """`history` holds the complex names; `real` the real names made of complex ones."""

    def __init__(self, ok_lines: set[int]) -> None:
        super().__init__(ok_lines)
        self.real: dict[str, Ops] = {}

    def assign(self, stmt: ir.Assign) -> None:
        value = stmt.value
        carried = _through(value, self.real)
        super().assign(stmt)
        for n in _targets(stmt.target):
            self.real.pop(n, None)
            if n in self.history and _real_of_complex(value):
                self.real[n] = self.history.pop(n)
            elif n not in self.history and carried is not None:
                # real ops on a real value made of complex ones add nothing: theirs only
                self.real[n] = frozenset().union(*(self.real[r] for r in names_in(value)
                                                   if r in self.real))

    def made(self, value: ir.Expr) -> Ops | None:
        found = super().made(value)
        if found is None and _makes_complex(value):
            return frozenset(ops_in(value))
        return found

    def call(self, stmt: ir.Stmt, func: ir.Attribute) -> None:
        if func.attr in BACKWARD_CALLS and stmt.line in self.ok_lines:
            root = func.value
            for r in names_in(root):
                if r in self.real or r in self.history:
                    self.compared |= self.real.get(r, Ops()) | self.history.get(r, Ops())
                    self.observed = True
        super().call(stmt, func)


def tangent_hits(program: ir.Program, ok_lines: set[int]) -> set[str]:
    flow = _TangentFlow(ok_lines)
    flow.run(program.body)
    return {f"jvp:{op}" for op in flow.compared} | ({"observed_tangent"} if flow.observed
                                                    else set())


def complex_hits(program: ir.Program, ok_lines: set[int]) -> set[str]:
    flow = _ComplexFlow(ok_lines)
    flow.run(program.body)
    return {f"complex_grad:{op}" for op in flow.compared} | (
        {"completed_complex_backward"} if flow.observed else set())
