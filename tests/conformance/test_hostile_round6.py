"""Round six of hostile and faulty input (issue 20): what a fault looks like in the report.

An engine's 10 MB message went whole into the trace, the terminal and all three report
files (50 MB); a report directory whose name holds a newline or an escape sequence split or
redrew the printed lines that name it.
"""

from __future__ import annotations

import os
import signal
import warnings
from pathlib import Path
from typing import Any, NoReturn

import pytest
import torch

from conformance.case import classify
from conformance.case.diagnostics import CaseError
from conformance.case.loader import load_case
from conformance.cli.final_line import final_line
from conformance.report.directory import ReportOutcome, shown
from conformance.report.files import NotWritten
from conformance.run import compare, expectations
from conformance.run.evaluate import statement_outcome
from conformance.run.runner import DIVERGES, PASS, Item, describe_failure, run_item
from tests.conformance.wrong_engines import patched

CASE = ("description: d\nfeatures: [grad_fn]\ndevices: [cpu]\ndtypes: [float32]\n"
        "program: |\n  a = torch.ones(2, requires_grad=True)\n  b = torch.exp(a)\n")
HUGE = 10_000_000


def item() -> Item:
    return Item(load_case("cases/family/huge.yaml", CASE), "cpu", "float32")


def _raises_huge(tail: str) -> Any:
    def exp(x: Any) -> NoReturn:
        raise RuntimeError("The size of tensor a " + "x" * HUGE + tail)
    return exp


def test_a_huge_engine_message_is_cut_and_says_how_much() -> None:
    result = run_item(item(), patched("huge", exp=_raises_huge("")))
    assert result.verdict == DIVERGES
    assert result.engine_trace is not None and result.engine_trace.failure is not None
    recorded = str(result.engine_trace.failure.outcome.text)
    assert len(recorded) < classify.MESSAGE_LIMIT + 100, len(recorded)
    cut = HUGE + len("The size of tensor a ") - classify.MESSAGE_LIMIT
    assert f"... <{cut:,} more characters cut; sha256 of the whole message " in recorded
    assert len(describe_failure(result)) < 3 * compare.SHOWN_LIMIT


def test_messages_that_differ_only_after_the_cut_still_differ() -> None:
    one = classify.bounded(classify.text_of(RuntimeError("m" * HUGE + "a")))
    other = classify.bounded(classify.text_of(RuntimeError("m" * HUGE + "b")))
    assert one != other and len(one) == len(other) < classify.MESSAGE_LIMIT + 100
    assert classify.bounded(classify.text_of(RuntimeError("m" * classify.MESSAGE_LIMIT))) == \
        "m" * classify.MESSAGE_LIMIT


@pytest.mark.parametrize("name", ["rep\nort", "rep\x1b[31mort", "rep\rort", "rep\u2028ort"])
def test_a_report_directory_name_with_control_characters_is_shown_on_one_line(
        name: str) -> None:
    directory = Path("/tmp") / name
    assert "\n" not in shown(directory) and "\x1b" not in shown(directory)
    assert shown(directory).isprintable() and name.encode("unicode_escape").decode() \
        .replace("\\x1b", "\\u001b") in shown(directory)
    written = ReportOutcome(written=True, status="PASS: 1 pass of 1 collected; 1 executed")
    for line in (final_line("e", directory, written, 0), final_line("e", directory, None, 4),
                 str(NotWritten(directory, OSError(28, "No space left on device"),
                                {}, "PASS"))):
        assert line.isprintable(), line
    assert shown(Path("/tmp/plain dir")) == "/tmp/plain dir"


class _Proxy:
    """What an engine might return: an object every attribute lookup of which raises."""

    def __getattr__(self, name: str) -> NoReturn:
        raise RuntimeError(f"getattr {name}!")

    def __eq__(self, other: object) -> NoReturn:
        raise RuntimeError("eq!")

    def __bool__(self) -> NoReturn:
        raise RuntimeError("bool!")

    __hash__ = None  # type: ignore[assignment]


def test_an_engine_object_whose_attribute_lookup_raises_is_observed_not_a_crash() -> None:
    # before: the observer's hasattr(value, "next_functions") raised out of the harness
    result = run_item(item(), patched("proxy", exp=lambda x: _Proxy()))
    assert result.verdict == DIVERGES
    d = result.divergence
    assert d is not None and d.field == "b.kind" and d.actual == "opaque"


def _alarms_itself(x: Any) -> Any:
    os.kill(os.getpid(), signal.SIGALRM)
    return torch.exp(x)


def test_an_engines_own_sigalrm_is_not_the_item_timing_out() -> None:
    # before: "ran longer than the time limit of 60 s" for an item that ran for a moment
    result = run_item(item(), patched("alarm", exp=_alarms_itself), item_timeout=60.0)
    assert result.verdict == PASS and not result.timed_out, result.reason


def _warns_a_lot(x: Any) -> Any:
    for i in range(20_000):
        warnings.warn(f"warning {i}", stacklevel=2)
    return torch.exp(x)


def test_a_flood_of_warnings_is_shown_cut() -> None:
    result = run_item(item(), patched("warner", exp=_warns_a_lot))
    assert result.verdict == DIVERGES
    report = describe_failure(result)
    assert len(report) < 3 * compare.SHOWN_LIMIT and "more characters cut>" in report


@pytest.mark.parametrize("reason", ['"line\\u001b[31m red"', '"hidden\\rshown"'])
def test_an_expectations_reason_with_control_characters_is_refused_at_its_line(
        tmp_path: Path, reason: str) -> None:
    # before: the escape sequence went raw into the terminal's XFAIL line and summary.md
    path = tmp_path / "known.yaml"
    path.write_text(f'known:\n  - items: "cases/b.yaml::*"\n    reason: {reason}\n')
    with pytest.raises(CaseError, match="the `reason` holds a control character") as e:
        expectations.load(path)
    assert e.value.line == 3
    path.write_text('known:\n  - items: "cases/b.yaml::*"\n    reason: |\n      two\n'
                    '      lines\n')
    assert expectations.load(path).known[0].reason == "two\nlines\n"


def test_a_long_torch_message_is_classified_whole_before_it_is_cut() -> None:
    # checkpoint(debug=True)'s error holds the operator logs of both runs before the line that
    # names its kind; under compiled autograd they pass MESSAGE_LIMIT (CI of stop 45: the
    # kind was read from the cut text and the case failed as `unknown`).
    logs = "aten::mul.Tensor\n  File \"x.py\", line 1, in f\n" * 1000
    text = ("An error happened while unpacking tensors; dumping logs of latest computation\n"
            "|  1. Stack traces of the operators that ran in the original forward     |\n"
            f"{logs}\n+-------+\n ERROR: Detected non-determinism while running activation "
            "checkpointing\n\nYou are seeing this error because you passed `debug=True` to "
            "checkpoint and the recomputed values differ")
    assert len(text) > classify.MESSAGE_LIMIT
    outcome = statement_outcome(RuntimeError(text))
    assert outcome.kind == "checkpoint_debug_nondeterminism", outcome.kind
    assert len(str(outcome.text)) <= classify.MESSAGE_LIMIT
