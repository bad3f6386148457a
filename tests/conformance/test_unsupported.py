"""The verdict `unsupported`: an engine that lacks an API a case uses is told which, apart
from divergences; an AttributeError the engine's own code raises is not that."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema

from conformance.case.loader import load_case
from conformance.report import explain, status_line
from conformance.report import files as report
from conformance.report import records as report_records
from conformance.report.hit_rates import HitRates
from conformance.run.engine import MissingAPI, lacks, load_engine
from conformance.run.runner import DIVERGES, PASS, UNSUPPORTED, items_of, run_item
from tests.test_html_report import dump_dom, needs_chromium

ENGINE = "tests.conformance.engine_lacks_api"
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "conformance" / "report" / "schema"
                     / "conformance.schema.json").read_text())


def _run(tmp_path: Path, program: str, name: str = "case"):
    path = tmp_path / f"{name}.yaml"
    body = "".join(f"  {line}\n" for line in program.strip().splitlines())
    path.write_text(f"description: d\nfeatures: [ops]\ndevices: [cpu]\nprogram: |\n{body}")
    (item,) = items_of(load_case(path))
    return run_item(item, load_engine(ENGINE))


def test_a_function_the_engine_lacks_is_unsupported_with_its_path(tmp_path):
    result = _run(tmp_path, """
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.amin(a)
""")
    assert (result.verdict, result.missing_api) == (UNSUPPORTED, ["torch.amin"])
    assert "lacks torch.amin" in result.reason


def test_a_namespace_member_and_a_method_the_engine_lacks(tmp_path):
    result = _run(tmp_path, """
a = torch.tensor([1.0, 2.0], requires_grad=True)
g, = torch.autograd.grad(a.sum(), a)
""")
    assert result.missing_api == ["torch.autograd.grad"]
    result = _run(tmp_path, "a = torch.full((2,), 1.0)\nb = a.sum()")
    assert (result.verdict, result.missing_api) == (UNSUPPORTED, ["Tensor.sum"])


def test_a_missing_api_absorbed_by_raises_is_still_unsupported(tmp_path):
    result = _run(tmp_path, """
a = torch.tensor([1.0, 2.0], requires_grad=True)
with raises("python_attribute_error"):
    b = torch.amin(a)
""")
    # torch computes amin, so its run breaks the case's own expectation: case wrong first
    assert result.verdict == "case_disagrees_with_torch"
    result = _run(tmp_path, """
a = torch.tensor([1.0, 2.0], requires_grad=True)
with raises("python_type_error"):
    b = torch.amin(a, "no")
""")
    assert (result.verdict, result.missing_api) == (UNSUPPORTED, ["torch.amin"])


def test_attribute_errors_that_are_not_a_missing_api(tmp_path):
    # the engine's own code raises AttributeError: an error outcome torch does not have
    result = _run(tmp_path, "a = torch.tensor([1.0, 2.0])\nb = torch.sigmoid(a)")
    assert (result.verdict, result.missing_api) == (DIVERGES, [])
    assert result.divergence.field.startswith("outcome")
    # `.zero_()` on a grad that is None: Python's AttributeError, the behaviour under test
    result = _run(tmp_path, """
a = torch.tensor([1.0, 2.0], requires_grad=True)
with raises("python_attribute_error"):
    a.grad.zero_()
""")
    assert (result.verdict, result.missing_api) == (PASS, [])
    # a value divergence stays a divergence
    result = _run(tmp_path, "a = torch.tensor([1.0, 2.0])\nb = torch.exp(a)")
    assert (result.verdict, result.missing_api) == (DIVERGES, [])


def test_lacks_tells_a_missing_name_from_one_whose_code_raised():
    class Thing:
        @property
        def broken(self):
            raise AttributeError("inside the property")

    assert lacks(Thing(), "absent") and not lacks(Thing(), "broken")
    engine = load_engine(ENGINE)
    try:
        engine.resolve("torch.amin")
    except MissingAPI as missing:
        assert missing.path == "torch.amin" and isinstance(missing, AttributeError)
    else:  # pragma: no cover
        raise AssertionError("torch.amin resolved on an engine that lacks it")


def _report(tmp_path: Path) -> Path:
    """A report of four items: two lack torch.amin, one Tensor.sum, one passes."""
    programs = {"amin1": "a = torch.tensor([1.0])\nb = torch.amin(a)",
                "amin2": "a = torch.tensor([2.0])\nb = torch.amin(a)",
                "sum": "a = torch.full((2,), 1.0)\nb = a.sum()",
                "ok": "a = torch.tensor([1.0]) * 2"}
    records = []
    for name, program in programs.items():
        result = _run(tmp_path, program, name)
        outcome = "passed" if result.verdict == PASS else "failed"
        records.append(report_records.item_record(result.item, result, outcome, "longrepr"))
    report.write(tmp_path / "out", records, engine=ENGINE, started=report.now(),
                 profile="ci", generated=HitRates())
    return tmp_path / "out"


def test_report_counts_unsupported_apart_and_lists_the_missing_paths(tmp_path):
    _report(tmp_path)
    data = json.loads((tmp_path / "out" / "conformance.json").read_text())
    jsonschema.validate(data, SCHEMA)
    assert data["missing_api"] == {"torch.amin": 2, "Tensor.sum": 1}
    assert data["status"]["outcome"] == status_line.FAILED
    assert data["status"]["line"].startswith("FAIL: 3 unsupported, 1 pass of 4 collected")
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "| feature | cpu float32 | unsupported |" in summary
    assert "| ops | 1/4 | 3 |" in summary
    assert "| `torch.amin` | 2 |" in summary and "| `Tensor.sum` | 1 |" in summary


@needs_chromium
def test_page_draws_the_unsupported_column_and_the_missing_paths(tmp_path):
    dom = dump_dom(tmp_path, _report(tmp_path) / "index.html")
    row = re.search(r'<tr data-feature="ops">(.*?)</tr>', dom)
    assert row and re.findall(r'<td class="cell[^"]*"[^>]*>([^<]*)</td>', row.group(1)) == [
        "1/4", "3"]
    table = re.search(r'<table id="missing-api">(.*?)</table>', dom, re.S)
    assert table and re.findall(r"<td[^>]*>([^<]*)</td>", table.group(1)) == [
        "torch.amin", "2", "Tensor.sum", "1"]


def test_explain_names_the_missing_api(tmp_path):
    path = tmp_path / "amin.yaml"
    path.write_text("description: d\nfeatures: [ops]\ndevices: [cpu]\nprogram: |\n"
                    "  a = torch.tensor([1.0, 2.0])\n  b = torch.amin(a)\n")
    (item,) = items_of(load_case(path))
    text, result = explain.explain(item, load_engine(ENGINE))
    assert result.verdict == UNSUPPORTED
    assert text.endswith("unsupported: tests.conformance.engine_lacks_api lacks torch.amin, "
                         "which the case uses (add it to the engine)")


def test_an_api_lacking_by_design_is_listed_by_hand_as_unsupported(pytester) -> None:
    # An engine that cannot have an API (a compiled graph's node has no `_saved_self`) lists
    # its items with `status: unsupported` and a reason: known, not a pass; a baseline never
    # writes such an entry, and an entry expecting a divergence does not excuse it.
    import torch  # noqa: F401  (pytester's in-process runs drop the modules they import)

    case = pytester.path / "cases" / "f" / "amin.yaml"
    case.parent.mkdir(parents=True)
    case.write_text("description: d\nfeatures: [ops]\ndevices: [cpu]\ndtypes: [float32]\n"
                    "program: |\n  a = torch.tensor([1.0, 2.0])\n  b = torch.amin(a)\n")
    args = ("cases", "--engine", ENGINE, "--expectations", "known.yaml", "-p", "no:cacheprovider")
    entry = '  - items: "cases/f/amin.yaml::*"\n    reason: amin is not compiled by design\n'
    (pytester.path / "known.yaml").write_text(f"known:\n{entry}")
    pytester.runpytest(*args).assert_outcomes(failed=1)
    (pytester.path / "known.yaml").write_text(f"known:\n{entry}    status: unsupported\n")
    pytester.runpytest(*args, "--conformance-report", "out").assert_outcomes(xfailed=1)
    report = json.loads((pytester.path / "out" / "conformance.json").read_text())
    (item,) = report["items"]
    assert (item["verdict"], item["status"]) == ("known", UNSUPPORTED)
    assert item["reason"].startswith("known unsupported (known.yaml:2): amin is not compiled")
    assert "lacks torch.amin" in item["reason"]
    (pytester.path / "known.yaml").write_text("known: []\n")
    written = pytester.runpytest(*args, "--write-expectations", "known.yaml")
    written.assert_outcomes(failed=1)
    assert (pytester.path / "known.yaml").read_text() == "known: []\n"
    written.stdout.fnmatch_lines(["*list the item by hand with `status: unsupported`*"])
