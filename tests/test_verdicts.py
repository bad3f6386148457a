"""The Verdict enum is the one list of verdicts: the schema, the page and the README agree."""
from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from conformance.report import html as html_report
from conformance.report import schema_enums, status_line
from conformance.run import expectations, runner, verdicts
from conformance.run.verdicts import PASSING, Verdict

ROOT = Path(__file__).resolve().parents[1]
VALUES = [v.value for v in Verdict]


def _schema() -> dict[str, Any]:
    return json.loads((resources.files("conformance.report") / "schema" /
                       "conformance.schema.json").read_text(encoding="utf-8"))


def test_schema_verdict_enum_is_the_verdict_enum() -> None:
    assert _schema()["$defs"]["verdict"]["enum"] == VALUES
    statuses = _schema()["$defs"]["item"]["properties"]["status"]["enum"]
    assert statuses == list(verdicts.ITEM_STATUSES)
    assert set(statuses) == set(VALUES) - {"known"} | {"timeout"}


def test_schema_enums_are_written_from_the_verdicts(capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    # the published file is current: `python -m conformance.report.schema_enums` wrote it
    assert schema_enums.main(["--check"]) == 0, capsys.readouterr().out
    # and the check can fail: a schema whose list lacks a verdict is rewritten with it
    text = schema_enums.SCHEMA.read_text(encoding="utf-8")
    stale = text.replace('"known", ', "", 1)
    assert stale != text and schema_enums.rewrite(stale) == text


def test_verdict_constants_are_the_enum_values() -> None:
    for v in Verdict:  # plain strings in records, not members
        assert getattr(verdicts, v.name) == v.value and type(getattr(verdicts, v.name)) is str
    assert [runner.PASS, runner.KNOWN, runner.MASKED] == ["pass", "known", "masked"]


def test_status_line_orders_every_verdict_once() -> None:
    assert sorted(v.rank for v in Verdict) == list(range(len(Verdict)))
    assert sorted(status_line.ORDER) == sorted(VALUES)
    assert status_line.ORDER[0] == Verdict.DIVERGES.value  # what needs attention first


def test_what_a_verdict_means_is_its_own() -> None:
    # the status line and the page read these from the verdicts, never from a list of theirs
    assert {"diverges", "case_disagrees_with_torch", "error", "unsupported"} <= \
        set(status_line.FAILING)
    assert not {"known", "masked", "pass", "skipped"} & set(status_line.FAILING)
    assert PASSING == html_report.PASSING
    assert {"pass", "skipped"} <= set(PASSING)
    assert not {"known", "masked", "diverges", "error"} & set(PASSING)
    assert {v.outcome for v in Verdict} == {"passed", "skipped", "xfailed", "failed"}
    assert not any(v.failing and v.passing for v in Verdict)
    # what an entry expecting a failure, or an OpInfo map line, calls "passes now"
    assert verdicts.AGREEING == ("pass", "masked")
    assert not any(v.agrees and v.failing for v in Verdict)


def test_page_reads_the_passing_verdicts_from_its_data() -> None:
    template = (resources.files("conformance.report") / html_report.TEMPLATE).read_text(
        encoding="utf-8")
    assert "const PASSING = DATA.passing;" in template
    assert not re.search(r"const PASSING = \[", template)  # no list of its own
    page = html_report.render({"run_info": {}, "items": []})
    data = re.search(r'id="report-data">(.*?)</script>', page, re.S)
    assert data, "the page's data element is gone: update this test with the page"
    assert tuple(json.loads(data.group(1))["passing"]) == PASSING
    # every verdict the page tests a record against by name is a verdict (`s.verdict` is the
    # filter's state, which also has "failing")
    named = set(re.findall(r"\br\.verdict === \"([a-z_]+)\"", template))
    assert named and named <= set(VALUES)


def test_readme_names_every_verdict() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.search(r"verdict: (`[a-z_]+`(?:,\s+`[a-z_]+`)*)", readme)
    assert listed, "README's verdict list is gone: update this test with the README"
    assert re.findall(r"`([a-z_]+)`", listed.group(1)) == VALUES


def test_what_an_entry_may_do_with_a_verdict_is_its_own() -> None:
    # the statuses an entry may expect and a baseline writes are read from the verdicts
    assert expectations.STATUSES == ("pass", "diverges", "error", "timeout", "unsupported")
    assert verdicts.EXCUSABLE == ("diverges", "error", "timeout")
    assert all(v.expectable for v in Verdict if v.baselined)
    assert not Verdict.KNOWN.expectable and not Verdict.UNSUPPORTED.baselined
