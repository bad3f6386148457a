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

That bound assumes the engine is no further from float64 than torch, which fails where
torch's own roundings cancel by chance: cosh(-1) correctly rounded by the engine and 1 ULP
low in torch, then a mean, rad2deg and tan near a pole (condition number about 300), left
the engine 12 times further from the twin than torch (the ci profile with every row met
it; tests/conformance/test_rounding.py has the chain). So the bound also has the chain's
measured amplification of rounding: the twin is run three more times with every result of
every op (forward and backward: torch's dispatcher sees both) that float32 cannot hold
exactly multiplied by 1 + s 2^-24, each op's float32 rounding at its largest size (half an
ULP) in float64: s = +1 everywhere, -1 everywhere (a monotone chain adds its roundings up),
then a seeded random sign per element. `jitter` is an element's largest distance between
those runs and the twin, and an element also agrees when

    |e - t| <= atol + rtol * |t| + 2 * |t - ref| + JITTER_FACTOR * jitter

JITTER_FACTOR = 3: of the programs `x = torch.tensor(V, requires_grad=True)`,
`y = x.cosh().mean().rad2deg().tan()`, `y.backward()` (V: 2 to 6 of the generator's leaf
values, one of them -1) whose y or x.grad differ past float32's tolerance (599 programs,
1198 values), the largest |e - t| past the first bound is 0.65 jitter. Where the chain does
not amplify, jitter is a few float32 ULPs (about float32's rtol per three ops), so a wrong
formula, kernel or gradient off by more still diverges; where it does (a pole, a
cancellation, a discrete choice that half an ULP flips), a fault smaller than the amplified
rounding cannot be told from rounding, by this rule or by torch's own float32. Values a
jittered run left non-finite, that no longer line up with the twin's (another statement,
shape or kind), or that a hook event saw, get no jitter.

Two refinements follow from that reasoning (stop 43). First, the rounding jittered is the
program's own: a program whose every floating tensor is already float64 (or complex128) is
its own twin, so `|t - ref|` is 0 and the jitter is the whole bound, and its ops round at
float64's size, not float32's (`unit_roundoff`, read from torch's trace of the program; a
program with any narrower tensor keeps 2^-24 everywhere): 2^-52, a whole ULP, since the
factor 1 + 2^-53 is not a float64 (it rounds to 1, and a half ULP added to a float64 value
rounds back to it or to even). Which results are jittered stays as above: a value float32
holds exactly (a small integer, a half) is taken for an exact result, whatever the
precision. Second, multiplying a result by 1 + s u models the rounding of an op whose every
output element is one correctly rounded function of its inputs (a pointwise op,
torch.Tag.pointwise), but not of one that sums or factorizes several input elements into
each output element (a reduction, a product, linalg): its rounding can cancel to an exact 0
or to a tiny value of either sign, which no factor moves. Such an op's computed result is,
by backward error analysis, the exact result of inputs each perturbed by about its rounding,
so a non-pointwise op whose result jitter applies (some element float32 cannot hold) is run
on its floating inputs each multiplied by 1 +- u (every element, exact or not; a seeded
random sign per element in each of the three runs, since one sign for all would only scale a
homogeneous op's result and leave its zeros), and its result then jittered as any other. A
float64 program's `floor(linalg.inv(A))` met this (torch's inverse has an exact 0 where the
engine's has -6.5e-18, so floor gives 0 against -1; tests/conformance/test_rounding.py): the
inverse of A's perturbed entries is about +-1e-16 there, and floor's jitter 1. An op that
rounds nothing (sum, cat or max of values float32 holds) is not perturbed, so floor of exact
values keeps its power.

It is applied after the NaN-sign rule (gen/nan_sign.py), to the program that rule leaves. A
program that agrees under it counts as `masked:float32_rounding`; one that still diverges is
reported with the divergence the rule left.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from conformance.case import program as ir
from conformance.gen.reading import rebuilt
from conformance.run.compare import Divergence, Jittered
from conformance.run.engine import Engine, MissingAPI
from conformance.run.interpreter import run_program
from conformance.run.trace import Snapshot, Step, TensorSnapshot, Trace, ValueSnapshot

NARROW = {"float32": "float64", "float16": "float64", "bfloat16": "float64",
          "complex64": "complex128", "complex32": "complex128"}
NARROW_METHODS = {"float": "double"}   # the case language's only narrowing method
TWIN_DTYPE = "float64"
JITTER = 2.0 ** -24  # float32's largest relative rounding error (half an ULP)
# float64's, for a program with no narrower tensor: one ULP, since 1 + 2^-53 rounds to 1
JITTER_FLOAT64 = 2.0 ** -52
# the runs' signs: all up, all down (a monotone chain adds its roundings up), random
JITTER_RUNS: tuple[float | int, ...] = (1.0, -1.0, 1)
JITTER_FACTOR = 3.0
# ops that copy values without rounding them (the harness's observation makes copies too)
COPIES = frozenset({"clone", "_to_copy", "copy", "lift_fresh_copy", "detach_copy",
                    "alias_copy", "view_copy"})


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


def unit_roundoff(trace: Trace) -> float:
    """The size of one op's rounding in the program `trace` ran: float64's where every
    floating tensor it snapshot is float64 or complex128 (the program is its own twin),
    else (a tensor of a NARROW dtype) float32's (the module's rule)."""
    for step in trace.steps:
        for snap in step.names.values():
            for s in (snap, getattr(snap, "grad", None)):
                if isinstance(s, TensorSnapshot) and \
                        s.dtype.removeprefix("torch.") in NARROW:
                    return JITTER
    return JITTER_FLOAT64


def reference(engine: Engine, program: ir.Program, device: str = "cpu",
              torch: Engine | None = None, unit: float = JITTER) -> Trace:
    """The float64 twin of `program` run on `engine` (torch; the fault search's oracle is
    the reference engine), its float values carrying the `jitter` that torch's jittered runs
    of the twin measure (`torch`, default `engine`), each op's rounding of size `unit`
    (`unit_roundoff` of the program's trace): the trace `compare(..., reference=)` judges a
    values divergence against (the module's rule)."""
    torch = torch or engine
    twin = float64_twin(program)
    ref = run_program(engine, twin, dtype=TWIN_DTYPE, device=device, continue_on_error=True)
    runs = []
    # an oracle without torch's dispatch modes (the fault search's reference engine, when
    # no torch is given) measures no jitter: the bound is the rule without it
    for run, signs in enumerate(JITTER_RUNS if _dispatches(torch) else ()):
        with jittered(torch, signs, unit, run):
            runs.append(run_program(torch, twin, dtype=TWIN_DTYPE, device=device,
                                    continue_on_error=True))
    return with_jitter(ref, runs)


def _dispatches(engine: Engine) -> bool:
    try:
        engine.resolve("torch.utils._python_dispatch.TorchDispatchMode")
    except MissingAPI:
        return False
    return True


@contextlib.contextmanager
def jittered(torch: Engine, signs: float | int, unit: float = JITTER,
             perturb_seed: int = 0) -> Iterator[None]:
    """torch's dispatcher, while in it, multiplies every new floating result of an op that
    float32 cannot hold exactly by 1 + s `unit`: s = `signs` if a float (1.0 or -1.0), else
    +-1 drawn from that seed; views and in-place results (which alias an input), copies
    (which round nothing), ZeroTensors and sparse results are left alone. A non-pointwise op
    with such a result is first run again on its floating inputs multiplied by 1 +- `unit`,
    a sign per element drawn from `perturb_seed` (its backward error: the module's rule;
    one sign for all would only scale a homogeneous op's result, and leave its zeros)."""
    mode_class = torch.resolve("torch.utils._python_dispatch.TorchDispatchMode")
    tree_map = torch.resolve("torch.utils._pytree.tree_map")
    tensor_class, float32 = torch.resolve("torch.Tensor"), torch.resolve("torch.float32")
    strided = torch.resolve("torch.strided")
    pointwise = torch.resolve("torch.Tag.pointwise")
    draw = np.random.default_rng(signs) if isinstance(signs, int) else None
    perturb_draw = np.random.default_rng(perturb_seed)

    def jitterable(t: Any) -> bool:
        # a ZeroTensor has no storage to read (forward AD makes them: reading one here,
        # under its dispatch key, crashed the process)
        return isinstance(t, tensor_class) and t.dtype.is_floating_point and \
            t.numel() > 0 and not t._is_zerotensor() and t.layout == strided

    def factor(t: Any, rng: np.random.Generator | None) -> Any:
        s = signs * unit if rng is None else torch.module.from_numpy(
            rng.choice((-unit, unit), size=tuple(t.shape))).to(t.dtype)
        return 1 + s

    def inexact(t: Any) -> Any:
        return t != t.to(float32).to(t.dtype)

    def jitter(t: Any) -> Any:
        if not jitterable(t):
            return t
        return torch.module.where(inexact(t), t * factor(t, draw), t)

    def perturbed(t: Any) -> Any:
        return t * factor(t, perturb_draw) if jitterable(t) else t

    def rounds(out: Any) -> bool:
        flat = out if isinstance(out, (tuple, list)) else (out,)
        return any(jitterable(t) and bool(inexact(t).any()) for t in flat)

    class Jitter(mode_class):  # type: ignore[misc, valid-type]
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            if any(r.alias_info is not None for r in func._schema.returns) or \
                    func.overloadpacket.__name__ in COPIES:
                return out
            if pointwise not in func.tags and rounds(out):
                out = func(*tree_map(perturbed, args), **tree_map(perturbed, kwargs))
            return tree_map(jitter, out)

    with Jitter():
        yield


def with_jitter(ref: Trace, runs: list[Trace]) -> Trace:
    """`ref` with each float value array a `Jittered` one: JITTER_FACTOR times its largest
    finite distance from the same value in `runs` (same statement, path, shape)."""
    steps = []
    for i, step in enumerate(ref.steps):
        others = [r.steps[i] for r in runs if i < len(r.steps) and r.steps[i].line == step.line]
        names = {path: _jittered(s, [o.names.get(path) for o in others])
                 for path, s in step.names.items()}
        steps.append(Step(step.line, step.outcome, step.warnings, step.events, names))
    return replace(ref, steps=steps)


def _jittered(s: Snapshot, others: list[Snapshot | None]) -> Snapshot:
    if isinstance(s, ValueSnapshot) and s.kind == "float":
        values = [np.array(o.value) for o in others
                  if isinstance(o, ValueSnapshot) and o.kind == "float"]
        return replace(s, value=_bound(np.array(s.value, dtype=np.float64), values))
    if not isinstance(s, TensorSnapshot) or not isinstance(s.values, np.ndarray):
        return s
    tensors = [o for o in others if isinstance(o, TensorSnapshot)]
    values = [o.values for o in tensors
              if isinstance(o.values, np.ndarray) and o.values.shape == s.values.shape]
    grad = s.grad if s.grad is None else _jittered(s.grad, [o.grad for o in tensors])
    assert grad is None or isinstance(grad, TensorSnapshot)
    return replace(s, values=_bound(s.values, values), grad=grad)


def _bound(values: np.ndarray, others: list[np.ndarray]) -> Jittered:
    parts = (lambda a: np.ascontiguousarray(a, dtype=np.complex128).view(np.float64)) \
        if values.dtype.kind == "c" else (lambda a: np.asarray(a, dtype=np.float64))
    jitter = np.zeros(parts(values).shape)
    with np.errstate(invalid="ignore", over="ignore"):
        for other in others:
            distance = np.abs(parts(other) - parts(values))
            jitter = np.maximum(jitter, np.where(np.isfinite(distance), distance, 0.0))
    out = values.view(Jittered)
    out.jitter = JITTER_FACTOR * jitter
    return out
