"""The generator's op table, derived from the engine's op registry: how each
differentiable registry row is called (`GenOp`), which rows a program's settings allow,
and how often each is drawn. The statements that call them are in `conformance.gen.op_calls`.

How a row is called follows from its sample (reference_engine.registry): one input and
number arguments is a pointwise op on any tensor; two inputs and no arguments broadcast; a
reduction that takes a dim is drawn with dim/keepdim; any other row is called on inputs of
its sample's shapes with its sample's arguments, its result shapes read once from torch.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any, cast

from conformance.case import operators
from conformance.case import program as ir
from conformance.gen.state import (
    DEFAULT_DTYPE,
    GenSettings,
    Shape,
    call,
    const,
    fits_settings,
    nested,
    torch_fn,
)
from reference_engine import registry

POINTWISE, BROADCAST, REDUCTION, SAMPLE = "pointwise", "broadcast", "reduction", "sample"
# The operators that are an op of the registry (`x + y` is `add`): from the operator table,
# by the name of the Python function each evaluates with.
_OPERATOR_NAME = {"truediv": "div"}
OPERATOR_OF: dict[str, str] = {
    _OPERATOR_NAME.get(o.function.__name__, o.function.__name__): o.symbol
    for o in operators.BINARY
    if _OPERATOR_NAME.get(o.function.__name__, o.function.__name__) in registry.FUNCTIONS}
OPERATOR_OP: dict[str, str] = {symbol: op for op, symbol in OPERATOR_OF.items()}
AUGMENTED = frozenset(o.symbol for o in operators.AUGMENTED)
# Products computed by a BLAS kernel are drawn on float64 operands (where the settings allow
# it): their float32 rounding depends on the kernel's summation order, which is not the
# reference engine's to reproduce, and an op after them magnifies it past float32's
# tolerance (found by the generator: `torch.exp(torch.addmm(...))` in float32,
# 4.1645226e+08 against 4.1645149e+08). In float64 the same rounding stays far inside.
BLAS_PRODUCTS = frozenset(
    {"addmm", *(r.name for r in registry.OPS if r.feature == "matmul")})


@dataclass(frozen=True)
class GenOp:
    """A registry row as the generator calls it."""

    row: registry.OpRow
    form: str                         # POINTWISE, BROADCAST, REDUCTION or SAMPLE
    outputs: tuple[Shape, ...]        # the sample call's result shapes (several: a tuple)
    dim_result_tuple: bool = False    # REDUCTION: with a dim it returns (values, indices)
    # the positions of its floating results, the ones a program goes on with: an integer
    # result (indices, frexp's exponent, solve_ex's info) has no gradient, and fed to a
    # later row it only tests that row's integer kernel, which rows modelled for floating
    # inputs refuse (masked.*: 13 of 170 probe programs with every row drawn)
    floating: tuple[int, ...] = (0,)

    @cached_property  # (these are read for every op drawn)
    def name(self) -> str:
        return self.row.name

    @cached_property
    def sample(self) -> registry.Sample:
        assert self.row.sample is not None
        return self.row.sample

    def arg_exprs(self, dtype: str) -> tuple[ir.Expr, ...]:
        """Its sample's arguments after the inputs, as expressions, a floating constant (a
        source) in `dtype`, its first input's (nodes are immutable: every call shares
        them)."""
        found = self._arg_exprs.get(dtype)
        if found is None:
            found = self._arg_exprs[dtype] = tuple(_arg_expr(a, dtype)
                                                   for a in self.sample.args)
        return found

    @cached_property
    def _arg_exprs(self) -> dict[str, tuple[ir.Expr, ...]]:
        return {}

    @property
    def weight(self) -> int:
        """How often it is an op action's first op, relative to a pointwise op (see
        weighted_ops): twice for a row only ever drawn so (called on its sample's shapes,
        only on positive values, or in place only), since the others are also drawn as the
        next op of a chain (`torch.sin(x).exp()`)."""
        if self.row.name.endswith("_") or self.form == SAMPLE or self.sample.positive:
            return 2
        return 1

    @cached_property
    def forms(self) -> tuple[str, ...]:
        """How it is called: `function` (torch.op), `method` (x.op), `inplace` (x.op_, or
        the row itself when its name is an in-place method), `operator` (x + y)."""
        if self.row.name.endswith("_"):
            return ("inplace",)
        found = [f for f, ok in (("function", self.row.function), ("method", self.row.method),
                                 ("inplace", self.row.inplace is not None),
                                 ("operator", self.row.name in OPERATOR_OF)) if ok]
        return tuple(found)

    @cached_property
    def nested_forms(self) -> tuple[str, ...]:
        """Its forms as a value inside another op's statement: out of place."""
        return tuple(f for f in self.forms if f != "inplace") or ("function",)

    def fits(self, settings: GenSettings) -> bool:
        """A row called on its sample's shapes can be drawn only where they are allowed."""
        if self.form in (POINTWISE, BROADCAST):
            return True
        shapes = self.sample.shapes + tuple(_const_shape(a.values) for a in self.sample.args
                                            if isinstance(a, registry.Const))
        if self.form == REDUCTION:
            shapes = ()
        return all(fits_settings(s, settings) for s in shapes)


def _const_shape(values: object) -> Shape:
    return (len(values), *_const_shape(values[0])) if isinstance(values, list) else ()


def torch_args(sample: registry.Sample) -> list[Any]:
    import torch

    return [torch.tensor(a.values, dtype=getattr(torch, a.dtype))
            if isinstance(a, registry.Const) else a for a in sample.args]


def torch_call(row: registry.OpRow, inputs: list[Any], args: list[Any], **kwargs: Any
                ) -> Any:
    import torch

    if row.function:
        return _resolve(torch, row.name)(*inputs, *args, **kwargs)
    return getattr(inputs[0], row.name)(*inputs[1:], *args, **kwargs)


def _resolve(module: Any, dotted: str) -> Any:
    """`module.a.b` for "a.b" (a namespaced row: `torch.nn.functional.relu`)."""
    for part in dotted.split("."):
        module = getattr(module, part)
    return module


def _shapes_of(result: Any) -> tuple[Shape, ...]:
    items = result if isinstance(result, (tuple, list)) else (result,)
    return tuple(tuple(t.shape) for t in items)


def _floating_of(result: Any) -> tuple[int, ...]:
    items = result if isinstance(result, (tuple, list)) else (result,)
    return tuple(i for i, t in enumerate(items) if t.dtype.is_floating_point)


# Shapes on which a row is tried, to tell how it may be drawn: a pointwise op keeps any
# shape, a broadcasting one takes any pair that broadcasts (tried, not assumed from the
# row's family: tril wants 2 dims, a loss reduces to 0-d).
_POINTWISE_TRIALS = ((), (2,), (2, 1, 3))
_BROADCAST_TRIALS = (((2, 3), (3,)), ((), (2,)), ((2, 1, 3), (1, 2, 1)))


def _keeps_shapes(row: registry.OpRow, trials: Sequence[tuple[Shape, ...]],
                  args: list[Any]) -> bool:
    import torch

    generator = torch.Generator().manual_seed(0)
    for shapes in trials:
        inputs = [torch.rand(s, dtype=torch.float64, generator=generator) + 0.5
                  for s in shapes]
        try:
            out = _shapes_of(torch_call(row, inputs, args))
        except (TypeError, RuntimeError, ValueError, IndexError):
            return False
        if any(o != broadcast_shape(shapes[0], shapes[-1]) for o in out):
            return False
    return True


def _gen_op(row: registry.OpRow) -> GenOp:
    """How the generator calls `row`, from its sample; result shapes read from torch once
    (torch is the oracle: the generator's idea of a shape is torch's)."""
    import torch

    sample = row.sample
    assert sample is not None
    # seeded values in [0.5, 1.5): in every sample's domain, and a matrix of them invertible
    generator = torch.Generator().manual_seed(0)
    inputs = [torch.rand(s, dtype=torch.float64, generator=generator) + 0.5
              for s in sample.shapes]
    result = torch_call(row, [t.clone() for t in inputs], torch_args(sample))
    outputs, floating = _shapes_of(result), _floating_of(result)
    numbers = all(isinstance(a, float) for a in sample.args)
    if len(sample.shapes) == 1 and numbers and _keeps_shapes(
            row, [(s,) for s in _POINTWISE_TRIALS], list(sample.args)):
        return GenOp(row, POINTWISE, outputs, floating=floating)
    if len(sample.shapes) == 2 and not sample.args and _keeps_shapes(
            row, _BROADCAST_TRIALS, []):
        return GenOp(row, BROADCAST, outputs, floating=floating)
    if row.feature == "reductions" and len(sample.shapes) == 1 and not sample.args:
        try:  # a reduction that takes a dim is drawn on any tensor, with dim and keepdim
            by_dim = torch_call(row, inputs, [0], keepdim=True)
        except (TypeError, RuntimeError):
            by_dim = None
        if by_dim is not None:
            return GenOp(row, REDUCTION, outputs, isinstance(by_dim, tuple), floating)
    return GenOp(row, SAMPLE, outputs, floating=floating)


@cache
def generated_ops() -> tuple[GenOp, ...]:
    """Every differentiable registry row not in registry.NOT_GENERATED."""
    with warnings.catch_warnings():  # torch's on the trial calls (cov's degrees of freedom)
        warnings.simplefilter("ignore")
        return tuple(_gen_op(r) for r in registry.OPS
                     if r.differentiable and r.name not in registry.NOT_GENERATED)


@cache
def ops_for(settings: GenSettings) -> tuple[GenOp, ...]:
    return tuple(op for op in generated_ops() if op.fits(settings))


@cache
def weighted_ops(settings: GenSettings) -> tuple[GenOp, ...]:
    """ops_for(settings), an op repeated by its weight: what an op action's first op is
    drawn from, uniformly. Every op is then the first op of an action with a probability
    the design fixes (`head_share`), and with the chains its gradient is compared in a
    share of programs (the floors in tests/conformance/test_strategies.py)."""
    return tuple(op for op in ops_for(settings) for _ in range(op.weight))


def head_share(op: GenOp, settings: GenSettings) -> float:
    """The probability that one op action's first op is `op`."""
    return op.weight / len(weighted_ops(settings))


def _arg_expr(a: object, dtype: str) -> ir.Expr:
    if isinstance(a, registry.Const):
        values = a.values
        shape = _const_shape(values)
        flat: list[Any] = []

        def collect(v: object) -> None:
            if isinstance(v, list):
                for item in v:
                    collect(item)
            else:
                flat.append(v)

        collect(values)
        if a.dtype.startswith("float") and dtype != DEFAULT_DTYPE:
            return call(torch_fn("tensor"), nested(flat, shape), dtype=torch_fn(dtype))
        return call(torch_fn("tensor"), nested(flat, shape))
    return _literal(a)


def _literal(a: object) -> ir.Expr:
    """A sample argument as the parser reads its source: a tuple or list of literals (dims,
    tensordot's `([1, 2], [0, 1])`) as a Tuple or List node, else a dim or a number."""
    if isinstance(a, tuple):
        return ir.Tuple(tuple(_literal(v) for v in a))
    if isinstance(a, list):
        return ir.List(tuple(_literal(v) for v in a))
    return const(cast(ir.Scalar, a))


@cache
def nested_ops(settings: GenSettings, shape: Shape) -> tuple[GenOp, ...]:
    """The ops that can take a value of `shape` of any sign as their first input (not a
    BLAS product: its first input would be the value, of whatever dtype)."""
    return tuple(o for o in ops_for(settings) if not o.sample.positive and (
        o.form != SAMPLE or o.sample.shapes[0] == shape) and o.name not in BLAS_PRODUCTS)


def blas_dtype(settings: GenSettings) -> str | None:
    """The dtype a BLAS product's operands are drawn in (see BLAS_PRODUCTS): float64 where
    the settings allow it, else any."""
    return "float64" if "float64" in settings.dtypes else None



def broadcasts(a: Shape, b: Shape) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b), strict=False))


def broadcast_shape(a: Shape, b: Shape) -> Shape:
    n = max(len(a), len(b))
    a1, b1 = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a1, b1, strict=False))
