"""pytest plugin of benchmarks/mutation_by_coverage.py (loaded with `-p mutation_items`,
benchmarks/ on PYTHONPATH).

- Under `coverage run`, each test item's lines are recorded in a coverage context named by
  its node id (what runs at collection, the engine's imports, stays in the empty context).
- `--only-shard I/N` keeps every Nth item from the Ith (the map's parts run in N processes).
- `--only-items FILE` keeps the items whose node ids FILE lists, one a line, and deselects
  the rest: a mutant's run is the items that execute its lines.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import coverage
import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--only-items", default=None, help="run only the node ids this file lists")
    parser.addoption("--only-shard", default=None, help="I/N: every Nth item from the Ith")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator:
    cov = coverage.Coverage.current()
    if cov is not None:
        cov.switch_context(item.nodeid)
    yield
    if cov is not None:
        cov.switch_context("")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    listed, shard = config.getoption("--only-items"), config.getoption("--only-shard")
    if listed is not None:
        wanted = set(Path(listed).read_text().splitlines())
        keep = [i.nodeid in wanted for i in items]
    elif shard is not None:
        first, every = map(int, shard.split("/"))
        keep = [k % every == first for k in range(len(items))]
    else:
        return
    config.hook.pytest_deselected(items=[i for i, k in zip(items, keep, strict=True) if not k])
    items[:] = [i for i, k in zip(items, keep, strict=True) if k]
