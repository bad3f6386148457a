"""One campaign over several machines, played by local processes (README, "Scaling out"):
shards sharing one example database, their reports merged; a failure one process saved
replays in another (a directory database, and Redis where a server can be started here)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.case_files import write_cases

GENERATED_ID = "conformance/generated_suite.py::test_generated_programs_agree_with_torch"
# An engine every generated program meets the fault of: its leaves' version counters are
# off by one. Not their values, so that the finder's shrinking checks each failing program
# in 4 runs, not 8 (a values divergence also runs torch's float64 twin: gen/program_check.py, and
# tests/conformance/test_generated_report.py, which measured it).
WRONG_LEAVES = '''\
"""torch whose `tensor` factory bumps every new tensor's version counter (an in-place add
of 0)."""
from typing import Any

import torch


def tensor(*args: Any, **kwargs: Any) -> Any:
    out = torch.tensor(*args, **kwargs).detach().add_(0)
    return out.requires_grad_(bool(kwargs.get("requires_grad", False)))


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
'''
# A profile that only replays the database (no programs drawn): what fails under it came
# from the database. Derived from `default`, so the database is added to a derandomized one.
REPLAY_ONLY = """\
from hypothesis import Phase, settings

import conformance.gen.profiles

settings.register_profile("replay-only", parent=settings.get_profile("default"),
                          phases=[Phase.explicit, Phase.reuse])
"""


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if not k.startswith("PYTEST_") and k != "AUTOGRAD_CONFORMANCE_PROFILE"}


def start(cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, *args], cwd=cwd, env=environment(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    out, _ = process.communicate()
    return process.returncode, out


def report(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / "conformance.json").read_text())
    return data


def test_shards_with_a_shared_directory_database_merge_into_one_report(
        tmp_path: Path) -> None:
    write_cases(tmp_path, "exp", "sin")
    # two machines: the same campaign seed, shards 1/2 and 2/2, one database, at once
    runs = [start(tmp_path, "-m", "conformance.cli", "run", "--workers", "1", "--profile",
                  "dev", "--hypothesis-db", "shared-db", "--shard", f"{k}/2", "--report-dir",
                  f"r{k}", "--", "--hypothesis-seed", "7") for k in (1, 2)]
    for process in runs:
        code, out = finish(process)
        assert code == 0, out
    one, two = report(tmp_path / "r1"), report(tmp_path / "r2")
    assert [one["run_info"]["shard"], two["run_info"]["shard"]] == ["1/2", "2/2"]
    assert one["run_info"]["hypothesis_database"] == {
        "kind": "directory", "location": str((tmp_path / "shared-db").resolve())}
    assert one["generated"]["programs"] >= 40 and two["generated"]["programs"] >= 40
    assert one["generated"]["counts"] != two["generated"]["counts"]  # other programs
    code, out = finish(start(tmp_path, "-m", "conformance.cli", "merge", "r1", "r2/"
                             "conformance.json", "--out", "merged"))
    assert code == 0, out
    merged = report(tmp_path / "merged")
    assert out.strip() == ("autograd-conformance: merged 2 reports: " + merged["status"]["line"]
                           + "; report in merged/")
    assert merged["status"]["outcome"] == "PASS"
    programs = one["generated"]["programs"] + two["generated"]["programs"]
    assert merged["generated"]["programs"] == programs
    assert merged["generated"]["counts"] == dict(
        Counter(one["generated"]["counts"]) + Counter(two["generated"]["counts"]))
    assert sorted(r["id"] for r in merged["items"]) == [
        "cases/family/exp.yaml::cpu-float32", "cases/family/sin.yaml::cpu-float32",
        f"{GENERATED_ID}[shard 1/2]", f"{GENERATED_ID}[shard 2/2]"]
    info = merged["run_info"]
    assert (info["collected"], info["executed"], info["shard"]) == (4, 4, "1/2,2/2")
    assert merged["status"]["line"] == ("PASS: 4 pass of 4 collected; 4 executed; merged "
                                        "from 2 reports")
    assert (tmp_path / "merged" / "summary.md").read_text().startswith("**PASS**")
    assert (tmp_path / "merged" / "index.html").is_file()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A Redis server of this test's own, or a skip saying what is missing."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("no redis-server on PATH (e.g. apt-get install redis-server)")
    if importlib.util.find_spec("redis") is None:
        pytest.skip("the `redis` package is not installed (pip install "
                    "'autograd-conformance[redis]')")
    import redis

    port = _free_port()
    process = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1",
                                "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = redis.Redis(port=port)
        for _ in range(200):  # until it accepts connections (a count, not a deadline)
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        else:
            pytest.skip(f"redis-server did not accept connections on port {port}")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait()


def _replays(tmp_path: Path, database: str, empty_database: str | None) -> None:
    (tmp_path / "wrong_leaves.py").write_text(WRONG_LEAVES)
    (tmp_path / "conftest.py").write_text(REPLAY_ONLY)

    def pytest_args(profile: str, shard: str, db: str, name: str) -> list[str]:
        return ["-m", "pytest", "-p", "no:cacheprovider", "--generated-programs", "--engine",
                "wrong_leaves", "--hypothesis-profile", profile, "--hypothesis-db", db,
                "--shard", shard, "--conformance-report", f"report-{name}",
                "--save-divergences", f"found-{name}"]

    # machine 1 draws programs (derandomized `default`), finds the fault, saves it shrunk
    code, out = finish(start(tmp_path, *pytest_args("default", "1/2", database, "finder")))
    assert code == 1, out
    found = (tmp_path / "found-finder" / "divergence-wrong_leaves.yaml").read_text()
    assert report(tmp_path / "report-finder")["items"][0]["verdict"] == "diverges"
    # machine 2, another shard, draws nothing: it only replays the shared database; a
    # third with an empty database is the control
    replay = start(tmp_path, *pytest_args("replay-only", "2/2", database, "replay"))
    control = None if empty_database is None else \
        start(tmp_path, *pytest_args("replay-only", "2/2", empty_database, "control"))
    code, out = finish(replay)
    assert code == 1, out
    assert (tmp_path / "found-replay" / "divergence-wrong_leaves.yaml").read_text() == found
    [record] = report(tmp_path / "report-replay")["items"]
    assert record["verdict"] == "diverges"
    if control is None:
        return
    code, out = finish(control)
    assert code == 0, out  # nothing in its database, nothing drawn: nothing to fail
    assert not (tmp_path / "found-control").exists()
    assert [r["verdict"] for r in report(tmp_path / "report-control")["items"]] == ["skipped"]


def test_a_failure_saved_in_a_shared_directory_replays_in_another_process(
        tmp_path: Path) -> None:
    _replays(tmp_path, "shared-db", "empty-db")


def test_a_failure_saved_in_redis_replays_in_another_process(tmp_path: Path,
                                                             redis_url: str) -> None:
    _replays(tmp_path, redis_url, None)  # the directory test has the control

