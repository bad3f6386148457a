"""The OpInfo sweep: every sample of every OpInfo item, a campaign outside CI.

The README's test command (`pytest -n auto`, which CI runs) checks at most 16 of an OpInfo
item's samples (pyproject.toml's `conformance_opinfo_samples`, drawn seeded by the item's
id), with every error input and every part a left-out line of the map names. This runs the
OpInfo items alone with every sample (`--opinfo-samples 0`), as pytest collects them from an
empty directory (so no other test runs), and records the result with the revision:

    python benchmarks/opinfo_sweep.py [--workers 2] [--save] [-- PYTEST ARGS]

What only this finds: a divergence in a sample beyond an item's 16 drawn ones (the
sample-heavy entries: max_pool1d/2d/3d with 864-1440 samples, svd, gaussian_nll_loss, ...).
With --save the result is written to benchmarks/results/opinfo_sweep.json; the exit status
is pytest's. `autograd-conformance run --opinfo` checks every sample too, with the report.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "opinfo_sweep.json"


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=False).stdout.strip()


def outcomes(junit: Path) -> tuple[Counter[str], list[str]]:
    """Each test case's outcome in a junitxml file, counted, and the failing ids."""
    counts: Counter[str] = Counter()
    failing = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        if case.find("failure") is not None or case.find("error") is not None:
            counts["failed"] += 1
            failing.append(name)
        elif (skipped := case.find("skipped")) is not None:
            counts["xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"] += 1
        else:
            counts["passed"] += 1
    return counts, failing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="2", help="pytest -n (default 2)")
    parser.add_argument("--save", action="store_true", help=f"write {RESULT.name}")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        empty, junit = Path(tmp) / "empty", Path(tmp) / "sweep.xml"
        empty.mkdir()
        command = [sys.executable, "-m", "pytest", "--opinfo", "--opinfo-samples", "0",
                   "-p", "no:randomly", "-n", args.workers, "-q", str(empty),
                   f"--rootdir={ROOT}", "-c", str(ROOT / "pyproject.toml"),
                   f"--junitxml={junit}", *args.pytest_args]
        load, started = os.getloadavg(), time.perf_counter()
        date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        status = subprocess.run(command, cwd=ROOT, check=False).returncode
        wall = time.perf_counter() - started
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        counts, failing = outcomes(junit) if junit.exists() else (Counter(), [])
    result: dict[str, Any] = {
        "benchmark": "opinfo_sweep", "date": date,
        "revision": _git("rev-parse", "HEAD"), "dirty": bool(_git("status", "--porcelain")),
        "command": " ".join(["pytest", *command[3:]]).replace(tmp, "TMP"),
        "exit_status": status,
        "outcomes": dict(counts), "failing": failing, "wall_s": round(wall, 1),
        "cpu_s": round(children.ru_utime + children.ru_stime, 1),
        "load_average_at_start": [round(x, 2) for x in load],
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
    }
    print(json.dumps(result, indent=2))
    if args.save:
        RESULT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main())
