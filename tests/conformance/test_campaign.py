"""--shard and --hypothesis-db: seeds per shard, the database added to every profile, and
usage errors that name the fix."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

# pytester's in-process runs drop the modules they imported; torch must be imported once.
import torch  # noqa: F401
from hypothesis.database import DirectoryBasedExampleDatabase

from conformance.gen import campaign

DRAWS = """\
import json, os
from hypothesis import given, strategies as st

@given(st.integers(0, 10**9))
def test_draws(n):
    with open(os.environ["DRAWS_FILE"], "a") as f:
        f.write(json.dumps(n) + "\\n")
"""


def draws(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, name: str,
          *args: str) -> list[int]:
    out = pytester.path / f"{name}.jsonl"
    monkeypatch.setenv("DRAWS_FILE", str(out))
    result = pytester.runpytest("test_draws.py", "-p", "no:randomly", *args)
    result.assert_outcomes(passed=1)
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.parametrize("profile", ["default", "ci"])
def test_shards_of_a_derandomized_profile_draw_apart_and_the_same_each_time(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, profile: str) -> None:
    pytester.makepyfile(test_draws=DRAWS)
    plain = draws(pytester, monkeypatch, "plain", "--hypothesis-profile", profile)
    one = draws(pytester, monkeypatch, "one", "--hypothesis-profile", profile, "--shard", "1/2")
    again = draws(pytester, monkeypatch, "again", "--hypothesis-profile", profile,
                  "--shard", "1/2")
    two = draws(pytester, monkeypatch, "two", "--hypothesis-profile", profile, "--shard", "2/2")
    assert one == again  # a shard draws the same values every time
    assert len(set(one) & set(two)) < len(one) // 10  # two shards draw apart
    assert one != plain and two != plain
    # the campaign seed moves every shard, and each stays reproducible
    seeded = draws(pytester, monkeypatch, "seeded", "--hypothesis-profile", profile,
                   "--shard", "1/2", "--hypothesis-seed", "night-1")
    assert seeded == draws(pytester, monkeypatch, "seeded2", "--hypothesis-profile", profile,
                           "--shard", "1/2", "--hypothesis-seed", "night-1")
    assert seeded != one


def test_a_shard_with_a_campaign_seed_keeps_the_database(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # hypothesis alone turns the database off under --hypothesis-seed; a shard keeps it:
    # a failure saved by shard 1 replays in shard 2 of the same campaign seed
    pytester.makepyfile(test_big="""\
from hypothesis import given, strategies as st

@given(st.integers(0, 1000))
def test_small(n):
    assert n < 900
""")
    common = ("--hypothesis-profile", "dev", "--hypothesis-db", "db",
              "--hypothesis-seed", "7", "-p", "no:randomly")
    first = pytester.runpytest("test_big.py", "--shard", "1/2", *common)
    first.assert_outcomes(failed=1)
    assert any((pytester.path / "db").iterdir())  # the failure was saved
    pytester.makeconftest("""\
from hypothesis import Phase, settings
import conformance.gen.profiles
settings.register_profile("replay", parent=settings.get_profile("dev"),
                          phases=[Phase.explicit, Phase.reuse])
""")
    replayed = pytester.runpytest("test_big.py", "--shard", "2/2", *common[2:],
                                  "--hypothesis-profile", "replay")
    replayed.assert_outcomes(failed=1)
    replayed.stdout.fnmatch_lines(["*n=900*"])  # the shrunk example, from the database


@pytest.mark.parametrize("text", ["0/2", "3/2", "1/0", "2", "a/b", "-1/2"])
def test_a_bad_shard_is_a_usage_error(pytester: pytest.Pytester, text: str) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest("test_x.py", f"--shard={text}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--shard*{text}*K*N*"])


def test_shard_text_and_seeds() -> None:
    assert campaign.parse_shard(" 2/4 ") == campaign.Shard(2, 4)
    assert str(campaign.parse_shard("3/3")) == "3/3"
    seeds = {campaign.shard_seed(campaign.Shard(k, 4)) for k in range(1, 5)}
    assert len(seeds) == 4
    # N is not in the seed: a campaign that grows keeps its shards' programs
    assert campaign.shard_seed(campaign.Shard(1, 2)) == campaign.shard_seed(campaign.Shard(1, 3))
    assert campaign.shard_seed(campaign.Shard(1, 2), 5) != campaign.shard_seed(
        campaign.Shard(1, 2))


def test_redis_urls_are_shown_without_secrets() -> None:
    assert campaign.shown("redis://user:s3cret@cache.example:6380/2?password=x") == \
        "redis://cache.example:6380/2"
    assert campaign.describe("redis://:pw@localhost:6379/0", None, None)[
        "hypothesis_database"] == {"kind": "redis", "location": "redis://localhost:6379/0"}
    assert "pw" not in json.dumps(campaign.describe("rediss://:pw@h/0", None, None))


def test_redis_without_its_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis: ImportError
    monkeypatch.setitem(sys.modules, "hypothesis.extra.redis", None)
    with pytest.raises(ValueError, match=r"pip install 'autograd-conformance\[redis\]'"):
        campaign.open_database("redis://localhost:6379/0")


def test_a_file_is_no_database_directory(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(ValueError, match="not a directory"):
        campaign.open_database(str(tmp_path / "f"))
    assert isinstance(campaign.open_database(str(tmp_path / "new")),
                      DirectoryBasedExampleDatabase)


def test_the_database_is_added_to_a_derandomized_profile_and_recorded(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_show="""\
from hypothesis import settings

def test_show():
    s = settings()
    print("DERANDOMIZE", s.derandomize, "DATABASE", type(s.database).__name__)
""")
    result = pytester.runpytest("test_show.py", "-s", "--hypothesis-profile", "default",
                                "--hypothesis-db", "db", "--shard", "2/3",
                                "--conformance-report", "out")
    result.stdout.fnmatch_lines(["*DERANDOMIZE True DATABASE DirectoryBasedExampleDatabase*"])
    info = json.loads((pytester.path / "out" / "conformance.json").read_text())["run_info"]
    assert info["hypothesis_database"] == {"kind": "directory",
                                           "location": str((pytester.path / "db").resolve())}
    assert info["shard"] == "2/3"
    assert info["shard_seed"] == campaign.shard_seed(campaign.Shard(2, 3))
    assert info["hypothesis_profile"] == "default"
    # without the option, the profile keeps its own: none for `default`
    result = pytester.runpytest("test_show.py", "-s", "--hypothesis-profile", "default")
    result.stdout.fnmatch_lines(["*DERANDOMIZE True DATABASE NoneType*"])


def test_dev_and_nightly_draw_new_programs_each_run_and_a_shard_keeps_them_random(
        pytester: pytest.Pytester) -> None:
    from hypothesis import settings

    from conformance.gen import profiles

    assert [settings.get_profile(p).derandomize for p in profiles.PROFILES] == [
        p in ("default", "ci") for p in profiles.PROFILES]
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    pytester.runpytest("test_x.py", "--hypothesis-profile", "nightly", "--shard", "1/2",
                       "--conformance-report", "out")
    info = json.loads((pytester.path / "out" / "conformance.json").read_text())["run_info"]
    assert (info["shard"], info["shard_seed"], info["hypothesis_database"]) == ("1/2", None,
                                                                                None)
