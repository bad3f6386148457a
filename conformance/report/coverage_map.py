"""The coverage map of PyTorch's test/test_autograd.py, and the table generated from it.

The map (docs/coverage/test_autograd.yaml) lists every test function of the file at one
PyTorch commit, each `todo`, `out of scope: <category>[: detail]`, or, in scope, a mapping
`{left out: ["<assertion>: <reason>", ...]}` naming the assertions of the test its cases do
not state. Which tests have cases is derived, never written: a case cites the test its
`source:` line names (`source: test_autograd.py <test_name>`, or `<Class>.<test_name>` where
the bare name is not unique).

"Covered" is exact: a test is covered when its cases state every assertion of the test that
the case language can state, which the map records by listing nothing as left out. A test
with cases and a left-out list is partly covered; a left-out list on a test no case cites is
a problem (that test is todo). The figure covered / in scope counts exact coverage only.

`python -m conformance.report.coverage_map [--check] [--functions-of FILE]` writes the Markdown
table (docs/coverage/test_autograd.md), checks it is up to date, or lists what the map lacks
against a local copy of test_autograd.py (for moving the map to a new commit).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from conformance.case.loader import CaseError, load_case
from conformance.case.unique_keys import unique_key_loader

ROOT = Path(__file__).resolve().parents[2]
MAP_PATH = ROOT / "docs" / "coverage" / "test_autograd.yaml"
TABLE_PATH = ROOT / "docs" / "coverage" / "test_autograd.md"
CASES_PATH = ROOT / "cases"

SOURCE_PREFIX = "test_autograd.py"
TODO = "todo"
OUT_OF_SCOPE = "out of scope"
COVERED = "covered"
PARTLY = "partly covered"
LEFT_OUT = "left out"
STATUSES = (COVERED, PARTLY, TODO, OUT_OF_SCOPE)  # the table's order

# Why a test is out of scope: the reason's first part must be one of these, so the table can
# count by category and a typo shows.
CATEGORIES: frozenset[str] = frozenset({
    "anomaly mode", "C++ API", "checkpoint", "compile/dynamo", "complex dtypes", "CUDA-only",
    "decorators", "deep graphs", "forward-mode AD", "gradcheck tooling", "internals",
    "memory formats", "multiple devices", "multiprocessing/threads", "nested tensors",
    "nn.Module hooks", "optimizers", "pickling/weakref/GC", "private API", "profiler",
    "Python language", "quantized dtypes", "sparse layouts", "tensor subclasses",
    "torch.func/functorch",
})

_KEY = re.compile(r"Test\w*\.test_\w+")
_NAME = re.compile(r"(?:Test\w*\.)?test_\w+")


class MapError(ValueError):
    """The map file breaks its format."""


@dataclass(frozen=True)
class Entry:
    key: str  # Class.test_name
    status: str  # TODO (in scope) or OUT_OF_SCOPE, as written in the map
    reason: str = ""  # for OUT_OF_SCOPE: "<category>[: detail]"
    left_out: tuple[str, ...] = ()  # in scope: "<assertion>: <reason>" the cases do not state

    @property
    def name(self) -> str:
        return self.key.split(".", 1)[1]

    @property
    def category(self) -> str:
        return self.reason.split(":", 1)[0]


@dataclass(frozen=True)
class CoverageMap:
    commit: str
    classes: dict[str, int]
    entries: tuple[Entry, ...]

    def resolve(self, name: str) -> list[str]:
        """The keys a source name (`test_x` or `Class.test_x`) can mean."""
        if "." in name:
            return [e.key for e in self.entries if e.key == name]
        return [e.key for e in self.entries if e.name == name]


# refuses a key written twice (a doubled line after a merge)
_UniqueKeyLoader = unique_key_loader(MapError)


def _left_out(key: str, value: dict[object, object]) -> tuple[str, ...]:
    items = value.get(LEFT_OUT)
    if set(value) != {LEFT_OUT} or not isinstance(items, list) or not items:
        raise MapError(f"{key}: an in-scope entry with assertions left out is "
                       f"`{{{LEFT_OUT}: [\"<assertion>: <reason>\", ...]}}` (a non-empty list)")
    for item in items:
        if not isinstance(item, str) or not all(p.strip() for p in item.partition(": ")[::2]):
            raise MapError(f"{key}: left-out item `{item}` is not `<assertion>: <reason>`; "
                           "say what is not stated and why (e.g. `del x.grad: the case "
                           "language has no del`)")
    if len(set(items)) != len(items):
        raise MapError(f"{key}: a left-out item is listed twice")
    return tuple(items)


def _entry(key: object, value: object) -> Entry:
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise MapError(f"`{key}` is not a test key; write `Class.test_name`")
    if value == TODO:
        return Entry(key, TODO)
    if isinstance(value, dict):
        return Entry(key, TODO, left_out=_left_out(key, value))
    prefix = OUT_OF_SCOPE + ": "
    if not isinstance(value, str) or not value.startswith(prefix):
        hint = " (covered is derived from the cases' source: lines)" if value == COVERED else ""
        raise MapError(f"{key}: `{value}` is not a status{hint}; write `{TODO}`, "
                       f"`\"{OUT_OF_SCOPE}: <category>[: detail]\"` or "
                       f"`{{{LEFT_OUT}: [\"<assertion>: <reason>\", ...]}}`")
    reason = value[len(prefix):].strip()
    entry = Entry(key, OUT_OF_SCOPE, reason)
    if entry.category not in CATEGORIES:
        raise MapError(f"{key}: unknown category `{entry.category}`; "
                       f"use one of {', '.join(sorted(CATEGORIES))}")
    return entry


def load_map(path: Path = MAP_PATH) -> CoverageMap:
    """The map in `path`; MapError naming the entry if it breaks the format."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # a SafeLoader
    except yaml.YAMLError as error:
        raise MapError(f"{path}: {error}") from None
    if not isinstance(data, dict) or not {"commit", "classes", "tests"} <= data.keys():
        raise MapError(f"{path}: needs `commit`, `classes` and `tests`")
    entries = tuple(_entry(k, v) for k, v in data["tests"].items())
    counted = Counter(e.key.split(".", 1)[0] for e in entries)
    if counted != Counter(data["classes"]):
        raise MapError(f"{path}: tests per class {dict(counted)} differ from `classes` "
                       f"{data['classes']}: a test line was lost or added")
    return CoverageMap(str(data["commit"]), dict(data["classes"]), entries)


def case_sources(cases: Path = CASES_PATH) -> dict[str, list[str]]:
    """For each `source: test_autograd.py NAME` in the case library, the cases citing NAME
    (paths relative to the library's parent, sorted)."""
    cited: dict[str, list[str]] = {}
    for path in sorted(cases.rglob("*.yaml")):
        try:
            source = load_case(path).source or ""
        except CaseError:  # not a case, so it covers nothing; its collection reports why
            continue
        if source.split(" ", 1)[0] == SOURCE_PREFIX:
            name = source[len(SOURCE_PREFIX):].strip()
            cited.setdefault(name, []).append(path.relative_to(cases.parent).as_posix())
    return cited


@dataclass
class Coverage:
    """The map joined with the cases: a status per test, and what does not fit."""

    status: dict[str, str] = field(default_factory=dict)  # key -> one of STATUSES
    cases: dict[str, list[str]] = field(default_factory=dict)  # key -> citing cases
    problems: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for s in self.status.values() if s == status)

    @property
    def in_scope(self) -> int:
        return len(self.status) - self.count(OUT_OF_SCOPE)


def join(cmap: CoverageMap, cited: dict[str, list[str]]) -> Coverage:
    coverage = Coverage()
    for name, paths in sorted(cited.items()):
        keys = cmap.resolve(name) if _NAME.fullmatch(name) else []
        if len(keys) == 1:
            coverage.cases.setdefault(keys[0], []).extend(paths)
        elif keys:
            coverage.problems.append(
                f"{', '.join(paths)}: `{name}` is ambiguous in test_autograd.py; write "
                f"`source: {SOURCE_PREFIX} <Class>.{name}` with one of "
                f"{', '.join(k.split('.')[0] for k in keys)}")
        else:
            near = ", ".join(e.key for e in cmap.entries if name.split(".")[-1] in e.key)
            coverage.problems.append(
                f"{', '.join(paths)}: `source: {SOURCE_PREFIX} {name}` names no test of "
                f"test_autograd.py at {cmap.commit[:12]}; write `source: {SOURCE_PREFIX} "
                f"<test_name>`" + (f" (similar: {near})" if near else ""))
    for entry in cmap.entries:
        covering = coverage.cases.get(entry.key)
        if covering and entry.status == OUT_OF_SCOPE:
            coverage.problems.append(
                f"{entry.key} is marked out of scope ({entry.reason}) but "
                f"{', '.join(covering)} cover it: mark it `{TODO}` or cite another test")
        if entry.left_out and not covering:
            coverage.problems.append(
                f"{entry.key} lists assertions left out but no case cites it: it is `{TODO}`; "
                f"write `{TODO}`, or add the cases that state the rest")
        if not covering:
            coverage.status[entry.key] = entry.status
        else:
            coverage.status[entry.key] = PARTLY if entry.left_out else COVERED
    return coverage


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(cmap: CoverageMap, coverage: Coverage) -> str:
    """The Markdown table: the figure, the counts, then one row per test in file order."""
    covered, partly, in_scope = coverage.count(COVERED), coverage.count(PARTLY), coverage.in_scope
    share = f"{100 * covered / in_scope:.1f} %" if in_scope else "n/a"
    lines = [
        "# Coverage of PyTorch's test_autograd.py",
        "",
        "Generated by `python -m conformance.report.coverage_map` from test_autograd.yaml and the "
        "cases' `source:` lines; do not edit.",
        "",
        f"PyTorch commit `{cmap.commit}`, {len(cmap.entries)} test functions. A test is "
        "covered when its cases state every assertion of it that the case language can "
        "state; partly covered when the map lists assertions its cases leave out, each "
        "with the reason.",
        "",
        f"**Covered / in scope: {covered} / {in_scope} ({share})**; partly covered: {partly}, "
        f"todo: {coverage.count(TODO)}",
        "",
        "| status | tests |",
        "| --- | ---: |",
        *(f"| {s} | {coverage.count(s)} |" for s in STATUSES),
        "",
        "| out of scope, by category | tests |",
        "| --- | ---: |",
    ]
    categories = Counter(e.category for e in cmap.entries
                         if coverage.status[e.key] == OUT_OF_SCOPE)
    lines += [f"| {c} | {n} |" for c, n in sorted(categories.items(), key=lambda i: (-i[1], i[0]))]
    lines += ["", "| test | status | cases | left out or reason |", "| --- | --- | --- | --- |"]
    for entry in cmap.entries:
        cases = "<br>".join(f"[{p}](../../{p})" for p in coverage.cases.get(entry.key, []))
        detail = entry.reason or "<br>".join(entry.left_out)  # an entry has one or neither
        lines.append(f"| `{entry.key}` | {coverage.status[entry.key]} | {cases} | "
                     f"{_cell(detail)} |")
    return "\n".join(lines) + "\n"


def functions_of(source_text: str) -> list[str]:
    """`Class.test_name` of every test method defined in a test_autograd.py source text, in
    file order (classes whose name starts with Test; methods whose name starts with test_)."""
    keys = []
    for node in ast.parse(source_text).body:
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            keys += [f"{node.name}.{item.name}" for item in node.body
                     if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                     and item.name.startswith("test_")]
    return keys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.report.coverage_map",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the committed table is not up to date")
    parser.add_argument("--functions-of", metavar="FILE",
                        help="compare the map with the test functions of a local "
                             "test_autograd.py")
    args = parser.parse_args(argv)
    cmap = load_map()
    if args.functions_of:
        actual = functions_of(Path(args.functions_of).read_text(encoding="utf-8"))
        listed = [e.key for e in cmap.entries]
        for key in actual:
            if key not in listed:
                print(f"missing from the map: {key}")
        for key in listed:
            if key not in actual:
                print(f"not in the file: {key}")
        return 0 if actual == listed else 1
    coverage = join(cmap, case_sources())
    for problem in coverage.problems:
        print(problem, file=sys.stderr)
    table = render(cmap, coverage)
    if args.check:
        current = TABLE_PATH.read_text(encoding="utf-8") if TABLE_PATH.exists() else ""
        if current != table:
            print(f"{TABLE_PATH} is out of date: run python -m conformance.report.coverage_map",
                  file=sys.stderr)
            return 1
        return 1 if coverage.problems else 0
    TABLE_PATH.write_text(table, encoding="utf-8")
    print(f"wrote {TABLE_PATH}: covered / in scope {coverage.count(COVERED)} / "
          f"{coverage.in_scope}, partly covered {coverage.count(PARTLY)}, "
          f"todo {coverage.count(TODO)}")
    return 1 if coverage.problems else 0


if __name__ == "__main__":
    sys.exit(main())
