"""Running one test item (case x device x dtype) on torch and an engine: its verdict."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from functools import cache

from conformance.case.loader import Case
from conformance.run import isolation
from conformance.run.compare import Comparison, Divergence, compare
from conformance.run.decision import compared
from conformance.run.engine import TORCH, Engine, load_engine
from conformance.run.interpreter import Interpreter, warm_up
from conformance.run.limits import ItemTimeout, RunLimit, contained, deadline
from conformance.run.trace import LIMIT, Step, Trace
from conformance.run.verdicts import CASE_WRONG, DIVERGES, ERROR, SKIPPED, UNSUPPORTED

# the verdict names, re-exported: the runner's importers take them from here too
from conformance.run.verdicts import KNOWN as KNOWN
from conformance.run.verdicts import MASKED as MASKED
from conformance.run.verdicts import PASS as PASS


@dataclass(frozen=True)
class Item:
    case: Case
    device: str
    dtype: str
    # The case file as a command started where the run started names it (rerun commands);
    # None: the case's path (its id). The id never depends on it.
    file: str | None = None

    @property
    def name(self) -> str:
        return f"{self.device}-{self.dtype}"

    @property
    def id(self) -> str:
        return f"{self.case.path}::{self.name}"


@dataclass
class ItemResult:
    item: Item
    engine: str
    verdict: str
    reason: str = ""  # for skipped / case wrong / error
    divergence: Divergence | None = None
    message_divergence: Divergence | None = None
    masked: Divergence | None = None  # the first difference in a field the engine masks
    torch_trace: Trace | None = None
    engine_trace: Trace | None = None
    missing_api: list[str] = field(default_factory=list)  # for unsupported: the API paths
    timed_out: bool = False  # an error the item time limit caused (expectations: `timeout`)

    def file_line(self, line: int) -> str:
        return f"{self.item.case.path}:{line + self.item.case.line_offset}"

    def repro(self) -> str:
        """The command that reruns this item, from the directory the run started in."""
        engine = "" if self.engine == "reference_engine" else f" --engine {self.engine}"
        item = self.item
        return f"pytest {shlex.quote(f'{item.file or item.case.path}::{item.name}')}{engine}"


@cache
def torch_engine() -> Engine:
    return load_engine(TORCH)


def torch_version() -> str:
    """The installed torch release (what expectations' version ranges are checked against)."""
    return str(torch_engine().module.__version__)


def statement_text(case: Case, line: int) -> str:
    lines = case.source_text.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else "?"


def _run(engine: Engine, item: Item, live: list[Interpreter]) -> Trace:
    """The item's trace on `engine`; while it runs, its interpreter is the last of `live`
    (which names the engine and the line should the run be stopped)."""
    warm_up(engine)   # first-use warnings land in the warm-up, not in the first item
    interpreter = Interpreter(engine, seed=item.case.seed, dtype=item.dtype,
                              device=item.device)
    live.append(interpreter)
    trace = interpreter.run(item.case.program)
    live.pop()
    return trace


def run_item(item: Item, engine: Engine, *, strict_messages: bool = True,
             item_timeout: float = 0.0) -> ItemResult:
    """Run `item` on torch, check the case against torch, then compare `engine` with it.

    `item_timeout` seconds (0: none) bound both runs and the comparison (limits.deadline); a
    whole-run limit (time, statements, trace memory), or a KeyboardInterrupt, SystemExit or
    MemoryError from either engine (limits.contained; a real Ctrl-C passes), makes the
    verdict `error`, naming the case's file:line that was running.
    """
    torch = torch_engine()
    if not torch.device_available(item.device):
        return ItemResult(item, engine.name, SKIPPED,
                          f"{item.device} is not available to torch on this machine "
                          "(torch.cuda.is_available() is False)")
    live: list[Interpreter] = []
    # torch's warm-up (its first make_dual imports a module: seconds) is process setup, not
    # the item's time; the engine's, untrusted, runs under the item's deadline (in _run)
    warm_up(torch)
    try:
        with deadline(item_timeout, f"the item {item.id}"), contained():
            expected = _run(torch, item, live)
            if expected.state_changes:
                return ItemResult(item, engine.name, ERROR, _left_changed(item, expected),
                                  torch_trace=expected)
            if expected.failure is not None:
                return _torch_failed(item, engine, expected)
            actual = _run(engine, item, live)
            if actual.state_changes:
                return ItemResult(item, engine.name, ERROR,
                                  _left_changed(item, actual, torch_clean=True),
                                  torch_trace=expected, engine_trace=actual)
            # an API torch has and the engine lacks: nothing to compare until it is added
            missing = [p for p in actual.missing_api if p not in expected.missing_api]
            if missing:
                return ItemResult(item, engine.name, UNSUPPORTED,
                                  f"{engine.name} lacks {', '.join(missing)}, which the case "
                                  "uses (add it to the engine)", torch_trace=expected,
                                  engine_trace=actual, missing_api=missing)
            result: Comparison = compare(expected, actual, item.dtype, engine.masks)
    except RunLimit as stopped:
        return ItemResult(item, engine.name, ERROR, _stopped(item, stopped, live),
                          timed_out=isinstance(stopped, ItemTimeout))
    verdict, reason = compared(result, strict_messages=strict_messages,
                               where=lambda line: _where(item, line))
    return ItemResult(item, engine.name, verdict, reason, divergence=result.divergence,
                      message_divergence=result.message, masked=result.masked,
                      torch_trace=expected, engine_trace=actual)


def _stopped(item: Item, stopped: RunLimit, live: list[Interpreter]) -> str:
    """Why a stopped item is an error: where (the line the limit names, else the line its
    run was at), on which engine, and what stopped it."""
    if not live:  # both runs had ended: it was stopped comparing them
        return f"stopped comparing the traces: {stopped}"
    line = live[-1].line if stopped.line is None else stopped.line
    return stopped_at(item, line, live[-1].engine.name, str(stopped))


def stopped_at(item: Item, line: int, engine: str, why: str) -> str:
    """The reason of an item stopped at program line `line` (0: before the first statement)
    of its run on `engine`: in process, or read from the black box of a process that died."""
    where = f" at {_where(item, line)}" if line else ""
    return f"stopped{where} on {engine}: {why}"


def _left_changed(item: Item, trace: Trace, *, torch_clean: bool = False) -> str:
    """Why an item whose run left process-global state changed is an error (isolation)."""
    restored = all(c.restored for c in trace.state_changes)
    undid = "stopped it" if all(c.text for c in trace.state_changes) else "set it back"
    text = (f"{isolation.describe(trace.engine, trace.state_changes)} after running the "
            "item; " + (f"the harness {undid} so that no other item sees it. " if restored
                        else "later items in this process may see what was not restored. "))
    text += ("torch left it as it found it: the engine does not restore what torch restores"
             if torch_clean else
             "A case must leave process state as it found it: switch it back before the "
             "program ends, or use the `with` form (e.g. `with torch.set_grad_enabled(False):`)")
    if trace.failure is not None:
        text += (f". The run stopped early, at {_where(item, trace.failure.line)}: "
                 f"{trace.failure.outcome.describe()}")
    return text


def _torch_failed(item: Item, engine: Engine, expected: Trace) -> ItemResult:
    failed: Step = expected.failure  # type: ignore[assignment]
    if failed.outcome.status == LIMIT:  # the case exceeds a limit: not torch's doing
        return ItemResult(item, engine.name, ERROR,
                          f"the case exceeds a limit at {_where(item, failed.line)}: "
                          f"{failed.outcome.text}", torch_trace=expected)
    return ItemResult(item, engine.name, CASE_WRONG,
                      f"torch breaks the case at {_where(item, failed.line)}: "
                      f"{failed.outcome.describe()}", torch_trace=expected)


def _where(item: Item, line: int) -> str:
    return f"{item.case.path}:{line + item.case.line_offset} `{statement_text(item.case, line)}`"


def describe_failure(result: ItemResult) -> str:
    """The report of a non-passing item: where, what, both values, how to rerun."""
    item = result.item
    if result.verdict != DIVERGES:
        return f"{item.id}: {result.verdict}: {result.reason}"
    d = result.divergence or result.message_divergence
    assert d is not None
    kind = "message text differs" if d.strict else "diverges from torch"
    lines = [
        f"{item.id}: {result.engine} {kind}",
        f"  at {_where(item, d.line)}",
        f"  {d.describe()}",
    ]
    if result.divergence is None:
        lines.append("  (only the exact message text differs; the error kind agrees)")
    elif result.message_divergence is not None and result.message_divergence.step < d.step:
        m = result.message_divergence
        lines.append(f"  earlier, a message text differs at {_where(item, m.line)}: "
                     f"{m.describe()}")
    lines.append(f"  rerun: {result.repro()}")
    return "\n".join(lines)


def items_of(case: Case, file: str | None = None) -> list[Item]:
    """The case's items; `file`: the case file as rerun commands name it (Item.file)."""
    return [Item(case, d, t, file) for d in case.devices for t in case.dtypes]

