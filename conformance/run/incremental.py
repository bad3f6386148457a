"""The interpreter's observation after each step, incremental: the snapshots of the names a
statement cannot have changed are reused from the step before (conformance.changes), and
the trace's snapshot memory is charged step by step (limits.MAX_TRACE_BYTES). The reference
observation (`full_snapshots`) snapshots every name afresh after every step;
tests/conformance/test_incremental_snapshots.py holds the two to identical traces."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.case import program as ir
from conformance.run import changes, limits
from conformance.run.engine import Engine
from conformance.run.observe import EngineMade, Reusable
from conformance.run.tensor_read import NodeReads, snapshot_bytes
from conformance.run.trace import Snapshot, Step


class IncrementalObserver:
    """What one run's observation tracks from step to step."""

    def __init__(self, engine: Engine, observe: Callable[..., dict[str, Snapshot]],
                 engine_made: EngineMade, full_snapshots: bool) -> None:
        self.engine = engine
        self.observe = observe  # observe.observe, exempt from the engine's compilers
        self.engine_made = engine_made
        self.full_snapshots = full_snapshots
        # The last snapshots of top-level tensors, and the graph nodes the last observation
        # read.
        self.reusable: dict[str, Reusable] = {}
        self.node_reads: list[NodeReads] = [{}]
        self.unknown_changes = False  # a compound statement was entered since the last step
        self._sizes: dict[int, int] = {}  # snapshot_bytes of the last step's snapshots
        self.trace_bytes = 0  # the snapshot memory of the trace so far

    def names(self, visible: dict[str, Any], stmt: ir.Stmt, *, may_reuse: bool
              ) -> dict[str, Snapshot]:
        """The snapshots of the names in scope after `stmt`; `may_reuse`: the statement
        was pure (changes.Effects) and ran no program code, so only the names it assigned
        are snapshot afresh."""
        changed = None if self.full_snapshots or not may_reuse or self.unknown_changes \
            else changes.assigned_names(stmt)
        self.unknown_changes = False
        # observing must not warn (a non-leaf's .grad read does): the caller drops what it
        # gives
        return self.observe(self.engine, visible, engine_made=self.engine_made,
                            reusable=None if self.full_snapshots else self.reusable,
                            changed=changed, warnings_silenced=True,
                            node_reads=None if self.full_snapshots else self.node_reads)

    def charge(self, step: Step, steps_before: int) -> None:
        """Charge `step`'s snapshots and events to the trace's memory budget."""
        # A snapshot reused from the step before is counted again (each step is charged for
        # all it shows, in either observation), its size read from the step before.
        sizes: dict[int, int] = {}
        total = 0
        for path, snap in step.names.items():
            size = self._sizes.get(id(snap))
            if size is None:
                size = snapshot_bytes({path: snap})
            sizes[id(snap)] = size
            total += size
        self._sizes = sizes  # the snapshots are the last step's: alive, their ids theirs
        self.trace_bytes += total + sum(
            snapshot_bytes(ev.received) + snapshot_bytes(ev.returned) for ev in step.events)
        if self.trace_bytes > limits.MAX_TRACE_BYTES:
            raise limits.RunLimit(
                f"the trace of this run exceeds its memory budget of "
                f"{limits.MAX_TRACE_BYTES >> 20} MB of snapshots after {steps_before + 1}"
                " steps (fewer statements, or fewer or smaller tensors in scope)", step.line)
