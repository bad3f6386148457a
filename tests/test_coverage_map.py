"""The coverage maps (test_autograd.py, test_functional.py, test_complex.py): well formed,
consistent with the case library, and their generated tables up to date."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.report import coverage_map as cm

CASE = """description: d
features: [leaf]
source: {source}
program: |
  a = torch.ones(1)
"""


@pytest.fixture(scope="module")
def cmap() -> cm.CoverageMap:
    return cm.load_map()


@pytest.fixture(scope="module")
def cited() -> cm.Cited:
    return cm.case_sources()


MAPS = cm.map_paths()


def test_there_is_a_map_per_test_file() -> None:
    assert [p.name for p in MAPS] == ["test_autograd.yaml", "test_complex.yaml",
                                      "test_functional.yaml"]


@pytest.mark.parametrize("path", MAPS, ids=[p.stem for p in MAPS])
def test_every_case_source_names_one_test_and_no_covered_test_is_out_of_scope(path, cited):
    assert cm.join(cm.load_map(path), cited).problems == []


def test_every_cited_test_file_has_a_map(cited):
    assert cm.unmapped_sources(cited, [cm.load_map(p) for p in MAPS]) == []


@pytest.mark.parametrize("path", MAPS, ids=[p.stem for p in MAPS])
def test_committed_table_is_up_to_date(path, cited):
    cmap = cm.load_map(path)
    assert cm.table_path(path).read_text(encoding="utf-8") == cm.render(
        cmap, cm.join(cmap, cited)), (
        f"{cm.table_path(path)} is stale: run python -m conformance.report.coverage_map")


def test_map_lists_each_function_once_with_a_status(cmap):
    keys = [e.key for e in cmap.entries]
    assert len(keys) == len(set(keys)) == sum(cmap.classes.values()) == 517
    assert {e.status for e in cmap.entries} == {cm.TODO, cm.OUT_OF_SCOPE}
    assert all(e.reason for e in cmap.entries if e.status == cm.OUT_OF_SCOPE)
    assert not any(e.left_out for e in cmap.entries if e.status == cm.OUT_OF_SCOPE)
    # spot checks of the file at the map's commit: first and last test, a repeated name
    assert keys[0] == "TestAutograd.test_copy_slices_graph_task_updates"
    assert keys[-1] == "TestAutogradMultipleDispatch.test_trace_backward_nonsquare_171704"
    assert cmap.resolve("test_version_counter") == [
        "TestAutograd.test_version_counter",
        "TestSelectiveActivationCheckpoint.test_version_counter",
    ]


def test_the_complex_map_lists_each_function_of_its_file_once():
    xmap = cm.load_map(cm.MAPS_DIR / "test_complex.yaml")
    keys = [e.key for e in xmap.entries]
    assert xmap.source_prefix == "test_complex.py"
    assert keys == ["TestAutogradComplex.test_view_func_for_complex_views",
                    "TestAutogradComplex.test_view_with_multi_output"]
    assert sum(xmap.classes.values()) == 2


def test_the_functional_map_lists_each_function_of_its_file_once():
    fmap = cm.load_map(cm.MAPS_DIR / "test_functional.yaml")
    keys = [e.key for e in fmap.entries]
    assert fmap.source_prefix == "test_functional.py"
    assert len(keys) == len(set(keys)) == sum(fmap.classes.values()) == 54
    # spot checks of the file at the map's commit: first and last test, a repeated name
    assert keys[0] == "TestAutogradFunctional.test_vjp_err_check"
    assert keys[-1] == ("TestAutogradFunctionalDeviceType."
                        "test_jacobian_vectorize_correctness_different_devices")
    assert len(fmap.resolve("test_construct_standard_basis_for")) == 2
    assert "LoggingTensor" in fmap.note


def _write_map(tmp_path: Path, tests: str, classes: str = "TestA: 2",
               path: str = "test/test_autograd.py") -> Path:
    file = tmp_path / "map.yaml"
    file.write_text(f"path: {path}\ncommit: abc\nclasses:\n  {classes}\ntests:\n{tests}",
                    encoding="utf-8")
    return file


def test_a_map_names_its_test_file(tmp_path):
    file = tmp_path / "map.yaml"
    file.write_text("commit: abc\nclasses:\n  TestA: 1\ntests:\n  TestA.test_x: todo\n",
                    encoding="utf-8")
    with pytest.raises(cm.MapError, match="needs `path`"):
        cm.load_map(file)
    with pytest.raises(cm.MapError, match="is not a PyTorch test file"):
        cm.load_map(_write_map(tmp_path, "  TestA.test_x: todo\n", "TestA: 1", "README.md"))


def test_cases_count_for_the_map_of_the_file_they_cite(tmp_path):
    amap = cm.load_map(_write_map(tmp_path, "  TestA.test_x: todo\n", "TestA: 1"))
    (tmp_path / "f").mkdir()
    fmap = cm.load_map(_write_map(tmp_path / "f", "  TestA.test_x: todo\n", "TestA: 1",
                                  "test/autograd/test_functional.py"))
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "f.yaml").write_text(CASE.format(source="test_functional.py test_x"),
                                  encoding="utf-8")
    (cases / "typo.yaml").write_text(CASE.format(source="test_functonal.py test_x"),
                                     encoding="utf-8")
    cited = cm.case_sources(cases)
    assert cm.join(amap, cited).status == {"TestA.test_x": cm.TODO}
    assert cm.join(fmap, cited).status == {"TestA.test_x": cm.COVERED}
    assert cm.unmapped_sources(cited, [amap, fmap]) == [
        "cases/typo.yaml: `source: test_functonal.py ...` names a test file with no coverage "
        "map in docs/coverage/ (maps: test_autograd.py, test_functional.py)"]
    assert cm.render(fmap, cm.join(fmap, cited)).startswith(
        "# Coverage of PyTorch's test_functional.py\n\nGenerated by `python -m "
        "conformance.report.coverage_map` from test_functional.yaml")


@pytest.mark.parametrize(("tests", "classes", "message"), [
    ("  TestA.test_x: todo\n  TestA.test_x: todo\n", "TestA: 2", "listed twice"),
    ("  TestA.test_x: todo\n", "TestA: 2", "a test line was lost or added"),
    ("  TestA.test_x: todo\n  TestA.test_y: covered\n", "TestA: 2", "covered is derived"),
    ("  TestA.test_x: todo\n  TestA.test_y: \"out of scope: vibes\"\n", "TestA: 2",
     "unknown category `vibes`"),
    ("  TestA.test_x: todo\n  test_y: todo\n", "TestA: 2", "write `Class.test_name`"),
    ("  TestA.test_x: todo\n  TestA.test_y: {left out: []}\n", "TestA: 2", "a non-empty list"),
    ("  TestA.test_x: todo\n  TestA.test_y: {left out: \"del x: no del\"}\n", "TestA: 2",
     "a non-empty list"),
    ("  TestA.test_x: todo\n  TestA.test_y: {left out: [\"a: b\"], why: c}\n", "TestA: 2",
     "a non-empty list"),
    ("  TestA.test_x: todo\n  TestA.test_y: {left out: [\"del x.grad\"]}\n", "TestA: 2",
     "is not `<assertion>: <reason>`"),
    ("  TestA.test_x: todo\n  TestA.test_y: {left out: [\"del x.grad: \"]}\n", "TestA: 2",
     "is not `<assertion>: <reason>`"),
    ("  TestA.test_x: todo\n  TestA.test_y: {left out: [3]}\n", "TestA: 2",
     "is not `<assertion>: <reason>`"),
    ("  TestA.test_x: todo\n  TestA.test_y: {left out: [\"a: b\", \"a: b\"]}\n", "TestA: 2",
     "listed twice"),
    ("  TestA.test_x: todo\n  TestA.test_y: \"todo:  \"\n", "TestA: 2", "gives no reason"),
    ("  TestA.test_x: todo\n  TestA.test_y: \"done: yes\"\n", "TestA: 2", "is not a status"),
])
def test_malformed_maps_are_refused_with_the_fix(tmp_path, tests, classes, message):
    with pytest.raises(cm.MapError, match=message):
        cm.load_map(_write_map(tmp_path, tests, classes))


def test_join_derives_covered_and_reports_what_does_not_fit(tmp_path):
    cmap = cm.load_map(_write_map(tmp_path, (
        "  TestA.test_x: todo\n  TestA.test_y: \"out of scope: profiler\"\n"
        "  TestB.test_x: todo\n  TestB.test_z: todo\n"), "TestA: 2\n  TestB: 2"))
    cases = tmp_path / "cases"
    cases.mkdir()
    for name, source in [("z", "test_autograd.py test_z"), ("bx", "test_autograd.py TestB.test_x"),
                         ("y", "test_autograd.py test_y"), ("x", "test_autograd.py test_x"),
                         ("w", "test_autograd.py test_nowhere"),
                         ("doc", "https://pytorch.org/docs/stable/autograd.html")]:
        (cases / f"{name}.yaml").write_text(CASE.format(source=source), encoding="utf-8")
    # a file that fails to load is no case and covers nothing
    (cases / "broken.yaml").write_text(CASE.format(source="test_autograd.py test_z")
                                       .replace("program", "programme"), encoding="utf-8")
    coverage = cm.join(cmap, cm.case_sources(cases))
    # a cited test counts as covered even if marked out of scope; that mark is a problem
    assert coverage.status == {"TestA.test_x": cm.TODO, "TestA.test_y": cm.COVERED,
                               "TestB.test_x": cm.COVERED, "TestB.test_z": cm.COVERED}
    assert coverage.cases["TestB.test_z"] == ["cases/z.yaml"]
    problems = "\n".join(coverage.problems)
    assert "cases/x.yaml: `test_x` is ambiguous" in problems
    assert "cases/w.yaml: `source: test_autograd.py test_nowhere` names no test" in problems
    assert "TestA.test_y is marked out of scope (profiler) but cases/y.yaml cover it" in problems
    assert len(coverage.problems) == 3
    table = cm.render(cmap, coverage)
    assert "**Covered / in scope: 3 / 4 (75.0 %)**; partly covered: 0, todo: 1" in table
    assert "| `TestB.test_z` | covered | [cases/z.yaml](../../cases/z.yaml) |  |" in table


def test_left_out_assertions_make_a_test_partly_covered_and_are_refused_without_cases(tmp_path):
    cmap = cm.load_map(_write_map(tmp_path, (
        "  TestA.test_full: todo\n"
        "  TestA.test_part:\n    left out:\n      - \"del x.grad: the case language has no del\"\n"
        "      - \"x._is_view(): internal API\"\n"
        "  TestA.test_none: todo\n"
        "  TestA.test_orphan: {left out: [\"a | b: needs forward-mode AD\"]}\n"
        "  TestA.test_out: \"out of scope: profiler\"\n"), "TestA: 5"))
    assert cmap.entries[1].left_out == ("del x.grad: the case language has no del",
                                        "x._is_view(): internal API")
    cases = tmp_path / "cases"
    cases.mkdir()
    for name in ("full", "part"):
        (cases / f"{name}.yaml").write_text(CASE.format(source=f"test_autograd.py test_{name}"),
                                            encoding="utf-8")
    coverage = cm.join(cmap, cm.case_sources(cases))
    assert coverage.status == {"TestA.test_full": cm.COVERED, "TestA.test_part": cm.PARTLY,
                               "TestA.test_none": cm.TODO, "TestA.test_orphan": cm.TODO,
                               "TestA.test_out": cm.OUT_OF_SCOPE}
    # a left-out list on a test no case cites is refused: that test is todo
    assert coverage.problems == [
        "TestA.test_orphan lists assertions left out but no case cites it: it is `todo`; "
        "write `todo`, or add the cases that state the rest"]
    assert (coverage.count(cm.COVERED), coverage.count(cm.PARTLY), coverage.count(cm.TODO),
            coverage.in_scope) == (1, 1, 2, 4)
    table = cm.render(cmap, coverage)
    # the figure counts exact coverage only; partly covered is shown beside it
    assert "**Covered / in scope: 1 / 4 (25.0 %)**; partly covered: 1, todo: 2" in table
    assert "| covered | 1 |\n| partly covered | 1 |\n| todo | 2 |\n| out of scope | 1 |" in table
    assert ("| `TestA.test_part` | partly covered | [cases/part.yaml](../../cases/part.yaml) | "
            "del x.grad: the case language has no del<br>x._is_view(): internal API |") in table
    assert "| `TestA.test_orphan` | todo |  | a \\| b: needs forward-mode AD |" in table
    assert "| `TestA.test_out` | out of scope |  | profiler |" in table


def test_a_todo_may_say_why_and_is_refused_once_cases_cite_it(tmp_path):
    cmap = cm.load_map(_write_map(tmp_path, (
        "  TestA.test_hard: \"todo: needs an iterative solver | not modelled\"\n"
        "  TestA.test_done: \"todo: needs a C++ op\"\n"), "TestA: 2"))
    assert [(e.status, e.reason) for e in cmap.entries] == [
        (cm.TODO, "needs an iterative solver | not modelled"), (cm.TODO, "needs a C++ op")]
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "done.yaml").write_text(CASE.format(source="test_autograd.py test_done"),
                                     encoding="utf-8")
    coverage = cm.join(cmap, cm.case_sources(cases))
    # still counted todo (in scope, not covered); the reason is shown in the table
    assert coverage.status == {"TestA.test_hard": cm.TODO, "TestA.test_done": cm.COVERED}
    table = cm.render(cmap, coverage)
    assert "| `TestA.test_hard` | todo |  | needs an iterative solver \\| not modelled |" in table
    # a reason for not covering a test that cases cite is stale
    assert coverage.problems == [
        "TestA.test_done says why it is todo but cases/done.yaml cite it: write `todo`, "
        "listing under `left out` what the cases do not state"]


def test_functions_of_lists_test_methods_of_test_classes_in_order():
    source = (
        "class TestA(TestCase):\n"
        "    def test_b(self):\n        def test_inner(): pass\n"
        "    def helper(self): pass\n"
        "    def test_a(self): pass\n"
        "def test_module_level(): pass\n"
        "class Helper:\n    def test_not_a_test_class(self): pass\n"
        "class TestC:\n    async def test_c(self): pass\n"
    )
    assert cm.functions_of(source) == ["TestA.test_b", "TestA.test_a", "TestC.test_c"]


def test_subsets_get_their_own_figures_and_name_only_tests_of_the_map(tmp_path):
    tests = ("  TestA.test_x: todo\n  TestA.test_y: \"out of scope: profiler\"\n"
             "  TestA.test_z: todo\n")
    file = _write_map(tmp_path, tests, "TestA: 3")
    file.write_text(file.read_text(encoding="utf-8")
                    + "subsets:\n  fw: [TestA.test_x, TestA.test_y]\n", encoding="utf-8")
    cmap = cm.load_map(file)
    assert cmap.subsets == {"fw": ("TestA.test_x", "TestA.test_y")}
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "x.yaml").write_text(CASE.format(source="test_autograd.py test_x"),
                                  encoding="utf-8")
    table = cm.render(cmap, cm.join(cmap, cm.case_sources(cases)))
    assert "| fw | 2 | 1 | 0 | 0 | 1 | 1 / 1 (100.0 %) |" in table
    for bad, message in (("  fw: [TestA.test_w]\n", "not a test of the map"),
                         ("  fw: [TestA.test_x, TestA.test_x]\n", "lists a test twice"),
                         ("  fw: TestA.test_x\n", "must list tests")):
        file.write_text(file.read_text(encoding="utf-8").split("subsets:")[0]
                        + "subsets:\n" + bad, encoding="utf-8")
        with pytest.raises(cm.MapError, match=message):
            cm.load_map(file)
