"""Where the test command's time goes, by part: CPU time per item, grouped.

Wall time on this shared 2-core machine says more about the other users than about the
tests (an item's wall time was 25-30 times its CPU time at load 25), so items are measured by
CPU time: the process's own and that of the child processes it waited for (os.times), which
counts a subprocess test's interpreters, xdist workers and scripts.

As a pytest plugin it writes one line per item, `<node id>\t<cpu s>\t<wall s>`, to
`$SUITE_PROFILE_OUT-<xdist worker>.tsv`:

    PYTHONPATH=benchmarks SUITE_PROFILE_OUT=/tmp/prof nice pytest -n 2 -p suite_profile ...

Run as a script it groups those lines (or a junitxml file's wall times) by part: the OpInfo
items, the library's case items, and each test file:

    python benchmarks/suite_profile.py /tmp/prof          # the .tsv files of a run
    python benchmarks/suite_profile.py report.xml         # pytest --junitxml (wall only)
    python benchmarks/suite_profile.py /tmp/prof 40       # and the 40 costliest items

With start times (the 4th column) it also prints each worker's timeline: how long it was
busy in items, idle between them, and idle at the end while the other worker still ran (an
xdist tail); and the case items by directory.
"""

from __future__ import annotations

import glob
import os
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Generator, Iterator
from typing import Any, TextIO

import pytest

_out: TextIO | None = None


def _file() -> TextIO:
    global _out
    if _out is None:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        prefix = os.environ.get("SUITE_PROFILE_OUT", "suite_profile")
        _out = open(f"{prefix}-{worker}.tsv", "a", encoding="utf-8")  # noqa: SIM115
    return _out


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Generator[None, None, None]:
    before, started, epoch = os.times(), time.perf_counter(), time.time()
    yield
    after, ended = os.times(), time.perf_counter()
    # user and system time of this process and of its waited-for children
    cpu = sum(b - a for a, b in zip(before[:4], after[:4], strict=True))
    out = _file()
    # the start time, so that a worker's idle tail (waiting for the other's last items) shows
    out.write(f"{item.nodeid}\t{cpu:.3f}\t{ended - started:.3f}\t{epoch:.3f}\n")
    out.flush()


def part(nodeid: str) -> str:
    path = nodeid.split("::")[0]
    if path.startswith("opinfo/"):
        return "opinfo/* (OpInfo items)"
    if path.startswith("cases/"):
        return "cases/* (the library's case items)"
    return path


def _rows(source: str) -> Iterator[tuple[str, float | None, float]]:
    if source.endswith(".xml"):
        for case in ET.parse(source).iter("testcase"):
            file, name = case.get("file"), case.get("name", "")
            nodeid = f"{file}::{name}" if file else \
                case.get("classname", "").replace(".", "/") + "::" + name
            yield nodeid, None, float(case.get("time", 0))
        return
    for path in sorted(glob.glob(f"{source}-*.tsv")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                nodeid, cpu, wall = line.rstrip("\n").split("\t")[:3]
                yield nodeid, float(cpu), float(wall)


def timeline(source: str) -> None:
    """Per worker: items, their CPU and wall time, the gaps between them (collection,
    scheduling, fixture teardown outside the items) and the idle tail before the run's end
    (the last item's end of any worker)."""
    spans: dict[str, list[tuple[float, float, float, str]]] = {}
    for path in sorted(glob.glob(f"{source}-*.tsv")):
        worker = path[len(source) + 1:-len(".tsv")]
        with open(path, encoding="utf-8") as f:
            fields = [line.rstrip("\n").split("\t") for line in f]
        if fields and len(fields[0]) > 3:
            spans[worker] = sorted((float(r[3]), float(r[3]) + float(r[2]), float(r[1]), r[0])
                                   for r in fields)
    if not spans:
        return
    start = min(s[0][0] for s in spans.values())
    end = max(max(e for _, e, _, _ in s) for s in spans.values())
    print("\n| worker | items | CPU s | in items s | gaps s | first start s | idle tail s |"
          "\n|---|---:|---:|---:|---:|---:|---:|")
    cpu_all = 0.0
    for worker, s in spans.items():
        busy = sum(e - b for b, e, _, _ in s)
        last = max(e for _, e, _, _ in s)
        cpu = sum(c for _, _, c, _ in s)
        cpu_all += cpu
        print(f"| {worker} | {len(s)} | {cpu:.0f} | {busy:.0f} | {last - s[0][0] - busy:.0f} |"
              f" {s[0][0] - start:.0f} | {end - last:.0f} |")
    print(f"\nfirst item start to last item end: {end - start:.0f} s; the items' CPU "
          f"{cpu_all:.0f} s = {100 * cpu_all / (len(spans) * (end - start) or 1):.0f} % of "
          f"{len(spans)} x that")
    for worker, s in spans.items():
        print(f"{worker}'s last items: " + "; ".join(
            f"`{n}` {b - start:.0f}-{e - start:.0f} s" for b, e, _, n in s[-5:]))


def by_directory(rows: list[tuple[str, float | None, float]]) -> None:
    """The library's case items by their directory under cases/."""
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for nodeid, cpu, wall in rows:
        if nodeid.startswith("cases/"):
            t = totals[nodeid.split("/")[1] if nodeid.count("/") > 1 else "."]
            t[0], t[1], t[2] = t[0] + 1, t[1] + (cpu or 0.0), t[2] + wall
    if totals:
        print("\n| cases/ directory | items | CPU s | wall s |\n|---|---:|---:|---:|")
        for name, t in sorted(totals.items(), key=lambda kv: -kv[1][1] - kv[1][2] / 1e6):
            print(f"| {name} | {t[0]:.0f} | {t[1]:.0f} | {t[2]:.0f} |")


def main(source: str, top: int = 0) -> None:
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    has_cpu = False
    rows = list(_rows(source))
    for nodeid, cpu, wall in rows:
        t = totals[part(nodeid)]
        t[0] += 1
        t[2] += wall
        if cpu is not None:
            has_cpu = True
            t[1] += cpu
    key = 1 if has_cpu else 2
    whole = sum(t[key] for t in totals.values()) or 1.0
    print("| part | items | CPU s | wall s (sum of items) | share |\n|---|---:|---:|---:|---:|")
    for name, t in sorted(totals.items(), key=lambda kv: -kv[1][key]):
        cpu_text = f"{t[1]:.0f}" if has_cpu else "-"
        print(f"| {name} | {t[0]:.0f} | {cpu_text} | {t[2]:.0f} | {100 * t[key] / whole:.1f} % |")
    n = sum(t[0] for t in totals.values())
    cpu_all = f"{sum(t[1] for t in totals.values()):.0f}" if has_cpu else "-"
    print(f"| all | {n:.0f} | {cpu_all} | {sum(t[2] for t in totals.values()):.0f} | |")
    if top:
        print(f"\n| the {top} costliest items | CPU s | wall s |\n|---|---:|---:|")
        for nodeid, cpu, wall in sorted(rows, key=lambda r: -(r[1] if has_cpu else r[2]))[:top]:
            print(f"| `{nodeid}` | {'-' if cpu is None else f'{cpu:.1f}'} | {wall:.0f} |")
    by_directory(rows)
    if not source.endswith(".xml"):
        timeline(source)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
