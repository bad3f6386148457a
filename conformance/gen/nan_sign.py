"""Generated programs: the sign of a NaN that copysign reads is not compared.

IEEE 754 leaves the sign of a NaN an operation makes unspecified, and torch's CPU kernels do
not agree on it: sqrt(-1) is +nan in torch and -nan in NumPy, fmod(x, 0) of 20 float32
elements is +nan in the 16 a SIMD loop computes and -nan in the 4 of the scalar tail, and a
6x6 std_mean gave +nan where the same row alone gave -nan (the generator's ci profile, issue
24). A value comparison never sees that sign (a NaN matches a NaN), but copysign(x, y) turns
y's sign into a value: +|x| or -|x| where y is NaN, and its gradient with it.

So where a generated program diverges at or after a copysign call, it is checked again with
each copysign's sign operand `b` written `torch.where(torch.isnan(b), torch.abs(b.detach()),
b)`: every NaN it reads is +nan, in both runs, and every other element is b's own (copysign
has no gradient for b, so the rewrite changes no gradient either). The two programs differ
only in the signs of the NaNs copysign reads: if the rewritten one agrees, the divergence was
carried by a NaN's sign alone, and the program counts as `masked:nan_sign`; if it diverges,
that divergence is reported, with the rewritten program. Nothing else is masked: a NaN's
sign that reaches a value by any other path (none of the generated ops reads it), or a
difference of copysign where its sign operand is not NaN, is compared as before.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from conformance.case import program as ir
from conformance.gen.reading import nodes, rebuilt


def calls_copysign(program: ir.Program) -> bool:
    return any(_is_copysign(n) for n in nodes(program.body))


def nan_signs_positive(program: ir.Program) -> ir.Program:
    """`program` with every copysign's sign operand's NaNs made +nan (the module's rule)."""
    rewritten = rebuilt(program, _signless)
    assert isinstance(rewritten, ir.Program)
    return rewritten


def _is_copysign(node: object) -> bool:
    return isinstance(node, ir.Call) and isinstance(node.func, ir.Attribute) and \
        node.func.attr == "copysign"  # (the case language has no copysign_)


def _torch(name: str, *args: ir.Expr) -> ir.Call:
    return ir.Call(ir.Attribute(ir.Name("torch"), name), args)


def _positive_nans(b: ir.Expr) -> ir.Expr:
    if isinstance(b, ir.Const):
        return b  # a number: its NaN, if any, is written in the program
    detached = ir.Call(ir.Attribute(b, "detach"))
    return _torch("where", _torch("isnan", b), _torch("abs", detached), b)


def _signless(node: Any) -> Any:
    if not _is_copysign(node):
        return node
    # torch.copysign(a, b) or a.copysign(b); b may be the keyword `other`
    assert isinstance(node, ir.Call) and isinstance(node.func, ir.Attribute)
    sign_at = 1 if node.func.value == ir.Name("torch") else 0
    if len(node.args) > sign_at:
        args = list(node.args)
        args[sign_at] = _positive_nans(args[sign_at])
        return replace(node, args=tuple(args))
    return replace(node, keywords=tuple(
        replace(k, value=_positive_nans(k.value)) if k.name == "other" else k
        for k in node.keywords))
