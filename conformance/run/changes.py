"""What one statement can have changed: which names a step must snapshot afresh.

A step's snapshot of a name is reused from the step before when the statement cannot
have changed anything that snapshot records (values, version, grad_fn and graph,
requires_grad, is_leaf, retains_grad, is_view, the .grad). The rule is deliberately
coarse, so that it is obviously right:

- A statement is *pure* when everything it evaluated is a read or an out-of-place
  computation: constants, names, attribute and item reads, operators (`+`, `<`, `not`,
  ...), and calls of the ops in the API table that make new values (`torch.mul`,
  `x.view(...)`, `torch.zeros`, `x.sum()`; no `out=` or `inplace=` argument, nor an
  nn.functional call's positional True, its inplace flag by position) and the
  harness's `len`, `range`, `float`, `int`, `assert_close`. Such a statement changes no
  existing tensor: creating a view or a graph node on top of a tensor leaves that tensor's
  own storage, version, node and edges as they were. Only the names it assigns are new.
- Anything else makes the step take the full snapshot: in-place ops (`x.mul_()`, `+=`,
  item and attribute stores, `.data =`), autograd calls (`backward`, `autograd.grad`,
  which write `.grad`s, free buffers and run hooks), `retain_grad`, `requires_grad_`, hook
  registrations, module calls and methods, a custom Function's `apply`, program code
  (lambdas, Function methods: anything may happen there), global switches
  (`set_grad_enabled`), and compound statements (`with`, `for`, classes), whose entry
  (a context manager, saved-tensor hooks) is not itself a step.
- But for a *quiet* `with`: its context is a call of one of QUIET_CONTEXTS (grad modes, a
  dual level), whose entry and exit change nothing a snapshot records, with constants or
  names for arguments (evaluating them changes nothing either). Its first inner step is
  then observed by that step's own rule, and the step after its exit reuses every name
  bound to the same object as at the last inner step (the exit binds no name).

Which calls are pure is decided while the statement runs (the interpreter reports each call
through `Effects.call`), on the value actually called: a method is pure only on an engine
tensor (a module's `double()` converts its parameters in place).
`tests/conformance/test_incremental_snapshots.py` holds this against the full snapshot, on
generated programs and on every case file, on both engines.
"""

from __future__ import annotations

from typing import Any

from conformance.case import api
from conformance.case import program as ir

# What is pure is declared with the API table (case/api.py); read from there.
PURE_METHODS, PURE_PATHS, PURE_BUILTINS = api.PURE_METHODS, api.PURE_FUNCTIONS, api.PURE_BUILTINS
# Context managers whose entry and exit change nothing a snapshot records: grad modes are
# no field of a tensor, and leaving a dual level drops the tangents, which no snapshot holds
# (a tangent is read through unpack_dual's result, a tensor of its own that stays as it was).
QUIET_CONTEXTS: frozenset[str] = frozenset({
    "torch.no_grad", "torch.enable_grad", "torch.set_grad_enabled", "torch.inference_mode",
    "torch.autograd.forward_ad.dual_level"})
# Keyword arguments through which an otherwise pure call writes into an existing tensor.
WRITING_KEYWORDS: frozenset[str] = frozenset({"out", "inplace"})
# ... and torch.nn.functional's `inplace` flag given by position (`F.threshold(x, 0, 0,
# True)`, `F.relu(x, True)`): any positional True there counts as one (a `training` flag
# too, which only costs a fresh snapshot).
POSITIONAL_FLAG_PREFIX = "torch.nn.functional."


def assigned_names(stmt: ir.Stmt) -> frozenset[str] | None:
    """The names a simple statement binds (none for an expression or assert); None for a
    statement that is never pure (a store into an item or attribute, `+=`, compound)."""
    if isinstance(stmt, ir.Assign):
        names: set[str] = set()
        return frozenset(names) if _targets(stmt.target, names) else None
    if isinstance(stmt, (ir.ExprStmt, ir.Assert)):
        return frozenset()
    if isinstance(stmt, ir.With) and quiet_with(stmt):
        return frozenset()  # its `as` name was bound on entry, seen by its first inner step
    return None


def quiet_with(stmt: ir.Stmt) -> bool:
    """Whether `stmt` is a `with` whose entry and exit change nothing a snapshot records:
    a call of a QUIET_CONTEXTS path with constants or names for arguments."""
    if not isinstance(stmt, ir.With) or not isinstance(stmt.context, ir.Call):
        return False
    call = stmt.context
    return api.api_path(call.func) in QUIET_CONTEXTS and all(
        isinstance(a, (ir.Const, ir.Name)) for a in (*call.args, *(k.value for k in call.keywords)))


def _targets(target: ir.Expr, names: set[str]) -> bool:
    if isinstance(target, ir.Name):
        names.add(target.id)
        return True
    if isinstance(target, ir.Tuple):
        return all(_targets(t, names) for t in target.elts)
    return False


class Effects:
    """Whether the statement running has so far done only pure things (see the module)."""

    def __init__(self) -> None:
        self.pure = True

    def call(self, func_e: ir.Expr, path: str | None, is_tensor_method: bool,
             args: list[Any], kwargs: dict[str, Any]) -> None:
        """A call about to be made: `path` is its API path (None for a method or a value
        called), `is_tensor_method` whether it is a method bound to an engine tensor."""
        if not self.pure:
            return
        if WRITING_KEYWORDS.intersection(kwargs) or (
                path is not None and path.startswith(POSITIONAL_FLAG_PREFIX)
                and any(a is True for a in args)):
            self.pure = False
        elif path is not None:
            self.pure = path in PURE_PATHS
        elif is_tensor_method:
            self.pure = isinstance(func_e, ir.Attribute) and func_e.attr in PURE_METHODS
        else:
            self.pure = isinstance(func_e, ir.Name) and func_e.id in PURE_BUILTINS
