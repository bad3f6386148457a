"""pytest plugin and recorder of benchmarks/mutation_by_marker.py (loaded with
`-p mutation_hits`, benchmarks/ on PYTHONPATH).

The marked engine calls `hit(KEY)` where a drawn mutant's change is read. After each test
item, one line is appended to the file $MUTATION_HITS: the item's node id, the keys hit
while it ran, and whether it failed (tab-separated); a line with an empty node id holds the
keys hit outside any item (collection, imports). Written as the run goes, so a run stopped
early still says which items it mapped.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

current = ""
keys: set[str] = set()
failed = False


def hit(key: str) -> None:
    keys.add(key)


def _write(nodeid: str, outcome: str) -> None:
    global keys
    out = os.environ.get("MUTATION_HITS")
    if out:
        with open(out, "a") as f:
            f.write(f"{nodeid}\t{','.join(sorted(keys))}\t{outcome}\n")
    keys = set()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator:
    global current, failed
    _write("", "")  # what ran since the last item: collection, imports
    current, failed = item.nodeid, False
    yield
    # an item that fails on the marked tree may have stopped before a marker: every
    # mutant's run then includes it (see mutation_by_marker.py)
    _write(item.nodeid, "failed" if failed else "ok")
    current = ""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    global failed
    if report.failed:
        failed = True


def pytest_sessionfinish(session: pytest.Session) -> None:
    _write("", "")
