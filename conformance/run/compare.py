"""The one comparator: walks two traces and finds the first divergence.

Fields are compared in a fixed order, statement by statement. Values use
`torch.testing.assert_close`'s default tolerances for their dtype (NaN in both is
agreement: both engines computed the same undefined result), and exact zeros must agree in
sign; a complex value's real and imaginary parts are held to those rules each, with the
tolerances of the part's dtype. Message texts (error and warning) are a stricter field: a
text-only difference is reported as a divergence with `strict=True`, separately from
behavioural ones.

`step_diffs` (with `snapshot_diffs` for named values) is the one place that decides what
is compared: `compare` takes the first difference it yields, `explain` and `diff`
(conformance/report/drift.py) show every one (`every=True`), so they cannot disagree with the
verdict.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from conformance.case.kinds import ONCE_PER_PROCESS
from conformance.run.trace import (
    FieldMask,
    Snapshot,
    Step,
    TensorSnapshot,
    TensorSummary,
    Trace,
    ValueSnapshot,
)

# Fields with a rule of their own in `_tensor_diffs` (values by tolerance, the grad as an
# engine-made tensor; engine_made chooses the fields); every other field of TensorSnapshot
# is compared by equality, in declaration order, so a new field is compared unless it is
# named here.
OWN_RULES = ("values", "grad", "engine_made")
TENSOR_FIELDS = tuple(f.name for f in dataclasses.fields(TensorSnapshot)
                      if f.name not in OWN_RULES)
# Tensors the autograd engine itself produced (a `.grad`, a hook's argument or result) are
# compared without `_version` and `_is_view()`: those reflect how torch's C++ kernels build
# a gradient (in-place accumulation in an input buffer, an expand inside a formula), not
# autograd semantics. Their identity (`alias`) and everything else is compared.
ENGINE_MADE_FIELDS = tuple(f for f in TENSOR_FIELDS if f not in ("version", "is_view"))


@dataclass(frozen=True)
class Divergence:
    step: int  # index into the traces' steps
    line: int  # program line
    field: str  # e.g. "outcome.kind", "a.grad.values", "warnings.text"
    expected: Any  # torch's value
    actual: Any  # the engine's value
    strict: bool = False  # only the exact message text differs

    def describe(self) -> str:
        return (f"field `{self.field}`: torch has {_show(self.expected)}, "
                f"engine has {_show(self.actual)}")


# A divergence's values as a report shows them, at most this long: an engine that gave 100,000
# warnings in one statement made a 1 MB line in summary.md and 8 MB of conformance.json.
SHOWN_LIMIT = 2_000


def _show(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=8, threshold=64)
    if isinstance(value, TensorSummary):
        return str(value)
    text = repr(value)
    if len(text) <= SHOWN_LIMIT:
        return text
    return f"{text[:SHOWN_LIMIT]}... <{len(text) - SHOWN_LIMIT:,} more characters cut>"


# A complex dtype has the tolerances of its parts' dtype, as in torch.testing.
_PART_DTYPE = {"complex32": "float16", "complex64": "float32", "complex128": "float64"}


def tolerances(dtype: str) -> tuple[float, float]:
    """torch.testing.assert_close's default (rtol, atol); exact for other dtypes."""
    name = dtype.removeprefix("torch.")
    name = _PART_DTYPE.get(name, name)
    return {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
            "float64": (1e-7, 1e-7)}.get(name, (0.0, 0.0))


def _parts(a: np.ndarray) -> np.ndarray:
    """A complex array as its real and imaginary parts side by side (float64), so each part
    is held to the tolerances, NaN and signed-zero rules of a real value on its own."""
    return np.ascontiguousarray(a, dtype=np.complex128).view(np.float64)


class Jittered(np.ndarray):
    """A float64 twin's value array (conformance/gen/rounding.py) with `jitter`: per element
    (per real part, for complex), how far rounding the program's chain amplifies may move
    it, measured; `values_differ` adds it to the bound."""

    jitter: np.ndarray | None = None

    def __array_finalize__(self, obj: object) -> None:
        self.jitter = getattr(obj, "jitter", None)


def values_differ(a: np.ndarray | TensorSummary | str, b: np.ndarray | TensorSummary | str,
                  dtype: str, reference: np.ndarray | None = None) -> str | None:
    """Why two value arrays of the same shape disagree, or None.

    `a` is torch's value (the comparator passes the expected one first), `b` the engine's.
    `reference`: torch's value of the same program run in float64 (generated programs only,
    conformance/gen/rounding.py). Where given, a finite element also agrees when the engine
    is within twice torch's own distance from it (plus the dtype's tolerance): no further
    from the float64 value than torch is, by the triangle inequality, so the difference is
    rounding that the program's chain amplified, not the engine's formula; a `Jittered`
    reference adds its measured `jitter` (the chain's amplification of rounding) too."""
    if isinstance(a, str) or isinstance(b, str):   # what reading the values raised
        return None if isinstance(a, str) and isinstance(b, str) and a == b else "values"
    if isinstance(a, TensorSummary) or isinstance(b, TensorSummary):
        if isinstance(a, TensorSummary) and isinstance(b, TensorSummary):
            return summaries_differ(a, b, dtype)
        return "values"
    if a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes():
        return None  # bit for bit equal (signed zeros and NaNs included): the common case
    rtol, atol = tolerances(dtype)
    # the reference's shape is the values' own: a complex one is split into parts below
    # with them (before, a complex value's parts never matched its reference's shape, so
    # the float64 twin was never consulted for complex values)
    referenced = reference is not None and reference.shape == np.shape(b)
    if a.dtype.kind == "c" or b.dtype.kind == "c":
        a, b = _parts(a), _parts(b)
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        nan_a, nan_b = np.isnan(a64), np.isnan(b64)
        if not np.array_equal(nan_a, nan_b):
            return "values"
        close = np.isclose(a64, b64, rtol=rtol, atol=atol) | nan_a
        if not close.all() and reference is not None and referenced:
            jitter = getattr(reference, "jitter", None)
            ref = _parts(reference) if reference.dtype.kind == "c" else \
                np.asarray(reference, dtype=np.float64)
            if jitter is None or jitter.shape != ref.shape:
                jitter = np.zeros(ref.shape)
            with np.errstate(invalid="ignore", over="ignore"):
                close |= np.isfinite(a64) & np.isfinite(b64) & (
                    np.abs(a64 - b64) <= atol + rtol * np.abs(b64) + 2 * np.abs(a64 - ref)
                    + jitter)
        if not close.all():
            return "values"
        # A zero's sign is compared where the rest of the values are bit for bit equal.
        # Where they differ by rounding (float32 exp, say, is not rounded alike by torch
        # and NumPy), the engine took another rounding path, and the sign of a zero that a
        # rounding-level residue multiplied or cancelled into is rounding too: torch's own
        # kernels disagree on it across CPUs. A generated double backward of log_softmax
        # gave -0.0 beside -3.5e-15 where torch gave 0.0 beside 0.0.
        zeros = (a64 == 0) & (b64 == 0)
        if not np.array_equal(np.signbit(a64[zeros]), np.signbit(b64[zeros])) and \
                np.array_equal(a64[~zeros], b64[~zeros], equal_nan=True):
            return "signed_zero"
        return None
    return None if np.array_equal(a, b) else "values"


def summaries_differ(a: TensorSummary, b: TensorSummary, dtype: str) -> str | None:
    """Why two summaries of large tensors (limits.SUMMARY_THRESHOLD) disagree, or None.

    Equal checksums are bit-equal values. Otherwise each statistic is held to what the
    elementwise rule (|a - b| <= atol + rtol * |b|, NaN matching NaN) implies for it, so a
    summary never reports a divergence the full comparison would not: counts of NaN and of
    infinities exactly; min, max and mean |x| within atol + rtol * |value|; the sum of finite
    elements within n * atol + rtol * n * mean |x|. Differences that leave every statistic
    within bounds (values permuted, errors that cancel) go unseen. Signed zeros: the
    counts of -0.0 must agree when the counts of zeros do.
    """
    if a.checksum == b.checksum:
        return None
    if (a.elements, a.nan, a.posinf, a.neginf) != (b.elements, b.nan, b.posinf, b.neginf):
        return "values"
    rtol, atol = tolerances(dtype)
    finite = a.elements - a.nan - a.posinf - a.neginf
    close = bool(np.isclose([a.min, a.max, a.mean_abs], [b.min, b.max, b.mean_abs],
                            rtol=rtol, atol=atol, equal_nan=True).all())
    if not close or abs(a.sum - b.sum) > finite * (atol + rtol * b.mean_abs) + \
            1e-12 * abs(b.sum):  # float64 summation order
        return "values"
    if a.zeros == b.zeros and a.neg_zeros != b.neg_zeros:
        return "signed_zero"
    return None


@functools.cache
def _reader(fields: tuple[str, ...]) -> Callable[[TensorSnapshot], tuple[Any, ...]]:
    """The values of `fields` of a snapshot as one tuple (`type` added, so that it is a tuple
    for a single field too): two engines' tensors mostly agree, and one comparison of
    tuples says so where the field by field walk costs a call per field."""
    read: Callable[[TensorSnapshot], tuple[Any, ...]] = operator.attrgetter(*fields, "type")
    return read


def _tensor_diffs(path: str, e: TensorSnapshot, a: TensorSnapshot,
                  fields: tuple[str, ...] = TENSOR_FIELDS, every: bool = False,
                  ref: Snapshot | None = None) -> Iterator[tuple[str, Any, Any]]:
    # these fields hold no floats (no NaN), so the tuples are equal exactly when each
    # field is: the walk is only needed to name the first that differs
    if _reader(fields)(e) != _reader(fields)(a):
        for name in fields:
            ev, av = getattr(e, name), getattr(a, name)
            if ev != av:
                yield f"{path}.{name}", ev, av
                if not every:
                    return  # later fields of a tensor that already differs only add noise
    # values of different shapes are not compared: their shapes are already a difference
    reference = ref.values if isinstance(ref, TensorSnapshot) and \
        isinstance(ref.values, np.ndarray) else None
    why = values_differ(e.values, a.values, e.dtype, reference) if e.shape == a.shape \
        else None
    if why is not None:
        yield f"{path}.{why}", e.values, a.values
        if not every:
            return
    if (e.grad is None) != (a.grad is None):
        yield f"{path}.grad", "None" if e.grad is None else "a tensor", \
            "None" if a.grad is None else "a tensor"
    elif e.grad is not None and a.grad is not None:
        yield from _tensor_diffs(f"{path}.grad", e.grad, a.grad, ENGINE_MADE_FIELDS, every,
                                 ref.grad if isinstance(ref, TensorSnapshot) else None)


def _value_diffs(path: str, e: ValueSnapshot, a: ValueSnapshot, dtype: str,
                 ref: Snapshot | None = None) -> Iterator[tuple[str, Any, Any]]:
    if e.kind != a.kind:
        yield f"{path}.kind", e.kind, a.kind
    elif e.kind in ("float", "complex"):
        reference = np.asanyarray(ref.value) if isinstance(ref, ValueSnapshot) and \
            ref.kind == e.kind else None
        why = values_differ(np.array(e.value), np.array(a.value), dtype, reference)
        if why is not None:
            yield f"{path}.{why}", e.value, a.value
    elif e.value != a.value:
        yield f"{path}.value", e.value, a.value


def snapshot_diffs(names_e: dict[str, Snapshot], names_a: dict[str, Snapshot], dtype: str,
                   prefix: str = "", fields: tuple[str, ...] = TENSOR_FIELDS,
                   every: bool = False, agreed: set[tuple[str, int, int]] | None = None,
                   reference: dict[str, Snapshot] | None = None
                   ) -> Iterator[tuple[str, Any, Any]]:
    """(field, torch value, engine value) for the compared fields of named values that
    differ: the first of each name, or with `every` all of them (and, when the names
    differ, the names both have).

    `agreed` holds (path, id, id) of tensor snapshot pairs already found equal at that path:
    the incremental observation reuses a snapshot object while its name is unchanged, and
    the same two objects at the same path compare the same way again (the caller keeps the
    traces, so the ids stay theirs). `reference`: the named values of torch's float64 run of
    the same program (`values_differ`)."""
    if list(names_e) != list(names_a):
        yield f"{prefix}names", sorted(names_e), sorted(names_a)
        if not every:
            return
    for path, e in names_e.items():
        if path not in names_a:
            continue
        a = names_a[path]
        full = f"{prefix}{path}"
        ref = reference.get(path) if reference is not None else None
        if isinstance(e, TensorSnapshot) and isinstance(a, TensorSnapshot):
            key = (full, id(e), id(a))
            if agreed is not None and key in agreed:
                continue
            found = False
            for diff in _tensor_diffs(full, e, a, ENGINE_MADE_FIELDS if e.engine_made
                                      else fields, every, ref):
                found = True
                yield diff
            if agreed is not None and not found:
                agreed.add(key)
        elif isinstance(e, ValueSnapshot) and isinstance(a, ValueSnapshot):
            yield from _value_diffs(full, e, a, dtype, ref)
        else:
            yield f"{full}.kind", _kind(e), _kind(a)


def _kind(s: Snapshot) -> str:
    return "tensor" if isinstance(s, TensorSnapshot) else s.kind


def step_diffs(e: Step, a: Step, dtype: str, every: bool = False,
               agreed: set[tuple[str, int, int]] | None = None, once: bool = True,
               reference: Step | None = None) -> Iterator[tuple[str, Any, Any, bool]]:
    """(field, torch value, engine value, strict) for each difference of two steps, in
    order: the first of each part (outcome, each name, ...), or with `every` all of them.
    Either way the first one yielded is the same. `once`: the warnings torch gives once per
    process are compared too; true when both runs were under warn-always (`compared_once`)."""
    if e.line != a.line:
        yield "statement", e.line, a.line, False
        return  # different statements: nothing else lines up
    eo, ao = e.outcome, a.outcome
    name = None if eo == ao else next(
        (n for n in ("status", "kind", "type") if getattr(eo, n) != getattr(ao, n)), None)
    if name is not None:
        # the whole outcome, so the report shows the error each engine raised
        yield f"outcome.{name}", eo.describe(), ao.describe(), False
        if not every:
            return
    elif eo != ao:  # the text alone
        yield "outcome.text", eo.text, ao.text, True
    if e.warnings or a.warnings:  # most steps warn in neither engine
        yield from _warning_diffs(e, a, once)
    if e.events or a.events:  # nor call program code
        yield from _event_diffs(e, a, dtype, every, reference)
    for field, ev, av in snapshot_diffs(
            e.names, a.names, dtype, every=every, agreed=agreed,
            reference=reference.names if reference is not None else None):
        yield field, ev, av, False


def compared_once(expected: Trace, actual: Trace) -> bool:
    """Whether the warnings torch gives once per process (TORCH_WARN_ONCE, kinds.Kind.once)
    are compared: when both runs were under warn-always (interpreter.warn_always), which
    gives them every time. Otherwise whether one shows depends on what ran before in the
    process, not on the program, and they are left out."""
    return expected.warn_always and actual.warn_always


def _warning_diffs(e: Step, a: Step, once: bool) -> Iterator[tuple[str, Any, Any, bool]]:
    e_warnings = [w for w in e.warnings if once or w.kind not in ONCE_PER_PROCESS]
    a_warnings = [w for w in a.warnings if once or w.kind not in ONCE_PER_PROCESS]
    ew = [(w.kind, w.category) for w in e_warnings]
    aw = [(w.kind, w.category) for w in a_warnings]
    if ew != aw:
        yield "warnings", ew, aw, False
    elif [w.text for w in e_warnings] != [w.text for w in a_warnings]:
        yield "warnings.text", [w.text for w in e_warnings], [w.text for w in a_warnings], True


def _event_diffs(e: Step, a: Step, dtype: str, every: bool, reference: Step | None = None
                 ) -> Iterator[tuple[str, Any, Any, bool]]:
    sources = [ev.source for ev in e.events]
    if sources != [ev.source for ev in a.events]:
        yield "events", sources, [ev.source for ev in a.events], False
        return
    refs = reference.events if reference is not None and \
        [ev.source for ev in reference.events] == sources else [None] * len(sources)
    for i, (ee, ae, re) in enumerate(zip(e.events, a.events, refs, strict=False)):
        for where, ex, ac, rf in (
                (f"events[{i}].received.", ee.received, ae.received,
                 re.received if re is not None else None),
                (f"events[{i}].returned.", ee.returned, ae.returned,
                 re.returned if re is not None else None)):
            for field, ev, av in snapshot_diffs(ex, ac, dtype, where, ENGINE_MADE_FIELDS,
                                                every, reference=rf):
                yield field, ev, av, False


@dataclass(frozen=True)
class Comparison:
    divergence: Divergence | None  # the first behavioural divergence
    message: Divergence | None  # the first message-text divergence (strict field)
    masked: Divergence | None = None  # the first difference in a masked field
    mask: FieldMask | None = None  # the mask that covered it


def compare(expected: Trace, actual: Trace, dtype: str,
            masks: tuple[FieldMask, ...] = (), reference: Trace | None = None) -> Comparison:
    """The first divergence of `actual` (engine under test) from `expected` (torch), past
    differences in the fields `masks` cover (the first of those is noted). `reference`:
    torch's trace of the program run in float64, for generated programs
    (conformance/gen/rounding.py); a step is held to it where it is the same statement."""
    first_message: Divergence | None = None
    masked: tuple[Divergence, FieldMask] | None = None

    def result(d: Divergence | None) -> Comparison:
        return Comparison(d, first_message, *(masked or (None, None)))

    agreed: set[tuple[str, int, int]] = set()
    once = compared_once(expected, actual)
    for i, (e, a) in enumerate(zip(expected.steps, actual.steps, strict=False)):
        # with masks, every difference: a masked field must not hide the fields after it
        ref = reference.steps[i] if reference is not None and i < len(reference.steps) \
            else None
        for field, ev, av, strict in step_diffs(
                e, a, dtype, every=bool(masks), agreed=agreed, once=once,
                reference=ref if ref is not None and ref.line == e.line else None):
            d = Divergence(i, e.line, field, ev, av, strict)
            mask = next((m for m in masks if m.covers(field)), None)
            if mask is not None:
                masked = masked or (d, mask)
            elif not strict:
                return result(d)
            elif first_message is None:
                first_message = d
    n_e, n_a = len(expected.steps), len(actual.steps)
    if n_e != n_a:
        i = min(n_e, n_a)
        line = (expected.steps[i] if n_e > n_a else actual.steps[i]).line
        return result(Divergence(i, line, "steps", f"{n_e} steps", f"{n_a} steps"))
    return result(None)
