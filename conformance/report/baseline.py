"""Baselines: a run's results merged into an expectations file, keeping what people wrote
(as wpt's `update-metadata` merges a run into its metadata files).

`--write-expectations FILE` (and `autograd-conformance update-expectations`, from a report)
judge every entry of FILE against the case items of the run (`usage`, by
`decision.decide`, the rule the run itself follows) and edit FILE as text, by the
entries' line spans, so every byte of what stays is kept:

- an entry some item of the run needed (made `known`, skipped, or an allowed pass) is kept;
- an entry that applies to no item that ran (outside the run's selection, another device,
  torch or platform) is kept, and says nothing;
- a *stale* entry (it applies to items that ran and none needed it: they pass now, or fail
  otherwise than it expects) is listed, and removed only with `prune`; generated-program
  entries are never removed (a run draws its own programs);
- an item whose status an entry could allow (diverges, error, timeout) and none does gets a
  new entry naming exactly that item, with a reason to rewrite naming line and field, and,
  where the engine declares a backend (`conformance_backend`), a `backend:` condition;
- what it writes no entry for (a case torch breaks, an API the engine lacks, an item whose
  worker died, a generated program's divergence) is listed, with what to do instead (an
  API lacking by design is listed by hand, `status: unsupported`: no run can tell that).

Ids and reasons are written as JSON strings (YAML double-quoted scalars), never raw, so no
character of a file name (a newline, `#`, `: `, quotes) can end a line or start a comment.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.case.diagnostics import CaseError
from conformance.report import status_line
from conformance.run import expectations, verdicts
from conformance.run.decision import decide
from conformance.run.expectations import Expectations, Known
from conformance.run.verdicts import Verdict

DIVERGES = Verdict.DIVERGES.value
# Items listed in the summary, at most (the counts are always complete).
MAX_LISTED = 20


def _pattern(item_id: str) -> str:
    """An fnmatch pattern matching exactly `item_id`."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in item_id)


def _quoted(text: str) -> str:
    # A JSON string is a YAML double-quoted scalar; ensure_ascii also escapes YAML's
    # non-ASCII line breaks (U+0085, U+2028, U+2029)
    return json.dumps(text, ensure_ascii=True)


def shown_id(text: str) -> str:
    """An id (or any text) as a message line or a YAML comment shows it: quoted when it
    holds a newline or the like, which would end the line."""
    return text if text.isprintable() else _quoted(text)


def printable(text: str) -> str:
    """`text` with each character that is neither printable nor a line break written as its
    escape: a reason holding one is refused when the file is read back (it would reach the
    terminal and summary.md), and a written reason quotes a file name or a message."""
    return "".join(c if c.isprintable() or c == "\n" else
                   c.encode("unicode_escape").decode("ascii") for c in text)


def _is_case_item(record: dict[str, Any]) -> bool:
    return not status_line.is_load_error(record) and record.get("features") != ["generated"]


def _status(record: dict[str, Any]) -> str | None:
    """The item's status before the expectations (None: it ended without a verdict of the
    runner, e.g. its worker died; or a report too old to say)."""
    status = record.get("status")
    if status is None and record.get("engine") is not None and \
            record.get("verdict") not in (Verdict.KNOWN.value, Verdict.ERROR.value):
        status = record.get("verdict")  # a record written before statuses were recorded
    return None if status is None else str(status)


def _why(record: dict[str, Any], status: str) -> str:
    """Where and how an item failed, for the reason of its new entry."""
    d = record.get("divergence") or record.get("message_divergence")
    if status != DIVERGES:
        first = str(record.get("reason") or "").strip().splitlines()[:1]
        return f"{status}: {first[0][:200] if first else 'no reason recorded'}"
    if not d:
        return "diverges from torch"
    kind = "message text differs" if d.get("strict") else "diverges"
    return f"{kind} at {record.get('file')}:{d.get('line')} `{d.get('statement')}`, " \
           f"field `{d.get('field')}`"


def _unlisted_why(record: dict[str, Any], status: str | None) -> str | None:
    """Why a failing item gets no entry (None: it passed, or an entry can list it)."""
    if record.get("features") == ["generated"]:
        if record.get("verdict") == DIVERGES:
            return "generated programs diverged: list such a divergence by pattern, e.g. " \
                   '`- generated: {field: "*.values", statement: "* = torch.exp(*"}`'
        return None if record.get("verdict") != Verdict.ERROR.value else \
            "the generated-program item ended in error (see the report)"
    if status is None and record.get("verdict") == Verdict.ERROR.value:
        return "ended without a verdict (its worker crashed or was killed): an entry with " \
               "`skip: true` keeps it from running"
    if status == Verdict.CASE_WRONG.value:
        return "the case disagrees with torch: fix the case, no entry excuses it"
    if status == Verdict.UNSUPPORTED.value:
        return f"unsupported: the engine lacks {', '.join(record.get('missing_api') or [])} " \
               "(add it; only if the engine cannot have it by design, list the item by hand " \
               "with `status: unsupported` and the reason)"
    return None


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


@dataclass
class Usage:
    """How the items of one run used an expectations file's entries."""
    needed: list[Known] = field(default_factory=list)
    stale: list[tuple[Known, str]] = field(default_factory=list)  # with why
    idle: list[Known] = field(default_factory=list)  # applied to no item that ran
    passing: dict[int, list[str]] = field(default_factory=dict)  # needed, yet lists passes
    new: list[tuple[dict[str, Any], str]] = field(default_factory=list)  # record, status
    unlisted: list[tuple[dict[str, Any], str]] = field(default_factory=list)  # record, why


def usage(known: Expectations, records: Iterable[dict[str, Any]],
          generated_matched: set[int] | None = None) -> Usage:
    """Judge every entry against the run's records (see the module docstring).
    `generated_matched`: the generated-program entries the run's programs matched (None:
    not known, as from a report; such entries are then idle)."""
    used: set[int] = set()
    ran: dict[int, Counter[str]] = {}  # entry -> statuses of the items it applied to
    found = Usage()
    generated_ran = False
    for r in records:
        if status_line.is_load_error(r):
            continue
        status = _status(r)
        if not _is_case_item(r):
            generated_ran |= r.get("verdict") != Verdict.SKIPPED.value
            entries: tuple[Known, ...] = ()
        else:
            entries = known.applying(str(r["id"]), str(r.get("device")), str(r.get("dtype")))
            skipping = next((e for e in entries if e.skip), None)
            if skipping is not None:  # it never runs
                used.add(skipping.index)
                continue
        why = _unlisted_why(r, status)
        if why is not None:
            found.unlisted.append((r, why))
        if not _is_case_item(r) or status is None or status == Verdict.SKIPPED.value:
            continue  # no entry is judged by it
        for e in entries:
            ran.setdefault(e.index, Counter())[status] += 1
        decision = decide(status, "", entries)
        if decision.entry is not None:
            used.add(decision.entry.index)
        elif status in verdicts.EXCUSABLE:
            found.new.append((r, status))
        if decision.passes_now is not None:
            found.passing.setdefault(decision.passes_now.index, []).append(str(r["id"]))
    for k in known.known:
        if k.generated_entry:
            if generated_matched is None or not generated_ran:
                found.idle.append(k)
            elif k.index in generated_matched:
                found.needed.append(k)
            else:
                found.stale.append((k, "no generated program of this run diverged so"))
        elif k.index in used:
            found.needed.append(k)
        elif k.index in ran:
            found.stale.append((k, _stale_why(k, ran[k.index])))
        else:
            found.idle.append(k)
    stale = {k.index for k, _ in found.stale}
    found.passing = {i: ids for i, ids in found.passing.items() if i not in stale}
    return found


def _stale_why(entry: Known, statuses: Counter[str]) -> str:
    count = sum(statuses.values())
    passing = sum(statuses[v] for v in verdicts.AGREEING)
    if passing == count:
        return f"the {_plural(count, 'item')} it lists pass{'es' if count == 1 else ''} now"
    now = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    return f"it expects {entry.expects()}; its {_plural(count, 'item')} now: {now}"


@dataclass
class Update:
    """What merging a run into an expectations file did (`text` is the new file)."""
    shown: str
    created: bool
    text: str
    changed: bool
    usage: Usage
    pruned: bool

    def lines(self, in_use: bool = False) -> list[str]:
        u = self.usage
        removed = [k for k, _ in u.stale if self.pruned and not k.generated_entry]
        kept = len(u.needed) + len(u.idle) + len(u.stale) - len(removed)
        what = "created" if self.created else "merged this run into"
        in_use = in_use and not self.created
        head = f"expectations: {what} {self.shown}{' (the file this run used)' if in_use else ''}" \
               f": kept {_plural(kept, 'entry', 'entries')}" \
               f" ({len(u.idle)} outside this run), added {len(u.new)}, " \
               f"{len(u.stale)} stale"
        if u.stale:
            head += " removed" if self.pruned and len(removed) == len(u.stale) else \
                " listed (--prune-expectations removes them)" if not self.pruned else \
                f" ({len(removed)} removed; generated-program entries stay)"
        out = [head]
        out += [f"  stale: {k.where(self.shown)}: {why}" for k, why in u.stale]
        out += [f"  {self.shown}:{line}: also lists {_plural(len(ids), 'item')} that pass now "
                f"(narrow it): {', '.join(shown_id(i) for i in ids[:5])}"
                for line, ids in ((k.line, u.passing[k.index]) for k in u.needed
                                  if k.index in u.passing)]
        out += [f"  added: {shown_id(str(r['id']))} ({status})"
                for r, status in u.new[:MAX_LISTED]]
        out += [f"  not listed: {shown_id(str(r['id']))}: {why}"
                for r, why in u.unlisted[:MAX_LISTED]]
        hidden = max(0, len(u.new) - MAX_LISTED) + max(0, len(u.unlisted) - MAX_LISTED)
        if hidden:
            out.append(f"  ... and {hidden} more")
        return out


def _entry_lines(record: dict[str, Any], status: str, indent: int,
                 backend: str | None = None) -> list[str]:
    pad = " " * indent
    lines = [f"{pad}- items: {_quoted(_pattern(str(record['id'])))}"]
    if status != DIVERGES:
        lines.append(f"{pad}  status: {status}")
    if backend is not None:
        # what an engine gets wrong depends on the backend it compiled with (inductor's
        # divergences are not aot_eager's): the entry holds for the run's backend only
        lines.append(f"{pad}  backend: {_quoted(backend)}")
    reason = printable("TODO (written from a run): " + _why(record, status))
    lines.append(f"{pad}  reason: {_quoted(reason)}")
    return lines


def _added(u: Usage, indent: int, engine: str, torch_version: str,
           backend: str | None = None) -> list[str]:
    if not u.new:
        return []
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    pad = " " * indent
    return [f"{pad}# added from the run of {when} ({shown_id(engine)}, torch "
            f"{shown_id(torch_version)}):",
            f"{pad}# rewrite each reason: what differs, and what modelling it would take",
            *(line for r, status in u.new
              for line in _entry_lines(r, status, indent, backend))]


HEADER = [
    "# Known divergences of {engine} from torch: an expectations file (README, \"Baseline\").",
    "# --write-expectations merges a run into it: entries still needed stay as written, new",
    "# failures are added, stale entries are listed (removed with --prune-expectations).",
    "# Widen `items` patterns (fnmatch) where one cause covers several items.",
]


def _edited(text: str, known: Expectations, removed: set[int],
            added: Callable[[int], list[str]], engine: str) -> str:
    """`text` with the entries `removed` cut out and the lines `added(indent)` appended to
    the `known` list; every other byte as it was."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)  # loads: checked by the caller
    node = None if root is None else root.value[0][1]
    block = isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value
    ours = added(node.start_mark.column if block and node is not None else 2)
    if not removed and not ours:
        return text
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += newline
    ours = [line + newline for line in ours]
    if node is None:  # empty, or comments only
        head = [line.format(engine=shown_id(engine)) + newline for line in HEADER] \
            if not lines else []
        return "".join(head + lines) + f"known:{newline}" + "".join(ours)
    if isinstance(node, yaml.ScalarNode) or (node.flow_style and not node.value):
        # `known:`, `known: ~` or `known: []`: the value is cut, the entries go under it
        row, start, end = node.start_mark.line, node.start_mark.column, node.end_mark.column
        lines[row] = lines[row][:start] + lines[row][end:]
        return "".join(lines[:row + 1] + ours + lines[row + 1:])
    if node.flow_style:
        raise CaseError("the `known` list is written in flow style (`[...]`); the update "
                        "edits a block list only", file=known.path, line=node.start_mark.line
                        + 1, fix="write one `- ` line per entry")
    after = max(k.end for k in known.known)  # the last line of the last entry
    lines[after:after] = ours
    for k in sorted((k for k in known.known if k.index in removed), key=lambda k: -k.line):
        del lines[k.line - 1:k.end]
    return "".join(lines)


def update(path: Path, records: Iterable[dict[str, Any]], *, shown: str, engine: str,
           torch_version: str, environment: expectations.Environment, prune: bool = False,
           generated_matched: set[int] | None = None) -> Update:
    """Merge the run's `records` into the expectations file at `path` (absent: created).
    Nothing is written here (see `write`); CaseError when the file cannot be merged into."""
    created = not path.exists()
    try:
        # bytes as they are (read_text would turn \r\n into \n)
        text = "" if created else path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CaseError(f"cannot read the expectations file: {e}", file=shown) from None
    known = expectations.loads(text, shown, environment)
    u = usage(known, records, generated_matched)
    removed = {k.index for k, _ in u.stale if prune and not k.generated_entry}
    entries = [k for k in known.known if k.index not in removed]
    new_text = _edited(text, known, removed,
                       lambda indent: _added(u, indent, engine, torch_version,
                                             environment.engine_backend() if u.new else None),
                       engine)
    if created and new_text == text:
        new_text = "".join(line.format(engine=shown_id(engine)) + "\n" for line in HEADER) \
            + "known: []\n"
    merged = expectations.loads(new_text, shown, environment)
    # the merged file holds exactly what was kept and added (a check of the text edit)
    assert [k.reason for k in merged.known[:len(entries)]] == [k.reason for k in entries] and \
        len(merged.known) == len(entries) + len(u.new), "the expectations merge lost an entry"
    return Update(shown, created, new_text, new_text != text, u, prune)


def write(path: Path, text: str) -> None:
    """Replace `path` with `text` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8", newline="")  # the line ends of `text`, as they are
    os.replace(tmp, path)


class Writer:
    """Registered in the controller when --write-expectations is given: merges the run into
    the file when the session ends, and says what it did."""

    def __init__(self, path: Path, shown: str, records: Callable[[], list[dict[str, Any]]],
                 matched: Callable[[], set[int]], engine: str,
                 environment: expectations.Environment, prune: bool, in_use: bool) -> None:
        self.path, self.shown, self.records, self.matched = path, shown, records, matched
        self.engine, self.environment, self.prune, self.in_use = \
            engine, environment, prune, in_use

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        try:
            done = update(self.path, self.records(), shown=self.shown, engine=self.engine,
                          torch_version=self.environment.torch or "?",
                          environment=self.environment, prune=self.prune,
                          generated_matched=self.matched())
            if done.changed or done.created:
                write(self.path, done.text)
            lines = done.lines(self.in_use)
        except (CaseError, OSError) as e:
            lines = [f"expectations: {self.shown} not written: {e}"]
            if session.exitstatus == 0:
                session.exitstatus = pytest.ExitCode.USAGE_ERROR
        if reporter is not None:
            # the session may end mid progress line (`... [100%]`)
            if getattr(reporter, "_width_of_current_line", None):
                reporter.write_line("")
            for line in lines:
                reporter.write_line(line)


def from_reports(paths: list[Path]) -> tuple[list[dict[str, Any]], expectations.Environment,
                                              str]:
    """The records of one run's report, or of several merged (a campaign's shards), with
    the environment and the engine they were run with; CaseError or ValueError when a report
    cannot be read or predates item statuses."""
    from conformance.report import merge

    unread = [f"{i.path}: {i.problem}" for i in map(merge.load, paths) if i.data is None]
    if unread:
        raise CaseError("cannot read the report: " + "; ".join(unread), file=str(paths[0]))
    data, _ = merge.merge(paths)
    info, records = data["run_info"], data["items"]
    cases = [r for r in records if _is_case_item(r)]
    if cases and not any("status" in r for r in cases):
        raise CaseError("the report records no item statuses (an earlier version wrote it)",
                        file=str(paths[0]), fix="run again with this version")
    return records, expectations.Environment(
        info.get("torch_version"), str(info.get("python_version") or ""),
        str(info.get("platform") or ""), info.get("engine_version"),
        info.get("engine_backend")), str(info["engine"])
