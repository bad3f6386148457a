"""Loaded case files kept between collections (conformance/case/load_cache.py): a kept entry
gives the very Case a fresh load gives, and no entry is ever found for another text, name or
code."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from conformance.case import load_cache
from conformance.case.diagnostics import CaseError
from conformance.case.loader import load_case, read_case_text

ROOT = Path(__file__).resolve().parents[2]
CASE = """description: a case
features: [leaf]
program: |
  x = torch.ones(2, requires_grad=True)
  y = (x * 2).sum()
"""


def entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.pickle"))


def test_kept_cases_are_the_fresh_ones_across_the_library(tmp_path: Path) -> None:
    # every 4th file of the library (a quarter: the round trip is the IR's pickling, the same
    # for every file; the whole library costs seconds)
    files = sorted((ROOT / "cases").rglob("*.yaml"))[::4]
    assert len(files) > 200
    for f in files:
        name = str(f.relative_to(ROOT))
        fresh = load_case(name, read_case_text(f, name))
        assert load_cache.load_case_cached(name, f, tmp_path) == fresh  # made, then kept
        assert load_cache.load_case_cached(name, f, tmp_path) == fresh  # read back
    assert len(entries(tmp_path)) == len(files)


def test_a_changed_text_or_name_is_loaded_afresh(tmp_path: Path) -> None:
    case_file = tmp_path / "c.yaml"
    case_file.write_text(CASE)
    cache = tmp_path / "cache"
    cache.mkdir()
    first = load_cache.load_case_cached("c.yaml", case_file, cache)
    case_file.write_text(CASE.replace("* 2", "* 3"))
    changed = load_cache.load_case_cached("c.yaml", case_file, cache)
    assert changed != first and "* 3" in changed.source_text
    renamed = load_cache.load_case_cached("d.yaml", case_file, cache)
    assert renamed.path == "d.yaml"
    assert len(entries(cache)) == 3


def test_another_codes_entries_are_not_found(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    case_file = tmp_path / "c.yaml"
    case_file.write_text(CASE)
    cache = tmp_path / "cache"
    cache.mkdir()
    load_cache.load_case_cached("c.yaml", case_file, cache)
    # an entry of other code under this key would be found: plant one where it would be
    monkeypatch.setattr(load_cache, "code_fingerprint", lambda: "other code")
    load_cache.load_case_cached("c.yaml", case_file, cache)
    assert len(entries(cache)) == 2


def test_the_fingerprint_reads_every_source_file(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("A = 1\n")
    (package / "sub" / "b.py").write_text("B = 1\n")
    monkeypatch.setattr(load_cache, "_CODE", (package,))

    def fingerprint() -> str:
        load_cache.code_fingerprint.cache_clear()
        return load_cache.code_fingerprint()

    try:
        before = fingerprint()
        (package / "sub" / "b.py").write_text("B = 2\n")
        assert fingerprint() != before
        (package / "sub" / "b.py").write_text("B = 1\n")
        assert fingerprint() == before
    finally:
        monkeypatch.undo()
        load_cache.code_fingerprint.cache_clear()
    assert load_cache.code_fingerprint() != before  # the real packages' again


def test_an_unreadable_entry_is_loaded_afresh_and_written_again(tmp_path: Path) -> None:
    case_file = tmp_path / "c.yaml"
    case_file.write_text(CASE)
    cache = tmp_path / "cache"
    cache.mkdir()
    fresh = load_cache.load_case_cached("c.yaml", case_file, cache)
    [entry] = entries(cache)
    for broken in (b"not a pickle", pickle.dumps("a string"),
                   pickle.dumps(load_case("other.yaml", CASE))):
        entry.write_bytes(broken)
        assert load_cache.load_case_cached("c.yaml", case_file, cache) == fresh
        assert pickle.loads(entry.read_bytes()) == fresh


def test_a_file_that_fails_to_load_fails_every_time_and_is_not_kept(tmp_path: Path) -> None:
    case_file = tmp_path / "c.yaml"
    case_file.write_text(CASE.replace("features: [leaf]", "features: [no_such_feature]"))
    cache = tmp_path / "cache"
    cache.mkdir()
    for _ in range(2):
        with pytest.raises(CaseError, match="unknown feature `no_such_feature`"):
            load_cache.load_case_cached("c.yaml", case_file, cache)
    assert entries(cache) == []


def test_a_folder_that_cannot_be_written_keeps_nothing(tmp_path: Path) -> None:
    case_file = tmp_path / "c.yaml"
    case_file.write_text(CASE)
    not_a_folder = tmp_path / "file"  # (root writes into a read-only folder: a file instead)
    not_a_folder.write_text("")
    for _ in range(2):
        assert load_cache.load_case_cached("c.yaml", case_file, not_a_folder).path == "c.yaml"
    assert not_a_folder.read_text() == "" and sorted(p.name for p in tmp_path.iterdir()) == [
        "c.yaml", "file"]


def test_the_variable_chooses_the_folder_or_none(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        monkeypatch.setenv(load_cache.CACHE_VARIABLE, "")
        load_cache.cache_directory.cache_clear()
        assert load_cache.cache_directory() is None
        monkeypatch.setenv(load_cache.CACHE_VARIABLE, str(tmp_path))
        load_cache.cache_directory.cache_clear()
        directory = load_cache.cache_directory()
        assert directory is not None and directory.parent == tmp_path and directory.is_dir()
    finally:
        load_cache.cache_directory.cache_clear()


def test_only_the_latest_fingerprints_folders_are_kept(tmp_path: Path) -> None:
    for i in range(load_cache.KEPT_FINGERPRINTS + 3):
        old = tmp_path / f"old{i:02d}"
        old.mkdir()
        os.utime(old, (1000 + i, 1000 + i))
    current = tmp_path / "current"
    current.mkdir()
    load_cache._prune(tmp_path, current)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == ["current", *(f"old{i:02d}" for i in range(3, load_cache.KEPT_FINGERPRINTS + 3))]


def test_a_folder_others_can_write_is_not_read(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # Entries are unpickled: a fingerprint folder that another user could have filled (group-
    # or world-writable, as under /tmp) is never used, and a planted entry is never read.
    folder = tmp_path / load_cache.code_fingerprint()[:32]
    folder.mkdir()
    case_file = tmp_path / "c.yaml"
    case_file.write_text(CASE)
    try:
        monkeypatch.setenv(load_cache.CACHE_VARIABLE, str(tmp_path))
        for mode, used in ((0o777, False), (0o720, False), (0o700, True)):
            folder.chmod(mode)
            load_cache.cache_directory.cache_clear()
            assert (load_cache.cache_directory() == folder) is used, oct(mode)
    finally:
        load_cache.cache_directory.cache_clear()
