"""Replay a profiled suite under xdist's own schedulers: how long would `pytest -n N` take?

The wall time of `pytest -n auto` is not the items' time divided by the workers: xdist's
scheduler decides which worker runs which item, and a worker left without items waits for
the other. This drives pytest-xdist's real scheduler classes (`load`, the default of `-n`,
and `worksteal`) with simulated workers whose items take the time a profile measured
(benchmarks/suite_profile.py's CPU or wall column), in the order the suite collects them:

    pytest --collect-only -q > /tmp/collected.txt          # the collection order
    python benchmarks/xdist_replay.py /tmp/collected.txt /tmp/prof [--workers 2] [--wall]
        [--fallback /tmp/older_prof ...]

It prints, per scheduler, the simulated end of the run and each worker's busy time and idle
tail. What it leaves out: collection and the workers' start (the same for every scheduler),
and that items on two workers slow each other down (the measured times are used as they
are). Items the profile does not hold count 0 s. A worker behaves as xdist's (remote.py):
it runs an item only once it has the next one (or the shutdown) in hand, and a steal takes
only items not yet handed over, or none at all.
"""

from __future__ import annotations

import argparse
import heapq
from collections import deque
from typing import Any

from xdist.scheduler import LoadScheduling, WorkStealingScheduling


class _Log:
    def __call__(self, *args: Any) -> None:
        pass

    def __getattr__(self, name: str) -> _Log:
        return self


class _Config:
    def __init__(self, workers: int) -> None:
        self.options = {"maxschedchunk": None, "tx": ["popen"] * workers}

    def getoption(self, name: str, default: Any = None) -> Any:
        return self.options.get(name, default)

    getvalue = getoption


class Worker:
    """What the scheduler sees of a worker (its WorkerController) and the queue it holds."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.queue: deque[int] = deque()
        self.shutting_down = False
        self.running: int | None = None
        self.busy = 0.0
        self.last_end = 0.0
        self.steal_request: list[int] | None = None

    def send_runtest_some(self, indices: list[int]) -> None:
        self.queue.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True

    def send_steal(self, indices: list[int]) -> None:
        self.steal_request = list(indices)

    def __repr__(self) -> str:
        return self.gateway.id


def replay(order: list[str], seconds: dict[str, float], workers: int, mode: str
           ) -> tuple[float, list[Worker]]:
    sched = (LoadScheduling if mode == "load" else WorkStealingScheduling)(
        _Config(workers), log=_Log())
    nodes = [Worker(f"gw{i}") for i in range(workers)]
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, order)
    sched.schedule()
    now = 0.0
    events: list[tuple[float, int, int, int]] = []  # (end, sequence, worker, item index)
    sequence = iter(range(10**9))

    def serve_steals() -> None:
        for node in nodes:
            if node.steal_request is not None:
                wanted, node.steal_request = node.steal_request, None
                # all or nothing, as remote.py's steal: the first queued item is the worker's
                # "next item", already taken from its queue, so not stealable
                queued = set(list(node.queue)[1:])
                stolen = wanted if set(wanted) <= queued else []
                node.queue = deque(i for i in node.queue if i not in set(stolen))
                sched.remove_pending_tests_from_node(node, stolen)

    def start(k: int) -> None:
        node = nodes[k]
        if node.running is None and node.queue and (len(node.queue) >= 2 or node.shutting_down):
            node.running = node.queue.popleft()
            took = seconds.get(order[node.running], 0.0)
            heapq.heappush(events, (now + took, next(sequence), k, node.running))

    for k in range(workers):
        start(k)
    while events:
        now, _, k, index = heapq.heappop(events)
        node = nodes[k]
        node.busy += seconds.get(order[index], 0.0)
        node.last_end, node.running = now, None
        if mode == "load":
            sched.mark_test_complete(node, index, seconds.get(order[index], 0.0))
        else:
            sched.mark_test_complete(node, index)
        serve_steals()
        for j in range(workers):
            start(j)
    return now, nodes


def _seconds(profile: str, column: int) -> dict[str, float]:
    import glob

    times: dict[str, float] = {}
    for path in sorted(glob.glob(f"{profile}-*.tsv")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                fields = line.rstrip("\n").split("\t")
                times[fields[0]] = float(fields[column])
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collected", help="`pytest --collect-only -q` output: node ids in order")
    parser.add_argument("profile", help="suite_profile's SUITE_PROFILE_OUT prefix")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--wall", action="store_true", help="items' wall time, not CPU")
    parser.add_argument("--fallback", action="append", default=[], metavar="PROFILE",
                        help="an older profile's prefix for the items the first one lacks "
                             "(repeatable; the earlier given wins)")
    args = parser.parse_args()
    with open(args.collected, encoding="utf-8") as f:
        order = [line.strip() for line in f if "::" in line and not line.startswith(" ")]
    seconds: dict[str, float] = {}
    for profile in [*reversed(args.fallback), args.profile]:
        seconds.update(_seconds(profile, 2 if args.wall else 1))
    known = sum(1 for n in order if n in seconds)
    print(f"{len(order)} items collected, {known} of them in the profile, "
          f"{sum(seconds.get(n, 0.0) for n in order):.0f} s in them")
    for mode in ("load", "worksteal"):
        end, nodes = replay(order, seconds, args.workers, mode)
        print(f"{mode}: the run ends at {end:.0f} s; " + "; ".join(
            f"{n} busy {n.busy:.0f} s, idle tail {end - n.last_end:.0f} s" for n in nodes))


if __name__ == "__main__":
    main()
