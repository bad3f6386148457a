"""The op registry, in the spirit of PyTorch's OpInfo: one row per public op.

From these rows __init__.py makes the package's op exports and `__all__`, and Tensor's
methods that are an op's forward and their in-place forms (tensor.py writes only the
adapters). tests/reference_engine/test_registry.py checks against them what the harness
owns and must not derive from one engine (conformance/api.py's op rows, the generator's op
lists) and that every differentiable op and in-place form has a gradcheck row. The
backward of each op is its OpSpec, next to its forward. Pure data: imports no engine code.

Adding an op: its forward and OpSpec, one row here, one gradcheck row, one case, and its
name in conformance/api.py when case programs may call it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpRow:
    name: str                    # torch's name: `torch.<name>` and/or `Tensor.<name>`
    module: str                  # the engine module whose `<name>` is the forward
    function: bool = True        # exported as `torch.<name>`
    # `Tensor.<name>` is the forward itself (self first, same parameters). False for an op
    # with no method, or whose method tensor.py writes as an adapter (varargs shapes, where's
    # argument order), which is then kept as written.
    method: bool = True
    inplace: str | None = None   # the module whose `<name>_` is `Tensor.<name>_`
    differentiable: bool = True  # gradcheck must have a row for it (and its in-place form)

    @property
    def inplace_name(self) -> str | None:
        return None if self.inplace is None else self.name + "_"


def _rows(module: str, names: str, *, function: bool = True, method: bool = True,
          inplace: str | None = None, differentiable: bool = True) -> tuple[OpRow, ...]:
    return tuple(OpRow(n, module, function, method, inplace, differentiable)
                 for n in names.split())


OPS: tuple[OpRow, ...] = (
    # elementwise arithmetic and unary (ops.py)
    *_rows("ops", "add sub mul div pow neg exp log sqrt abs sin cos tanh sigmoid relu clamp",
           inplace="inplace"),
    *_rows("ops", "reciprocal maximum minimum clone"),
    OpRow("where", "ops", method=False),          # Tensor.where(cond, other): an adapter
    OpRow("rsub", "ops", method=False),
    OpRow("addmm", "ops", method=False),
    *_rows("ops", "signbit isnan", differentiable=False),
    OpRow("equal", "ops", method=False, differentiable=False),
    OpRow("allclose", "ops", method=False, differentiable=False),
    OpRow("to", "ops", function=False),
    # products (ops.py, linalg.py)
    *_rows("ops", "mm mv matmul dot"),
    OpRow("bmm", "linalg"),
    # reductions (ops.py, reductions.py)
    *_rows("ops", "sum mean"),
    *_rows("reductions", "prod amax amin max min softmax log_softmax"),
    # joining and indexing (ops.py, indexing.py)
    *_rows("ops", "cat stack", method=False),
    *_rows("indexing", "gather index_select"),
    OpRow("masked_fill", "indexing", inplace="inplace"),
    # views (views.py); their in-place forms restride the tensor itself
    *_rows("views", "t transpose squeeze unsqueeze", inplace="views"),
    *_rows("views", "flatten narrow diagonal unbind split chunk"),
    *_rows("views", "reshape permute", method=False),   # Tensor's take varargs shapes
    OpRow("select", "views", function=False),
    # in-place ops with no out-of-place form here (inplace.py)
    *_rows("inplace", "zero_ fill_ copy_", function=False),
)

# issue 10's gaps (appended rows, until the tables are reconciled): argmax, argmin.
OPS = (*OPS, *_rows("reductions", "argmax argmin", differentiable=False))

FUNCTIONS: tuple[str, ...] = tuple(r.name for r in OPS if r.function)
METHODS: tuple[str, ...] = tuple(r.name for r in OPS if r.method)
INPLACE: tuple[str, ...] = tuple(r.inplace_name for r in OPS if r.inplace_name)
