"""Generated programs: float32 rounding that a later op amplifies is judged against float64.

The engine rounds its float32 results from float64 (NumPy's float32 kernels are further off),
torch rounds its own way; each differs from the exact value by about an ULP, and on 0.03 to
19 % of values they round apart (tan, asinh, sqrt most, cosh least). A later op multiplies
that difference by its condition number |x f'(x) / f(x)|: exp of cosh(4) = 27.3 makes one
ULP of cosh a 1.6e-6 relative difference, past float32's rtol of 1.3e-6; frac of a large
sum keeps only the digits rounding decided. With every registry row drawn, such chains are
common enough that the ci profile's 300 programs met one in each run.

The rule: where a generated program diverges on a value (a field `*.values`), torch runs a
twin of it in float64 (every float32 and float16 dtype written float64, complex64 written
complex128, `.float()` written `.double()`, the run's default dtype float64), and the
program is compared again with that twin as the reference (`compare(..., reference=)`): an
element of torch's value `t` and the engine's `e`, both finite, also agrees when

    |e - t| <= atol + rtol * |t| + 2 * |t - ref|

where `ref` is the twin's element. That is: the engine is no further from the float64 value
than torch is (|e - ref| <= |t - ref| implies |e - t| <= 2 |t - ref|), so what differs is
rounding the program's chain amplified, not the engine's formula. The bound is measured on
the program's own values, not assumed from the ops drawn; where torch's float32 value is
close to float64 (no amplification) it adds nothing, so a wrong formula, kernel or
gradient still diverges by its own size. Nothing else is relaxed: dtypes, shapes, errors,
integer and boolean values, infinities and NaNs are compared as before, and a step is held to
the twin only where the twin ran the same statement (a float32-only error, such as a dtype
mismatch, leaves the twin's statements out of line from there on).

It is applied after the NaN-sign rule (gen/nan_sign.py), to the program that rule leaves. A
program that agrees under it counts as `masked:float32_rounding`; one that still diverges is
reported with the divergence the rule left.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from conformance.case import program as ir
from conformance.gen.reading import rebuilt
from conformance.run.compare import Divergence

NARROW = {"float32": "float64", "float16": "float64", "bfloat16": "float64",
          "complex64": "complex128", "complex32": "complex128"}
NARROW_METHODS = {"float": "double"}   # the case language's only narrowing method
TWIN_DTYPE = "float64"


def concerns_values(d: Divergence | None) -> bool:
    """Whether the rule can apply to this divergence: one of floating values."""
    return d is not None and d.field.endswith(".values")


def float64_twin(program: ir.Program) -> ir.Program:
    """`program` with every narrower floating dtype written float64 (the module's rule)."""
    twin = rebuilt(program, _narrowed)
    assert isinstance(twin, ir.Program)
    return twin


def _narrowed(node: Any) -> Any:
    if isinstance(node, ir.Attribute) and node.value == ir.Name("torch") and \
            node.attr in NARROW:
        return replace(node, attr=NARROW[node.attr])
    if isinstance(node, ir.Call) and isinstance(node.func, ir.Attribute) and \
            node.func.attr in NARROW_METHODS and not node.args and not node.keywords and \
            node.func.value != ir.Name("torch"):
        return replace(node, func=replace(node.func, attr=NARROW_METHODS[node.func.attr]))
    return node
