"""Snapshots of everything a program can see, taken without disturbing it: the names of a
program flattened into paths, each tensor read by tensor_read.py, and what an incremental
observation may reuse of the last one.

Observation must not change what it observes: `.grad` is read with warnings silenced (a
non-leaf's `.grad` read would otherwise warn), and values are copied out through
`detach()`, which shares the version counter without bumping it.
"""

from __future__ import annotations

import contextlib
import operator
import warnings
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from conformance.run.engine import Engine
from conformance.run.tensor_read import (
    SCALARS,
    UNREAD,
    NodeReads,
    RaisedOnRead,
    read_grad,
    snapshot_tensor,
    tensor_values,
)
from conformance.run.trace import Snapshot, TensorSnapshot, ValueSnapshot

# Sequences longer than this are summarised by their length (keeps traces small).
MAX_SEQUENCE = 32


class EngineMade(dict[int, "weakref.ref[Any]"]):
    """The tensors the autograd engine made, by identity: weak references by id, `id in self`
    only while that very object is alive."""

    def __contains__(self, key: object) -> bool:
        ref = self.get(key)  # type: ignore[call-overload]
        return ref is not None and ref() is not None and id(ref()) == key

    def add(self, t: Any) -> None:
        # a weak reference: holding the tensor would change reference counts, which an
        # engine may consult (torch steals a gradient nothing else holds)
        self[id(t)] = weakref.ref(t)


class Observer:
    """Flattens named values into path -> snapshot, noting tensors seen twice."""

    def __init__(self, engine: Engine, engine_made: EngineMade | None = None) -> None:
        self.engine = engine
        # tensors autograd.grad returned, and every tensor seen as a .grad (observe notes
        # them): a gradient keeps its comparison rules after `x.grad = None` unbinds it
        self.engine_made = EngineMade() if engine_made is None else engine_made
        self.seen: dict[int, str] = {}
        self.out: dict[str, Snapshot] = {}
        # path -> id of the .grad of the tensor there, when that is a tensor
        self.grad_ids: dict[str, int] = {}
        # .grads observe() has read already, by the id of their tensor (read once)
        self.grads: dict[int, Any] = {}
        self.nodes: NodeReads = {}
        self.earlier_nodes: NodeReads | None = None  # the observation before's reads

    def reuse(self, path: str, value: Any, entry: Reusable) -> TensorSnapshot:
        """`entry`'s snapshot of `value` at `path`, as `add` would take it now (returned):
        only alias and engine_made depend on other names; a new object only when one of
        them moved."""
        alias = self.seen.setdefault(id(value), path)
        snap = entry.snapshot
        fields: dict[str, Any] = {}
        alias_now = None if alias == path else alias
        if snap.alias != alias_now:
            fields["alias"] = alias_now
        made = id(value) in self.engine_made
        if made != snap.engine_made:
            fields["engine_made"] = made
        snap = self.out[path] = replace(snap, **fields) if fields else snap
        if entry.grad_id is not None:
            self.grad_ids[path] = entry.grad_id
            self.seen.setdefault(entry.grad_id, f"{path}.grad")
        return snap

    def add(self, path: str, value: Any) -> None:
        engine = self.engine
        if engine.is_tensor(value):
            alias = self.seen.setdefault(id(value), path)
            grad = self.grads.pop(id(value), UNREAD)
            if grad is UNREAD:
                grad = read_grad(value)
            snap = snapshot_tensor(engine, value, None if alias == path else alias, grad,
                                   self.nodes, self.earlier_nodes)
            # a gradient bound to a name (`g = x.grad`, `g, = torch.autograd.grad(...)`) is
            # still a tensor the autograd engine made
            if id(value) in self.engine_made:
                snap = replace(snap, engine_made=True)
            self.out[path] = snap
            if grad is not None and engine.is_tensor(grad):
                self.grad_ids[path] = id(grad)
                self.seen.setdefault(id(grad), f"{path}.grad")
            return
        if value is None or isinstance(value, SCALARS):
            self.out[path] = ValueSnapshot(type(value).__name__, value)
            return
        try:
            self._add_value(path, value)
        except Exception as e:
            # an engine's object whose attribute lookup, len or iteration raises (a proxy
            # with a hostile __getattr__): observed as what reading it raised, which
            # torch's values never do, so the item diverges there instead of crashing
            self.out[path] = ValueSnapshot(
                "opaque", f"<reading it raised {type(e).__name__}>")

    def _add_value(self, path: str, value: Any) -> None:
        type_name = type(value).__name__
        if type_name in ("dtype", "device"):
            self.out[path] = ValueSnapshot(type_name, str(value))
        elif hasattr(value, "next_functions") and hasattr(value, "name"):
            self.out[path] = ValueSnapshot("grad_fn", type_name)
        elif isinstance(value, (tuple, list)):
            self.out[path] = ValueSnapshot("sequence", len(value))
            for i, item in enumerate(value[:MAX_SEQUENCE]):
                self.add(f"{path}[{i}]", item)
        elif isinstance(value, dict):
            # a dict display of the program's (keys are its literals: repr names them)
            self.out[path] = ValueSnapshot("dict", len(value))
            for key, item in list(value.items())[:MAX_SEQUENCE]:
                self.add(f"{path}[{key!r}]", item)
        elif hasattr(value, "parameters") and hasattr(value, "weight"):
            self.out[path] = ValueSnapshot("module", type_name)
            for name in ("weight", "bias"):
                self.add(f"{path}.{name}", getattr(value, name, None))
        else:
            # Handles, classes, ctx objects, hooks: their presence is compared, their
            # engine-specific type is not.
            self.out[path] = ValueSnapshot("opaque")


@dataclass
class Reusable:
    """A top-level name's tensor snapshot, as the last observation took it, with what a
    later observation needs to reuse it: the tensor (weakly: holding it would change
    reference counts an engine may consult), its .grad's identity, and its grad_fn then
    (`unchanged` tells a node by identity; torch's nodes take no weak references, so it is
    held, as NodeReads holds nodes: it outlives the tensor's own reference by at most the
    statement up to the next observation)."""

    ref: weakref.ref[Any]
    snapshot: TensorSnapshot
    grad_id: int | None  # id of its .grad when that is a tensor (the grad outlives it)
    grad_fn: Any = UNREAD  # the node its graph signature was read from (UNREAD: unknown)


# Every field of a TensorSnapshot, by how `unchanged` knows it is still what a snapshot
# says: read afresh and compared, the graph by its root node's identity, or depending on
# other names (set by Observer.reuse). A new field must be placed here (checked below).
_REREAD = ("type", "shape", "dtype", "device", "values", "requires_grad", "is_leaf",
           "grad_fn", "retains_grad", "version", "is_view", "grad", "grad_read_error")
_BY_NODE = ("graph",)
_BY_NAMES = ("alias", "engine_made")
assert sorted(_REREAD + _BY_NODE + _BY_NAMES) == sorted(
    f.name for f in fields(TensorSnapshot)), "observe.unchanged must know every field"


def unchanged(engine: Engine, t: Any, grad: Any, snap: TensorSnapshot, grad_fn: Any) -> bool:
    """Whether `snapshot_tensor(engine, t, ..., grad)` would now give `snap` again (but for
    alias and engine_made), read without building a snapshot: every field read afresh and
    compared (values bit for bit), the graph signature by its root node: the same node has
    the same signature, as a node's edges are fixed when it is made (graph_signature).
    `grad_fn` is the node `snap` was taken from. Any doubt answers False (a full snapshot
    is taken): a read that raises, a summary, a .grad that has a graph of its own."""
    try:
        if t.grad_fn is not grad_fn or not _same_fields(engine, t, snap):
            return False
        if grad is None or not engine.is_tensor(grad):
            # None, or a value that is no tensor: snapshot_tensor records no grad either;
            # a read that raised is recorded as its text
            return snap.grad is None and snap.grad_read_error == (
                grad if isinstance(grad, RaisedOnRead) else None)
        return snap.grad is not None and grad.grad_fn is None and \
            snap.grad.graph is None and _same_fields(engine, grad, snap.grad)
    except Exception:
        return False


# The fields of a snapshot `_same_fields` compares with the tensor's own, as one tuple.
_READ_FIELDS = operator.attrgetter("type", "shape", "dtype", "device", "requires_grad",
                                   "is_leaf", "retains_grad", "version", "is_view")


def _same_fields(engine: Engine, t: Any, snap: TensorSnapshot) -> bool:
    """The fields of `snap` that snapshot_tensor reads from `t` itself, compared with `t`
    now (grad_fn's identity is the caller's): as snapshot_tensor reads them, in one tuple
    (none is a float, so tuple equality is each field's), then the values bit for bit."""
    old = snap.values
    # values copied then (not summarised) and the same shape now: copied now too
    if not isinstance(old, np.ndarray) or _READ_FIELDS(snap) != (
            type(t).__name__, tuple(map(int, t.shape)), str(t.dtype), str(t.device),
            bool(t.requires_grad), bool(t.is_leaf), bool(t.retains_grad), int(t._version),
            bool(t._is_view())):
        return False
    now = tensor_values(t)
    return now.dtype == old.dtype and now.shape == old.shape and now.tobytes() == old.tobytes()


def observe(engine: Engine, names: Mapping[str, Any], skip: Iterable[str] = (),
            engine_made: EngineMade | None = None,
            reusable: dict[str, Reusable] | None = None,
            changed: frozenset[str] | None = None,
            warnings_silenced: bool = False,
            node_reads: list[NodeReads] | None = None) -> dict[str, Snapshot]:
    """Snapshot of every value bound to a program name, in name order.

    With `reusable` (filled in by every call) and `changed` (the names the statement since
    the last call may have changed, conformance.run.changes; None: anything), the snapshot of a
    tensor bound to the same object as then and not in `changed` is the one taken then, with
    the two fields that depend on the other names (alias, engine_made) brought up to date.
    A name in `changed` bound to the same tensor as then reuses its snapshot too when
    `unchanged` finds every field still as it was (a backward leaves most names alone).
    `warnings_silenced`: the caller already ignores warnings (else this call does).
    `node_reads` holds one NodeReads: the graph nodes the last call read, which are not read
    again (graph_signature); each call leaves its own reads there, holding them until the
    next call, so a node outlives the program's last reference by at most the statement in
    between.
    """
    observer = Observer(engine, engine_made)
    if node_reads is not None:
        observer.earlier_nodes = node_reads.pop(0)
        node_reads.append(observer.nodes)
    skipped = set(skip)
    # names the statement cannot have changed (reused as they are), and names it may have
    # changed, whose last snapshot is reused only when `unchanged` finds it still true
    previous: dict[str, Reusable] = {}
    rechecked: dict[str, Reusable] = {}
    if reusable is not None:
        for n, e in reusable.items():
            (previous if changed is not None and n not in changed else rechecked)[n] = e
        reusable.clear()
    with contextlib.nullcontext() if warnings_silenced else warnings.catch_warnings():
        if not warnings_silenced:
            warnings.simplefilter("ignore")
        # first the grads, so that a name bound to one is known as such in any name order
        # (a reused tensor's grad was noted when its snapshot was taken, and lives on)
        for name, value in names.items():
            entry = previous.get(name)
            if entry is not None and entry.ref() is not value:  # rebound (a loop variable)
                del previous[name]
                entry = None
            if entry is None and engine.is_tensor(value):
                grad = observer.grads[id(value)] = read_grad(value)
                if grad is not None and engine.is_tensor(grad):
                    observer.engine_made.add(grad)
        for name in sorted(names):
            if name in skipped:
                continue
            value = names[name]
            entry = previous.get(name) or _still(observer, value, rechecked.get(name))
            if entry is not None:
                reused = observer.reuse(name, value, entry)
                if reusable is not None:
                    # the same entry while its snapshot is (no new weak reference per step)
                    reusable[name] = entry if reused is entry.snapshot else \
                        Reusable(entry.ref, reused, entry.grad_id, entry.grad_fn)
                continue
            observer.add(name, value)
            if reusable is not None:
                snap = observer.out[name]
                if isinstance(snap, TensorSnapshot):
                    try:
                        ref = weakref.ref(value)
                    except TypeError:  # an engine's tensor without weak references
                        continue
                    grad_id = observer.grad_ids.get(name)
                    reusable[name] = Reusable(ref, snap, grad_id, _grad_fn(value))
    return observer.out


def _still(observer: Observer, value: Any, entry: Reusable | None) -> Reusable | None:
    """`entry` brought up to date when its tensor is `value` and `unchanged`, else None
    (and `value`'s .grad, read here, left for Observer.add)."""
    if entry is None or entry.ref() is not value:
        return None
    grad = observer.grads.pop(id(value), UNREAD)
    if grad is UNREAD:  # a tensor bound to two names: read for each, as add does
        grad = read_grad(value)
    if not unchanged(observer.engine, value, grad, entry.snapshot, entry.grad_fn):
        observer.grads[id(value)] = grad
        return None
    grad_id = id(grad) if grad is not None and observer.engine.is_tensor(grad) else None
    return entry if grad_id == entry.grad_id else \
        Reusable(entry.ref, entry.snapshot, grad_id, entry.grad_fn)


def _grad_fn(t: Any) -> Any:
    try:
        return t.grad_fn
    except Exception:
        return UNREAD  # never a node: `unchanged` answers False


def observe_value(engine: Engine, value: Any, path: str = "value") -> dict[str, Snapshot]:
    observer = Observer(engine)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        observer.add(path, value)
    return observer.out
