"""The op map: every OpInfo entry that supports autograd, and the table generated from it.

The map (conformance/opinfo/opinfo.yaml, package data: the OpInfo check reads its left-out
lists at run time) lists every entry of OpInfo's `op_db` at one torch release that supports
some mode of autograd (supports_autograd, supports_forward_ad or supports_gradgrad), keyed
by OpInfo's full name (`max.binary` for a variant), each `todo`, `out of scope:
<category>[: detail]`, or `{left out: ["<part>: <reason>", ...]}`. Which entries are
covered is derived, never written: the reference engine's registry row of the same name
(reference_engine/registry.py) models a `torch` entry (its function, method and in-place
forms; `max` covers `max.binary` and the other variants; a namespaced row such as
`nn.functional.elu` or `special.entr` the entry of that name). A covered entry whose map line
lists parts left out is partly covered: the OpInfo check does not count those parts (it
runs them, and says whether they still diverge: a part left out that agrees with torch in
every dtype is reported, so the list cannot go stale). A part is `sample N` (its
backward-mode steps), `jvp N` (its forward-mode step), `error input N` (OpInfo's order at
the map's torch), a range of them (`sample N-M`) or `kwarg NAME` (every sample passing that
keyword). The figure covered / in scope counts exact coverage only, per family.

`python -m conformance.opinfo.opmap [--check]` writes docs/coverage/opinfo.md (or checks it
is up to date); `--against-opinfo` lists how the map differs from the installed OpInfo.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from conformance.case.unique_keys import unique_key_loader
from conformance.opinfo.database import FAMILIES, family_of_key

# the statuses and the error are the maps' shared ones (report/map_lines.py)
from conformance.report.map_lines import COVERED as COVERED
from conformance.report.map_lines import LEFT_OUT as LEFT_OUT
from conformance.report.map_lines import OUT_OF_SCOPE as OUT_OF_SCOPE
from conformance.report.map_lines import PARTLY as PARTLY
from conformance.report.map_lines import STATUSES as STATUSES
from conformance.report.map_lines import TODO as TODO
from conformance.report.map_lines import MapError as MapError
from conformance.report.map_lines import MapForm, read_line
from reference_engine import registry

MAP_PATH = Path(__file__).with_name("opinfo.yaml")
ROOT = Path(__file__).resolve().parents[2]
TABLE_PATH = ROOT / "docs" / "coverage" / "opinfo.md"


# Why an entry is out of scope: the reason's first part is one of these (a closed list: a
# new reason is added here, with what it means, which the table shows).
CATEGORIES: dict[str, str] = {
    "sparse layouts": "sparse tensors in or out (the harness's tensors are strided)",
    "quantized layouts": "quantized tensors in or out",
    "no defined gradient": "listed for forward AD or gradgrad flags, no float gradient",
    "random without a seeded equivalent": "torch's generator's stream cannot be matched",
    "complex dtypes": "complex inputs or outputs whatever the sample dtype",
    "low-precision dtypes": "float16 / bfloat16 conversions (the check runs float32/64)",
    "private API": "`_`-prefixed ops, torch.ops.aten internals",
    "backward kernels": "an op that is itself some op's backward",
}

# A part of a covered entry the map leaves out: `sample N`, `sample N-M` (N to M, both
# included), `jvp N[-M]` (sample N's forward-mode step), `error input N` or `error input
# N-M`, `kwarg NAME` (every sample passing NAME, its jvp step too).
_PART = re.compile(r"(sample|jvp|error input) (\d+)(?:-(\d+))?|kwarg (\w+)")
_KEY = re.compile(r"[\w.\-]+")
# A line's mark of the CPU class its difference shows on: MKL's and OpenBLAS' kernels (and
# torch's vectorized ones) are chosen at run time by the CPU's instructions, so a float32
# last bit or a signed zero of an LAPACK-based grad may differ on an AVX-512 machine and
# agree on an AVX2 one; torch's CPU capability names that class.
_CPU = re.compile(r"fails where torch's CPU capability is (\w+(?: or \w+)*)")


@functools.cache
def cpu_capability() -> str:
    """torch's CPU capability here (AVX512, AVX2, DEFAULT, ...): what its kernels dispatch
    on, following the CPU's instructions (or ATEN_CPU_CAPABILITY)."""
    import torch  # the OpInfo check's dependency; the map's writer never calls this

    return str(torch.backends.cpu.get_cpu_capability())


_FORM = MapForm("a covered entry with parts left out", "<part>: <reason>",
                "reference_engine/registry.py")


@dataclass(frozen=True)
class Part:
    """A part of an entry's check the map leaves out, with the reason."""

    text: str  # as written: "<part>: <reason>"
    kind: str  # "sample", "jvp", "error input" or "kwarg"
    value: int | str  # the first sample or error input's index, or the keyword
    reason: str
    last: int = -1  # the last index of a range `sample N-M` (N for one index)

    @property
    def part(self) -> str:
        return self.text.partition(": ")[0]

    @property
    def unstable(self) -> bool:
        """A difference that shows on some runs only: last bits (its reason says "rounding"),
        which the CPU's vector instructions decide, or torch's own nondeterminism (its reason
        says "not deterministic"), so agreeing here does not make the line stale."""
        reason = self.reason.lower()
        return "rounding" in reason or "not deterministic" in reason

    @property
    def cpus(self) -> tuple[str, ...]:
        """The CPU classes the line's difference was measured on, where its reason says
        "fails where torch's CPU capability is <X>[ or <Y>...]"
        (torch.backends.cpu.get_cpu_capability: AVX512, AVX2, DEFAULT...), or ()."""
        found = _CPU.search(self.reason)
        return tuple(found.group(1).split(" or ")) if found else ()

    @property
    def can_go_stale(self) -> bool:
        """Whether agreeing here makes the line stale: a line marked with CPU classes can
        on a CPU of those classes only (there it must still fail, rounding or not: a marked
        line that agrees on its own class is stale) and never elsewhere; an unmarked one
        unless it is unstable."""
        if self.cpus:
            return cpu_capability() in self.cpus
        return not self.unstable

    def covers(self, kind: str, index: int, kwargs: Iterable[str] = ()) -> bool:
        """Whether this part names sample or error input `index` (`kwargs`: its keywords)."""
        if self.kind == "kwarg":
            return kind in ("sample", "jvp") and self.value in tuple(kwargs)
        return kind == self.kind and isinstance(self.value, int) and \
            self.value <= index <= self.last


@dataclass(frozen=True)
class Entry:
    key: str  # OpInfo's full name: `name` or `name.variant`
    status: str  # TODO or OUT_OF_SCOPE, as written
    reason: str = ""  # OUT_OF_SCOPE: "<category>[: detail]"
    left_out: tuple[Part, ...] = ()

    @property
    def family(self) -> str:
        return family_of_key(self.key)

    @property
    def category(self) -> str:
        return self.reason.split(":", 1)[0]

    @property
    def row_name(self) -> str:
        """The name of the registry row that would model it: the entry's name without its
        variant, namespace included (`max.binary` -> `max`, `nn.functional.pad.constant` ->
        `nn.functional.pad`, `special.entr` -> `special.entr`)."""
        if self.family == "torch":
            return self.key.split(".", 1)[0]
        return f"{self.family}.{self.key[len(self.family) + 1:].split('.', 1)[0]}"


@dataclass(frozen=True)
class OpMap:
    torch: str  # the torch release OpInfo was read from
    commit: str  # its git commit (torch.version.git_version)
    families: dict[str, int]  # entries per family, so a lost or doubled line shows
    entries: tuple[Entry, ...]

    def get(self, key: str) -> Entry | None:
        return next((e for e in self.entries if e.key == key), None)


# refuses a key written twice (a doubled line after a merge)
_UniqueKeyLoader = unique_key_loader(MapError)


def _part(key: str, item: object) -> Part:
    text = item if isinstance(item, str) else ""
    part, _, reason = text.partition(": ")
    match = _PART.fullmatch(part)
    if match is None or not reason.strip():
        raise MapError(f"{key}: left-out item `{item}` is not `<part>: <reason>` with a part "
                       "`sample N[-M]`, `jvp N[-M]`, `error input N[-M]` or `kwarg NAME` "
                       "(e.g. `kwarg alpha: the row's addmm takes no alpha`)")
    if match.group(4):
        return Part(text, "kwarg", match.group(4), reason)
    first = int(match.group(2))
    last = first if match.group(3) is None else int(match.group(3))
    if last <= first and match.group(3) is not None:
        raise MapError(f"{key}: left-out item `{item}`: a range N-M needs N < M")
    return Part(text, match.group(1), first, reason, last)


def _entry(key: object, value: object) -> Entry:
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise MapError(f"`{key}` is not an OpInfo entry name; write its full name "
                       "(`max.binary` for a variant)")
    line = read_line(key, value, _FORM, CATEGORIES)
    parts = tuple(_part(key, item) for item in line.left_out)
    if len({p.part for p in parts}) != len(parts):
        raise MapError(f"{key}: a part is left out twice")
    return Entry(key, line.status, line.reason, parts)


def load_map(path: Path = MAP_PATH) -> OpMap:
    """The map in `path`; MapError naming the entry if it breaks the format."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
    except yaml.YAMLError as error:
        raise MapError(f"{path}: {error}") from None
    if not isinstance(data, dict) or not {"torch", "commit", "families", "entries"} <= data.keys():
        raise MapError(f"{path}: needs `torch`, `commit`, `families` and `entries`")
    entries = tuple(_entry(k, v) for k, v in data["entries"].items())
    counted = Counter(e.family for e in entries)
    if counted != Counter(data["families"]) or set(data["families"]) - set(FAMILIES):
        raise MapError(f"{path}: entries per family {dict(counted)} differ from `families` "
                       f"{data['families']}: an entry was lost or added")
    return OpMap(str(data["torch"]), str(data["commit"]), dict(data["families"]), entries)


def rows() -> dict[str, str]:
    """The registry's differentiable rows, by name, with their feature family."""
    return {r.name: r.feature for r in registry.OPS if r.differentiable}


@dataclass
class Coverage:
    """The map joined with the registry: a status per entry, and what does not fit."""

    status: dict[str, str] = field(default_factory=dict)  # key -> one of STATUSES
    row: dict[str, str] = field(default_factory=dict)  # key -> the registry row covering it
    problems: list[str] = field(default_factory=list)

    def count(self, status: str, family: str | None = None) -> int:
        return sum(1 for k, s in self.status.items()
                   if s == status and (family is None or family_of_key(k) == family))

    def in_scope(self, family: str | None = None) -> int:
        return sum(1 for k, s in self.status.items()
                   if s != OUT_OF_SCOPE and (family is None or family_of_key(k) == family))

    def covered(self) -> list[str]:
        """The keys of the entries the OpInfo check runs: covered and partly covered."""
        return [k for k, s in self.status.items() if s in (COVERED, PARTLY)]


def join(omap: OpMap, registry_rows: dict[str, str]) -> Coverage:
    coverage = Coverage()
    for entry in omap.entries:
        row = entry.row_name if entry.row_name in registry_rows else None
        if row is not None and entry.status == OUT_OF_SCOPE:
            coverage.problems.append(
                f"{entry.key} is marked out of scope ({entry.reason}) but the registry row "
                f"`{row}` models it: mark it `{TODO}`")
        if entry.left_out and row is None:
            coverage.problems.append(
                f"{entry.key} lists parts left out but no registry row models it: it is "
                f"`{TODO}`")
        if row is None:
            coverage.status[entry.key] = entry.status
        else:
            coverage.row[entry.key] = row
            coverage.status[entry.key] = PARTLY if entry.left_out else COVERED
    return coverage


def _share(covered: int, in_scope: int) -> str:
    return f"{100 * covered / in_scope:.1f} %" if in_scope else "n/a"


def family_table(coverage: Coverage) -> str:
    """The figure covered / in scope per family, as a Markdown table (also in README.md)."""
    lines = ["| family | covered / in scope | partly covered | todo | out of scope |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for fam in (*FAMILIES, None):
        covered, in_scope = coverage.count(COVERED, fam), coverage.in_scope(fam)
        lines.append(f"| {fam or '**all**'} | {covered} / {in_scope} "
                     f"({_share(covered, in_scope)}) | {coverage.count(PARTLY, fam)} | "
                     f"{coverage.count(TODO, fam)} | {coverage.count(OUT_OF_SCOPE, fam)} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(omap: OpMap, coverage: Coverage) -> str:
    """The Markdown table: the figures per family, the counts, then one row per entry."""
    covered, in_scope = coverage.count(COVERED), coverage.in_scope()
    lines = [
        "# Coverage of PyTorch's OpInfo database",
        "",
        "Generated by `python -m conformance.opinfo.opmap` from conformance/opinfo/opinfo.yaml "
        "and reference_engine/registry.py; do not edit.",
        "",
        f"OpInfo (`op_db`) of torch {omap.torch} (commit `{omap.commit}`): "
        f"{len(omap.entries)} entries that support autograd. An entry is covered when the "
        "reference engine's registry row of the same name models it and the OpInfo check "
        "(`python -m conformance.opinfo`) compares all of its samples and error inputs; "
        "partly covered when the map leaves parts of it out, each with the reason. The "
        "singular vectors and eigenvectors of the entries in conformance/opinfo/gauge.py's "
        "GAUGES (svd, eigh and what is built on them) are compared up to the sign of each "
        "vector (README, \"Operator breadth\").",
        "",
        f"**Covered / in scope: {covered} / {in_scope} ({_share(covered, in_scope)})**; "
        f"partly covered: {coverage.count(PARTLY)}, todo: {coverage.count(TODO)}",
        "",
        family_table(coverage),
        "| out of scope, by category | entries |",
        "| --- | ---: |",
    ]
    categories = Counter(e.category for e in omap.entries
                         if coverage.status[e.key] == OUT_OF_SCOPE)
    lines += [f"| {c}: {_cell(CATEGORIES[c])} | {n} |"
              for c, n in sorted(categories.items(), key=lambda i: (-i[1], i[0]))]
    unused = sorted(set(rows()) - set(coverage.row.values()))
    lines += ["", "Registry rows with no OpInfo entry of their name: "
              + (", ".join(f"`{r}`" for r in unused) or "none") + "."]
    lines += ["", "| entry | family | status | row | left out or reason |",
              "| --- | --- | --- | --- | --- |"]
    for entry in omap.entries:
        detail = entry.reason or "<br>".join(p.text for p in entry.left_out)
        row = coverage.row.get(entry.key)
        lines.append(f"| `{entry.key}` | {entry.family} | {coverage.status[entry.key]} | "
                     f"{f'`{row}`' if row else ''} | {_cell(detail)} |")
    return "\n".join(lines) + "\n"


def current() -> Coverage:
    """The committed map joined with the registry."""
    return join(load_map(), rows())


def against_opinfo(omap: OpMap) -> list[str]:
    """How the map differs from the installed OpInfo: its torch release and commit, entries
    OpInfo has that the map lacks and the reverse, and the order. Empty when current."""
    import torch

    from conformance.opinfo import database

    entries = database.autograd_entries()
    for op in entries.values():  # a namespace not in FAMILIES is an error
        database.family(op.name)
    found = []
    release = torch.__version__.split("+")[0]
    if (release, torch.version.git_version) != (omap.torch, omap.commit):
        found.append(f"the map is of torch {omap.torch} ({omap.commit[:12]}), the installed "
                     f"torch is {release} ({str(torch.version.git_version)[:12]})")
    listed = [e.key for e in omap.entries]
    found += [f"missing from the map: {k}" for k in entries if k not in listed]
    found += [f"not in OpInfo: {k}" for k in listed if k not in entries]
    common = [k for k in entries if k in listed]
    if common != [k for k in listed if k in entries]:
        found.append("the map lists the entries in another order than OpInfo")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.opinfo.opmap",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the committed table is not up to date")
    parser.add_argument("--against-opinfo", action="store_true",
                        help="list how the map differs from the installed torch's OpInfo")
    args = parser.parse_args(argv)
    omap = load_map()
    if args.against_opinfo:
        differences = against_opinfo(omap)
        for line in differences:
            print(line)
        return 1 if differences else 0
    coverage = join(omap, rows())
    for problem in coverage.problems:
        print(problem, file=sys.stderr)
    table = render(omap, coverage)
    if args.check:
        if not TABLE_PATH.exists() or TABLE_PATH.read_text(encoding="utf-8") != table:
            print(f"{TABLE_PATH} is out of date: run python -m conformance.opinfo.opmap",
                  file=sys.stderr)
            return 1
        return 1 if coverage.problems else 0
    TABLE_PATH.write_text(table, encoding="utf-8")
    print(f"wrote {TABLE_PATH}: covered / in scope {coverage.count(COVERED)} / "
          f"{coverage.in_scope()}, partly covered {coverage.count(PARTLY)}, "
          f"todo {coverage.count(TODO)}")
    return 1 if coverage.problems else 0


if __name__ == "__main__":
    sys.exit(main())
