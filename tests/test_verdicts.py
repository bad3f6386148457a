"""The Verdict enum is the one list of verdicts: the schema, the page and the README agree."""
from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

from conformance.report import html as html_report
from conformance.report import status as run_status
from conformance.run import runner
from conformance.run.verdicts import PASSING, Verdict

ROOT = Path(__file__).resolve().parents[1]
VALUES = [v.value for v in Verdict]


def test_schema_verdict_enum_is_the_verdict_enum() -> None:
    schema = json.loads((resources.files("conformance.report") / "schema" /
                         "conformance.schema.json").read_text(encoding="utf-8"))
    assert schema["$defs"]["verdict"]["enum"] == VALUES


def test_runner_constants_are_the_enum_values() -> None:
    constants = [runner.PASS, runner.DIVERGES, runner.CASE_WRONG, runner.SKIPPED, runner.KNOWN,
                 runner.MASKED, runner.ERROR, runner.UNSUPPORTED]
    assert sorted(constants) == sorted(VALUES)
    assert all(type(c) is str for c in constants)  # plain strings in records, not members


def test_status_line_orders_every_verdict_once() -> None:
    assert sorted(run_status.ORDER) == sorted(VALUES)
    assert set(run_status.FAILING) < set(VALUES)


def test_page_template_passing_list_is_the_python_one() -> None:
    template = (resources.files("conformance.report") / html_report.TEMPLATE).read_text(
        encoding="utf-8")
    found = re.search(r"const PASSING = (\[[^\]]*\]);", template)
    assert found, "the page's PASSING list is gone: update this test with the page"
    assert tuple(json.loads(found.group(1))) == PASSING == html_report.PASSING
    # every verdict the page tests a record against by name is a verdict (`s.verdict` is the
    # filter's state, which also has "failing")
    named = set(re.findall(r"\br\.verdict === \"([a-z_]+)\"", template))
    assert named and named <= set(VALUES)


def test_readme_names_every_verdict() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"verdict: (`[a-z_]+`(?:,\s+`[a-z_]+`)*)", readme)
    assert listed, "README's verdict list is gone: update this test with the README"
    assert re.findall(r"`([a-z_]+)`", listed.group(1)) == VALUES
