"""Traces: what one run of a program on one engine did, statement by statement."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conformance.run.isolation import StateChange

OK = "ok"
ERROR = "error"  # the engine raised
ASSERTION = "assertion"  # the case's own assert / raises / warns / assert_close failed
LIMIT = "limit"  # the statement would exceed a limit of the case language (conformance.run.limits)


@dataclass(frozen=True)
class Outcome:
    status: str
    kind: str | None = None  # canonical error kind (conformance.case.kinds), for errors
    type: str | None = None  # exception class name
    text: str | None = None  # message, normalised; for assertions what was expected

    def describe(self) -> str:
        if self.status == OK:
            return "ok"
        if self.status == ERROR:
            return f"{self.type} [{self.kind}]: {self.text}"
        if self.status == LIMIT:
            return f"limit exceeded: {self.text}"
        return f"case assertion failed: {self.text}"


@dataclass(frozen=True)
class WarningRecord:
    kind: str
    category: str
    text: str


@dataclass(frozen=True)
class TensorSummary:
    """A tensor too large to copy (limits.SUMMARY_THRESHOLD), observed by statistics over all
    of its elements (an expanded view's repeated elements counted as often as they appear)."""

    elements: int
    sum: float  # in float64
    min: float  # NaN ignored (nan if every element is NaN)
    max: float
    mean_abs: float
    nan: int
    posinf: int
    neginf: int
    zeros: int
    neg_zeros: int
    # blake2b of the distinct data (an expanded view's repeated elements once): equal in
    # both engines means bit-equal values; it is not compared otherwise (an engine that
    # materialises an expansion stores the same values differently).
    checksum: str

    def __str__(self) -> str:
        return (f"summary of {self.elements} elements: sum={self.sum:.9g} min={self.min:.9g} "
                f"max={self.max:.9g} mean|x|={self.mean_abs:.9g} nan={self.nan} "
                f"+inf={self.posinf} -inf={self.neginf} zeros={self.zeros} "
                f"(-0.0: {self.neg_zeros}) checksum={self.checksum}")


@dataclass(frozen=True)
class TensorSnapshot:
    type: str  # Tensor or Parameter
    shape: tuple[int, ...]
    dtype: str
    device: str
    # a summary above limits.SUMMARY_THRESHOLD elements; the text of the error where the
    # values cannot be read (tensor_read.read_values)
    values: np.ndarray | TensorSummary | str
    requires_grad: bool
    is_leaf: bool
    grad_fn: str | None
    graph: str | None  # tensor_read.graph_signature of grad_fn
    retains_grad: bool
    version: int | str  # or what reading it raised
    is_view: bool
    alias: str | None  # an earlier path naming the very same tensor object, if any
    grad: TensorSnapshot | None = None
    grad_read_error: str | None = None  # what reading .grad raised, if it raised
    # made by the autograd engine (a gradient bound to a name): compared without the
    # kernel-artefact fields, like .grad itself (compare.ENGINE_MADE_FIELDS)
    engine_made: bool = False


@dataclass(frozen=True)
class ValueSnapshot:
    kind: str  # None, bool, int, float, str, dtype, device, grad_fn, sequence, opaque
    value: Any = None


Snapshot = TensorSnapshot | ValueSnapshot


@dataclass(frozen=True)
class Event:
    """A call of program code from inside an engine: a hook or a Function method."""

    source: str  # e.g. "lambda@12:20", "MyReLU.backward"
    received: dict[str, Snapshot]
    returned: dict[str, Snapshot]


@dataclass
class Step:
    line: int  # program line of the statement
    outcome: Outcome
    warnings: list[WarningRecord] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    names: dict[str, Snapshot] = field(default_factory=dict)


@dataclass
class Trace:
    engine: str
    steps: list[Step] = field(default_factory=list)
    # The step whose failure ended the run (not absorbed by `with raises`), if any.
    failure: Step | None = None
    # Process-global engine settings the run left changed (the harness restored them).
    state_changes: list[StateChange] = field(default_factory=list)
    # API paths the engine lacks that the program reached (engines.MissingAPI), in order.
    missing_api: list[str] = field(default_factory=list)
    # The run was under the engine's `set_warn_always(True)`: the warnings torch gives once
    # per process (kinds.Kind.once) were given at every statement that gives them. False for
    # an engine without it; the comparator then leaves those warnings out.
    warn_always: bool = True


@dataclass(frozen=True)
class FieldMask:
    """A trace field an engine declares it cannot match (engine.Engine.masks), and why: a
    difference there is reported as masked, never as agreement, and comparison goes on.
    Here, with the fields it names, so that the engine protocol and the comparator both
    read it from below them."""

    field: str  # fnmatch pattern over divergence fields, e.g. "*.grad_fn"
    reason: str

    def covers(self, field: str) -> bool:
        return fnmatch.fnmatchcase(field, self.field)
