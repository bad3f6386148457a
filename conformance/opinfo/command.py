"""The OpInfo check of the covered entries on an engine: `python -m conformance.opinfo`.

One item per covered entry x dtype (float32, float64), each a check.check of OpInfo's samples
and error inputs, a verdict per part. The run passes when every part passes or is left out
by the map (`known`, still diverging), and no part the map leaves out agrees with torch in
every dtype checked (then the map's line is stale: delete it). A covered entry OpInfo no
longer lists is an error, never skipped.

The same items run under pytest and xdist (`pytest --opinfo`, `autograd-conformance run`),
with the report of a run: conformance/opinfo/item.py decides their verdicts by the same rule
(a left-out line is stale only when its parts agree with torch in every dtype).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from conformance.opinfo import database, opmap
from conformance.opinfo.entry_check import CheckResult, check, plan
from conformance.opinfo.ids import DTYPES
from conformance.run.engine import Engine, load_engine
from conformance.run.verdicts import AGREEING, FAILING, Verdict


@dataclass
class Item:
    """One entry x dtype: its check, or why it could not be checked."""

    key: str
    dtype: str
    result: CheckResult | None = None
    error: str = ""

    @property
    def verdicts(self) -> Counter[str]:
        if self.result is None:
            return Counter({Verdict.ERROR.value: 1})
        return Counter(p.verdict for p in self.result.parts)

    @property
    def ok(self) -> bool:
        # a part the map leaves out that still fails is `known`, not failing
        return self.result is not None and all(p.verdict not in FAILING
                                               for p in self.result.parts)


def run_item(key: str, dtype: str, engine: Engine, torch_engine: Engine,
             omap: opmap.OpMap) -> Item:
    entries = database.autograd_entries()
    if key not in entries:
        return Item(key, dtype, error=f"OpInfo of this torch has no entry {key} (with "
                    "autograd): the map is of another torch, or the entry was renamed")
    entry = omap.get(key)
    op = entries[key]
    result = check(op, plan(op, key, dtype), engine, torch_engine, engine.masks,
                   entry.left_out if entry is not None else ())
    return Item(key, dtype, result)


def stale(items: Iterable[Item], omap: opmap.OpMap) -> list[str]:
    """The map's left-out lines that name no part, or whose every part agrees with torch in
    every dtype checked (but an unstable line: rounding, nondeterminism): each is to be
    deleted (or narrowed)."""
    verdicts: dict[tuple[str, str], set[str]] = {}
    checked: set[str] = set()
    for item in items:
        if item.result is None:
            continue
        checked.add(item.key)
        for part in item.result.parts:
            if part.left_out:
                verdicts.setdefault((item.key, part.left_out), set()).add(part.verdict)
    found = []
    for key in sorted(checked):
        entry = omap.get(key)
        for line in entry.left_out if entry is not None else ():
            seen = verdicts.get((key, line.text))
            if seen is None:
                found.append(f"{key}: `{line.text}` names no sample or error input of OpInfo's")
            elif seen <= set(AGREEING) and line.can_go_stale:
                # (an unstable line never goes stale, a CPU-marked one only on its CPU
                # class: item.py's module docstring)
                found.append(f"{key}: `{line.text}` agrees with torch now: delete it")
    return found


def run(keys: Iterable[str], dtypes: Iterable[str], engine: Engine, torch_engine: Engine,
        omap: opmap.OpMap) -> list[Item]:
    return [run_item(key, dtype, engine, torch_engine, omap)
            for key in keys for dtype in dtypes]


def summary(items: list[Item]) -> str:
    parts: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for item in items:
        parts += item.verdicts
        for part in item.result.parts if item.result else ():
            kinds[part.kind] += 1
    entries = len({i.key for i in items})
    failing = sum(1 for i in items if not i.ok)
    counts = ", ".join(f"{n} {v}" for v, n in sorted(parts.items(), key=lambda i: -i[1]))
    texts = sum(1 for i in items for p in (i.result.parts if i.result else ()) if p.message)
    return (f"{entries} entries, {len(items)} items ({failing} failing): "
            f"{kinds['sample']} samples, {kinds['jvp']} jvp steps and "
            f"{kinds['error input']} error inputs checked: "
            f"{counts or 'nothing'}; {texts} differ in a message's exact text only")


def report(item: Item, verbose: bool) -> list[str]:
    counts = ", ".join(f"{n} {v}" for v, n in item.verdicts.most_common())
    lines = [f"{'ok  ' if item.ok else 'FAIL'} {item.key} {item.dtype}: "
             f"{item.error or counts}"]
    for part in item.result.parts if item.result else ():
        if part.verdict in FAILING or (verbose and part.verdict != Verdict.PASS.value):
            why = f" (left out: {part.left_out})" if part.left_out else ""
            lines.append(f"    {part.part}: {part.verdict}{why}: {part.detail}")
        if verbose and part.message:
            lines.append(f"    {part.part}: message text differs {part.message}")
    return lines


def proposed_left_out(items: list[Item]) -> str:
    """The map lines that would leave out each failing part (diverges, unsupported, error),
    with the divergence in a few words as the reason; consecutive parts with the same reason
    as one range. A starting point for the map: a reason is better said by hand where these
    words do not say why."""
    failing: dict[str, dict[tuple[str, int], str]] = {}
    for item in items:
        for part in item.result.parts if item.result else ():
            if part.verdict in FAILING:
                failing.setdefault(item.key, {}).setdefault((part.kind, part.index),
                                                            part.short)
    lines = []
    for key, parts in failing.items():
        ranges: list[list[Any]] = []  # [kind, first, last, reason]
        for (kind, index), reason in sorted(parts.items()):
            last = ranges[-1] if ranges else None
            if last is not None and last[0] == kind and last[2] == index - 1 and \
                    last[3] == reason:
                last[2] = index
            else:
                ranges.append([kind, index, index, reason])
        lines.append(f"  {key}:")
        lines.append(f"    {opmap.LEFT_OUT}:")
        for kind, first, last, reason in ranges:
            span = f"{first}" if first == last else f"{first}-{last}"
            lines.append(f"      - {json.dumps(f'{kind} {span}: {reason}')}")
    return "\n".join(lines) + "\n" if lines else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.opinfo",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("entries", nargs="*",
                        help="OpInfo entries to check (full names); default: every covered one")
    parser.add_argument("--engine", default="reference_engine",
                        help="the engine's module (default: reference_engine)")
    parser.add_argument("--dtype", action="append", choices=DTYPES,
                        help="a dtype to check (repeatable; default: float32 and float64)")
    parser.add_argument("--propose-left-out", action="store_true",
                        help="print, as the map's YAML, lines leaving out every failing part")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also list the known and masked parts")
    args = parser.parse_args(argv)
    try:
        omap = opmap.load_map()
        coverage = opmap.join(omap, opmap.rows())
        keys = args.entries or coverage.covered()
        unknown = [k for k in keys if k not in coverage.status]
        if unknown:
            parser.error(f"not OpInfo entries with autograd in the map: {', '.join(unknown)}")
        engine, torch_engine = load_engine(args.engine), load_engine("torch")
        items = run(keys, args.dtype or DTYPES, engine, torch_engine, omap)
    except (database.OpInfoUnavailable, opmap.MapError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.propose_left_out:
        print(proposed_left_out(items), end="")
        return 0
    for item in items:
        for line in report(item, args.verbose):
            print(line)
    stale_lines = stale(items, omap)
    for line in stale_lines:
        print(f"stale: {line}")
    print(summary(items))
    return 0 if all(i.ok for i in items) and not stale_lines else 1
