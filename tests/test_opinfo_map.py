"""The OpInfo op map (conformance/opinfo/opinfo.yaml): its format, covered derived from the
registry, the committed table generated from it, and (with OpInfo installed) the map being
OpInfo's own list at the pinned torch."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.opinfo import database, opmap


def test_committed_table_is_the_generators_output():
    omap = opmap.load_map()
    coverage = opmap.join(omap, opmap.rows())
    assert coverage.problems == []
    assert opmap.TABLE_PATH.read_text(encoding="utf-8") == opmap.render(omap, coverage), \
        "docs/coverage/opinfo.md is stale: run python -m conformance.opinfo.opmap"
    assert opmap.main(["--check"]) == 0


def test_covered_is_the_registry_rows_of_the_entries_names():
    omap = opmap.load_map()
    coverage = opmap.join(omap, opmap.rows())
    rows = opmap.rows()
    for entry in omap.entries:
        name = entry.row_name
        expected = (opmap.PARTLY if entry.left_out else opmap.COVERED) \
            if name in rows else entry.status
        assert coverage.status[entry.key] == expected, entry.key
    # a row taken away: its entries fall back to what the map says (todo), none is covered
    without_add = {k: v for k, v in rows.items() if k != "add"}
    assert opmap.join(omap, without_add).status["add"] == opmap.TODO


@pytest.mark.parametrize("key, row", [
    ("add", "add"), ("max.binary", "max"), ("nn.functional.elu", "nn.functional.elu"),
    ("nn.functional.pad.constant", "nn.functional.pad"), ("special.entr", "special.entr"),
    ("linalg.norm.subgradients_at_zero", "linalg.norm"),
])
def test_an_entry_is_modelled_by_the_row_of_its_name_namespace_included(key, row):
    assert opmap.Entry(key, opmap.TODO).row_name == row


def test_a_namespaced_row_covers_its_entry_only(tmp_path):
    omap = opmap.load_map(_write(tmp_path, "  elu: todo\n  nn.functional.elu: todo\n",
                                 "torch: 1\n  nn.functional: 1"))
    coverage = opmap.join(omap, {"nn.functional.elu": "ops"})
    assert coverage.status == {"elu": opmap.TODO, "nn.functional.elu": opmap.COVERED}
    assert coverage.row == {"nn.functional.elu": "nn.functional.elu"}


def test_map_is_opinfos_list_at_the_pinned_torch():
    pytest.importorskip("expecttest", reason="OpInfo needs the dev extra's expecttest")
    import torch

    omap = opmap.load_map()
    if torch.__version__.split("+")[0] != omap.torch:
        pytest.skip(f"the map is of torch {omap.torch}, this is {torch.__version__}")
    assert opmap.against_opinfo(omap) == []
    assert len(omap.entries) == len(database.autograd_entries())


def _write(tmp_path: Path, entries: str, families: str = "torch: 1") -> Path:
    path = tmp_path / "opinfo.yaml"
    path.write_text(f"torch: 2.13.0\ncommit: abc\nfamilies:\n  {families}\nentries:\n"
                    f"{entries}", encoding="utf-8")
    return path


@pytest.mark.parametrize("entries, families, message", [
    ("  add: covered\n", "torch: 1", "covered is derived from reference_engine/registry.py"),
    ("  add: \"out of scope: too hard\"\n", "torch: 1", "unknown category `too hard`"),
    ("  add: todo\n  add: todo\n", "torch: 2", "`add` is listed twice"),
    ("  add: todo\n", "torch: 2", "an entry was lost or added"),
    ("  add: {left out: [\"samples 1: why\"]}\n", "torch: 1", "`sample N[-M]`"),
    ("  add: {left out: [\"sample 3-1: why\"]}\n", "torch: 1", "a range N-M needs N < M"),
    ("  add: {left out: [\"sample 1\"]}\n", "torch: 1", "is not `<part>: <reason>`"),
    ("  add: {left out: []}\n", "torch: 1", "a non-empty list"),
])
def test_malformed_maps_are_refused_with_the_fix(tmp_path, entries, families, message):
    with pytest.raises(opmap.MapError) as raised:
        opmap.load_map(_write(tmp_path, entries, families))
    assert message in str(raised.value)


def test_join_reports_what_does_not_fit(tmp_path):
    omap = opmap.load_map(_write(
        tmp_path, "  add: \"out of scope: private API\"\n"
                  "  cumsum: {left out: [\"sample 0: why\"]}\n", "torch: 2"))
    coverage = opmap.join(omap, {"add": "arith"})
    assert coverage.status == {"add": opmap.COVERED, "cumsum": opmap.TODO}
    assert len(coverage.problems) == 2
    assert "add is marked out of scope" in coverage.problems[0]
    assert "cumsum lists parts left out but no registry row models it" in coverage.problems[1]


def test_left_out_parts_name_samples_ranges_error_inputs_and_keywords(tmp_path):
    omap = opmap.load_map(_write(
        tmp_path, "  add:\n    left out:\n      - \"sample 2-4: a\"\n"
                  "      - \"error input 1: b\"\n      - \"kwarg alpha: c\"\n"))
    rng, error, kwarg = omap.entries[0].left_out
    assert [i for i in range(7) if rng.covers("sample", i)] == [2, 3, 4]
    assert not rng.covers("error input", 3)
    assert [i for i in range(3) if error.covers("error input", i)] == [1]
    assert kwarg.covers("sample", 0, ["alpha"]) and not kwarg.covers("sample", 0, ["beta"])
    assert not kwarg.covers("error input", 0, ["alpha"])
    assert opmap.join(omap, {"add": "arith"}).status["add"] == opmap.PARTLY


def test_readme_shows_the_current_figures_per_family():
    readme = (opmap.ROOT / "README.md").read_text(encoding="utf-8")
    assert opmap.family_table(opmap.current()) in readme, \
        "README.md's OpInfo table is stale: paste opmap.family_table's output"
