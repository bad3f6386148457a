"""The coverage maps of PyTorch's autograd test files, and the tables generated from them.

Each map (docs/coverage/<file>.yaml, one per test file: test_autograd.yaml for
test/test_autograd.py, test_functional.yaml for test/autograd/test_functional.py) names the
file (`path`) and lists every test function of it at one PyTorch commit, each `todo`
(`todo: <reason>` when it is judged not doable yet, the reason shown in the table),
`out of scope: <category>[: detail]`, or, in scope, a mapping
`{left out: ["<assertion>: <reason>", ...]}` naming the assertions of the test its cases do
not state. Which tests have cases is derived, never written: a case cites the test its
`source:` line names (`source: test_autograd.py <test_name>`, or `<Class>.<test_name>` where
the bare name is not unique; the file's base name says which map). A map may also name
`subsets` of its tests (`{name: [Class.test_name, ...]}`), whose figures the table gives
apart.

"Covered" is exact: a test is covered when its cases state every assertion of the test that
the case language can state, which the map records by listing nothing as left out. A test
with cases and a left-out list is partly covered; a left-out list on a test no case cites is
a problem (that test is todo). The figure covered / in scope counts exact coverage only.

`python -m conformance.report.coverage_map [--check] [--functions-of FILE]` writes each map's
Markdown table (docs/coverage/<file>.md), checks they are up to date, or lists what a map
lacks against a local copy of its test file (for moving the map to a new commit).
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

# the statuses and the error are the maps' shared ones (report/map_lines.py)
from conformance.report.map_lines import COVERED as COVERED
from conformance.report.map_lines import LEFT_OUT as LEFT_OUT
from conformance.report.map_lines import OUT_OF_SCOPE as OUT_OF_SCOPE
from conformance.report.map_lines import PARTLY as PARTLY
from conformance.report.map_lines import STATUSES as STATUSES
from conformance.report.map_lines import TODO as TODO
from conformance.report.map_lines import MapError as MapError
from conformance.report.map_lines import MapForm, read_line

ROOT = Path(__file__).resolve().parents[2]
MAPS_DIR = ROOT / "docs" / "coverage"
MAP_PATH = MAPS_DIR / "test_autograd.yaml"
CASES_PATH = ROOT / "cases"
# a source line that names a test file: `test_x.py <test>`
_SOURCE_FILE = re.compile(r"test_\w+\.py")

# Why a test is out of scope: the reason's first part must be one of these, so the table can
# count by category and a typo shows. Only what an engine with torch's API cannot be asked to
# reproduce (issue 22's list): forward mode, complex dtypes, anomaly mode, gradcheck,
# checkpointing, memory formats, deep graphs and module hooks are in scope.
CATEGORIES: frozenset[str] = frozenset({
    "C++ API", "compile/dynamo", "CUDA-only", "decorators", "internals", "multiple devices",
    "multiprocessing/threads", "nested tensors", "optimizers", "pickling/weakref/GC",
    "private API", "profiler", "Python language", "quantized dtypes", "sparse layouts",
    "tensor subclasses", "torch.func/functorch",
})

_KEY = re.compile(r"Test\w*\.test_\w+")
_NAME = re.compile(r"(?:Test\w*\.)?test_\w+")


_FORM = MapForm("an in-scope entry with assertions left out", "<assertion>: <reason>",
                "the cases' source: lines")


@dataclass(frozen=True)
class Entry:
    key: str  # Class.test_name
    status: str  # TODO (in scope) or OUT_OF_SCOPE, as written in the map
    reason: str = ""  # OUT_OF_SCOPE: "<category>[: detail]"; TODO: why no case covers it yet
    left_out: tuple[str, ...] = ()  # in scope: "<assertion>: <reason>" the cases do not state

    @property
    def name(self) -> str:
        return self.key.split(".", 1)[1]

    @property
    def category(self) -> str:
        return self.reason.split(":", 1)[0]


def map_paths(directory: Path = MAPS_DIR) -> list[Path]:
    """Every map: the YAML files of docs/coverage/, one per PyTorch test file."""
    return sorted(directory.glob("*.yaml"))


def table_path(map_path: Path) -> Path:
    """A map's generated table: its Markdown twin."""
    return map_path.with_suffix(".md")


@dataclass(frozen=True)
class CoverageMap:
    path: str  # the test file in PyTorch, e.g. test/autograd/test_functional.py
    commit: str
    classes: dict[str, int]
    entries: tuple[Entry, ...]
    note: str = ""  # what holds for every test of the file (shown above the table)
    # named groups of the file's tests whose figures the table gives on their own (issue
    # 22's floor counts its forward-mode and complex tests apart)
    subsets: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def source_prefix(self) -> str:
        """What a case's `source:` line starts with to cite a test of this file."""
        return self.path.rsplit("/", 1)[-1]

    @property
    def map_name(self) -> str:
        return self.source_prefix.removesuffix(".py") + ".yaml"

    def resolve(self, name: str) -> list[str]:
        """The keys a source name (`test_x` or `Class.test_x`) can mean."""
        if "." in name:
            return [e.key for e in self.entries if e.key == name]
        return [e.key for e in self.entries if e.name == name]


# refuses a key written twice (a doubled line after a merge)
_UniqueKeyLoader = unique_key_loader(MapError)


def _left_out(key: str, items: tuple[object, ...]) -> tuple[str, ...]:
    for item in items:
        if not isinstance(item, str) or not all(p.strip() for p in item.partition(": ")[::2]):
            raise MapError(f"{key}: left-out item `{item}` is not `<assertion>: <reason>`; "
                           "say what is not stated and why (e.g. `del x.grad: the case "
                           "language has no del`)")
    if len(set(items)) != len(items):
        raise MapError(f"{key}: a left-out item is listed twice")
    return tuple(str(item) for item in items)


def _entry(key: object, value: object) -> Entry:
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise MapError(f"`{key}` is not a test key; write `Class.test_name`")
    line = read_line(key, value, _FORM, CATEGORIES, todo_reasons=True)
    return Entry(key, line.status, line.reason, _left_out(key, line.left_out))


def load_map(path: Path = MAP_PATH) -> CoverageMap:
    """The map in `path`; MapError naming the entry if it breaks the format."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # a SafeLoader
    except yaml.YAMLError as error:
        raise MapError(f"{path}: {error}") from None
    if not isinstance(data, dict) or not {"path", "commit", "classes", "tests"} <= data.keys():
        raise MapError(f"{path}: needs `path` (the test file in PyTorch), `commit`, `classes` "
                       "and `tests`")
    if not _SOURCE_FILE.fullmatch(str(data["path"]).rsplit("/", 1)[-1]):
        raise MapError(f"{path}: `path: {data['path']}` is not a PyTorch test file "
                       "(test/.../test_x.py)")
    entries = tuple(_entry(k, v) for k, v in data["tests"].items())
    counted = Counter(e.key.split(".", 1)[0] for e in entries)
    if counted != Counter(data["classes"]):
        raise MapError(f"{path}: tests per class {dict(counted)} differ from `classes` "
                       f"{data['classes']}: a test line was lost or added")
    return CoverageMap(str(data["path"]), str(data["commit"]), dict(data["classes"]), entries,
                       str(data.get("note", "")).strip(),
                       _subsets(path, data.get("subsets") or {}, {e.key for e in entries}))


def _subsets(path: Path, data: object, keys: set[str]) -> dict[str, tuple[str, ...]]:
    """`subsets: {name: [Class.test_name, ...]}`: each a list of the map's tests, once."""
    if not isinstance(data, dict):
        raise MapError(f"{path}: `subsets` maps a name to a list of the map's tests")
    subsets = {}
    for name, members in data.items():
        if not isinstance(members, list) or not members:
            raise MapError(f"{path}: subset `{name}` must list tests (`Class.test_name`)")
        unknown = [m for m in members if m not in keys]
        if unknown:
            raise MapError(f"{path}: subset `{name}` lists {', '.join(map(str, unknown))}, "
                           "not a test of the map; write `Class.test_name` as under `tests`")
        if len(set(members)) != len(members):
            raise MapError(f"{path}: subset `{name}` lists a test twice")
        subsets[str(name)] = tuple(members)
    return subsets


# test file -> test name -> citing cases
Cited = dict[str, dict[str, list[str]]]


def case_sources(cases: Path = CASES_PATH) -> Cited:
    """For each `source: test_x.py NAME` in the case library, by test file, the cases citing
    NAME (paths relative to the library's parent, sorted)."""
    cited: Cited = {}
    for path in sorted(cases.rglob("*.yaml")):
        try:
            source = load_case(path).source or ""
        except CaseError:  # not a case, so it covers nothing; its collection reports why
            continue
        file, _, name = source.partition(" ")
        if _SOURCE_FILE.fullmatch(file):
            cited.setdefault(file, {}).setdefault(name.strip(), []).append(
                path.relative_to(cases.parent).as_posix())
    return cited


def unmapped_sources(cited: Cited, maps: list[CoverageMap]) -> list[str]:
    """Problems: cases citing a test file that has no map (a typo, or a map to add)."""
    known = {m.source_prefix for m in maps}
    return [f"{', '.join(p for paths in names.values() for p in paths)}: `source: {file} ...` "
            f"names a test file with no coverage map in docs/coverage/ (maps: "
            f"{', '.join(sorted(known))})" for file, names in sorted(cited.items())
            if file not in known]


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


def join(cmap: CoverageMap, cited: Cited) -> Coverage:
    """The map's tests joined with the cases citing its file."""
    coverage = Coverage()
    prefix = cmap.source_prefix
    for name, paths in sorted(cited.get(prefix, {}).items()):
        keys = cmap.resolve(name) if _NAME.fullmatch(name) else []
        if len(keys) == 1:
            coverage.cases.setdefault(keys[0], []).extend(paths)
        elif keys:
            coverage.problems.append(
                f"{', '.join(paths)}: `{name}` is ambiguous in {prefix}; write "
                f"`source: {prefix} <Class>.{name}` with one of "
                f"{', '.join(k.split('.')[0] for k in keys)}")
        else:
            near = ", ".join(e.key for e in cmap.entries if name.split(".")[-1] in e.key)
            coverage.problems.append(
                f"{', '.join(paths)}: `source: {prefix} {name}` names no test of "
                f"{prefix} at {cmap.commit[:12]}; write `source: {prefix} "
                f"<test_name>`" + (f" (similar: {near})" if near else ""))
    for entry in cmap.entries:
        covering = coverage.cases.get(entry.key)
        if covering and entry.status == OUT_OF_SCOPE:
            coverage.problems.append(
                f"{entry.key} is marked out of scope ({entry.reason}) but "
                f"{', '.join(covering)} cover it: mark it `{TODO}` or cite another test")
        if covering and entry.status == TODO and entry.reason:
            coverage.problems.append(
                f"{entry.key} says why it is todo but {', '.join(covering)} cite it: "
                f"write `{TODO}`, listing under `{LEFT_OUT}` what the cases do not state")
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
        f"# Coverage of PyTorch's {cmap.source_prefix}",
        "",
        f"Generated by `python -m conformance.report.coverage_map` from {cmap.map_name} and the "
        "cases' `source:` lines; do not edit.",
        "",
        f"PyTorch commit `{cmap.commit}`, {len(cmap.entries)} test functions. A test is "
        "covered when its cases state every assertion of it that the case language can "
        "state; partly covered when the map lists assertions its cases leave out, each "
        "with the reason.",
        "",
        *([cmap.note.replace("\n", " "), ""] if cmap.note else []),
        f"**Covered / in scope: {covered} / {in_scope} ({share})**; partly covered: {partly}, "
        f"todo: {coverage.count(TODO)}",
        "",
        "| status | tests |",
        "| --- | ---: |",
        *(f"| {s} | {coverage.count(s)} |" for s in STATUSES),
        "",
    ]
    if cmap.subsets:
        lines += ["| subset | tests | covered | partly covered | todo | out of scope | "
                  "covered / in scope |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for name, members in cmap.subsets.items():
            n = Counter(coverage.status[k] for k in members)
            scope = len(members) - n[OUT_OF_SCOPE]
            pct = f" ({100 * n[COVERED] / scope:.1f} %)" if scope else ""
            lines.append(f"| {name} | {len(members)} | {n[COVERED]} | {n[PARTLY]} | {n[TODO]} "
                         f"| {n[OUT_OF_SCOPE]} | {n[COVERED]} / {scope}{pct} |")
        lines.append("")
    lines += [
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
    """`Class.test_name` of every test method defined in a test file's source text, in
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
                        help="exit 1 if a committed table is not up to date")
    parser.add_argument("--functions-of", metavar="FILE",
                        help="compare the map of FILE's base name (test_autograd.py, ...) "
                             "with the test functions of a local copy of that file")
    args = parser.parse_args(argv)
    maps = {path: load_map(path) for path in map_paths()}
    if args.functions_of:
        name = Path(args.functions_of).name
        cmap = next((m for m in maps.values() if m.source_prefix == name), None)
        if cmap is None:
            print(f"no coverage map for {name} in {MAPS_DIR}", file=sys.stderr)
            return 2
        actual = functions_of(Path(args.functions_of).read_text(encoding="utf-8"))
        listed = [e.key for e in cmap.entries]
        for key in actual:
            if key not in listed:
                print(f"missing from the map: {key}")
        for key in listed:
            if key not in actual:
                print(f"not in the file: {key}")
        return 0 if actual == listed else 1
    cited = case_sources()
    problems = unmapped_sources(cited, list(maps.values()))
    stale = False
    for path, cmap in maps.items():
        coverage = join(cmap, cited)
        problems += coverage.problems
        table, target = render(cmap, coverage), table_path(path)
        if args.check:
            current = target.read_text(encoding="utf-8") if target.exists() else ""
            if current != table:
                print(f"{target} is out of date: run python -m conformance.report.coverage_map",
                      file=sys.stderr)
                stale = True
            continue
        target.write_text(table, encoding="utf-8")
        print(f"wrote {target}: covered / in scope {coverage.count(COVERED)} / "
              f"{coverage.in_scope}, partly covered {coverage.count(PARTLY)}, "
              f"todo {coverage.count(TODO)}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems or stale else 0


if __name__ == "__main__":
    sys.exit(main())
