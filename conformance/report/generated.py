"""A generated program's failure as the reports show it, like a case item's: the shrunk
program, the first divergent statement and field with both values, the ready YAML case, and a
command that replays the same programs (profile, seed, shard, database) from the directory
the run was started from.

The generated-program suite raises a `GeneratedFailure` carrying these fields; the plugin
turns it into the item's record (records.generated_record) and into a short terminal report
in place of pytest's traceback (pytest's `--tb=long` or `--tb=native` keeps the traceback).
"""

from __future__ import annotations

import shlex
from typing import Any

import pytest
from hypothesis import core, settings

from conformance.gen import campaign
from conformance.gen.program_check import Checked
from conformance.report import records as report
from conformance.run import limits
from conformance.run.compare import Divergence
from conformance.run.engine import DEFAULT_ENGINE
from conformance.run.runner import DIVERGES, ERROR

# What the repro names: the suite's module (a -k keyword that the suite's item alone has,
# whatever the working directory collects beside it).
SUITE_KEYWORD = "generated_suite"


class GeneratedFailure(AssertionError):
    """A generated program that failed: `verdict`, a headline and detail lines (the text),
    and `fields`, what its report record carries beyond a passing one's."""

    verdict = DIVERGES

    def __init__(self, headline: str, details: list[str], fields: dict[str, Any]) -> None:
        self.headline, self.details, self.fields = headline, details, fields
        super().__init__("\n".join([headline, *details]))


def numbered(source: str) -> list[str]:
    return [f"    {n:>4}  {line}" for n, line in enumerate(source.splitlines(), 1)]


def divergence(checked: Checked, engine: str, case: str | None = None,
               saved: str | None = None) -> tuple[str, list[str], dict[str, Any]]:
    """The headline, detail lines and record fields of a divergent generated program
    (`case`: it as a YAML case; `saved`: where --save-divergences wrote that)."""
    d = checked.first  # the behavioural divergence, else the message text (strict)
    assert d is not None
    lines = checked.source.splitlines()

    def record(found: Divergence | None) -> dict[str, Any] | None:
        if found is None:
            return None
        at = lines[found.line - 1].strip() if 0 < found.line <= len(lines) else "?"
        return report.divergence_record(found, found.line, at, checked.torch_trace,
                                        checked.engine_trace)

    statement = lines[d.line - 1].strip() if 0 < d.line <= len(lines) else "?"
    details = [f"  at line {d.line} `{statement}`", f"  {d.describe()}",
               "  program (shrunk, up to the divergent statement):", *numbered(checked.source)]
    # as a case item's record: the behavioural divergence and the first message text apart
    fields: dict[str, Any] = {
        "program": checked.source, "program_first_line": 1,
        "divergence": record(checked.comparison.divergence),
        "message_divergence": record(checked.comparison.message),
    }
    if case is not None:
        details.append("  as a YAML case" + (f" (saved to {saved})" if saved else "") + ":")
        details += [f"    {line}" for line in case.splitlines()]
        fields["case_yaml"] = case
        if saved:
            fields["saved_case"] = saved
    return f"{engine} diverges from torch on a generated program", details, fields


def limit(source: str, statement: int | None, stopped: str) -> tuple[str, list[str],
                                                                     dict[str, Any]]:
    """The same for a generated program stopped by a whole-run limit (an `error`)."""
    at = "" if statement is None else \
        f" at statement {statement} (statements numbered in order)"
    reason = f"a generated program was stopped{at}: {stopped}"
    # not numbered: the statement the limit names is counted in execution-text order,
    # which is not the source line where a block (a Function's methods) spans several
    program = [f"    {line}" for line in source.splitlines()]
    return reason, ["  program:", *program], {"program": source, "program_first_line": 1,
                                              "reason": reason}


def _failure(excinfo: pytest.ExceptionInfo[BaseException] | None
             ) -> tuple[GeneratedFailure | None, int]:
    """The generated program's failure the test ended with, and how many other failures
    hypothesis reported beside it (distinct bugs come as a plain exception group; a flaky
    failure's group is hypothesis' own type, and stays an error)."""
    if excinfo is None:
        return None, 0
    error = excinfo.value
    group = getattr(error, "exceptions", None)  # (Python 3.10: the exceptiongroup backport)
    if type(error).__name__ in ("ExceptionGroup", "BaseExceptionGroup") and \
            isinstance(group, tuple):
        found = [e for e in group if isinstance(e, GeneratedFailure)]
        return (found[0], len(group) - 1) if found else (None, 0)
    return (error, 0) if isinstance(error, GeneratedFailure) else (None, 0)


def repro(config: pytest.Config, profile: str, drawn_seed: int | None,
          saves: bool) -> str:
    """A pytest command that replays what this run found, from the directory it ran in: the
    profile, the engine, and the campaign's shard, database and seed as given. Where the
    run saved its failures to an example database (`saves`: --hypothesis-db, or the random
    profiles' own `.hypothesis/` directory), the failure replays from there first; else a
    seed hypothesis drew itself (a random profile) is given as --hypothesis-seed."""
    engine = str(config.getoption("--engine"))
    args = ["pytest", "--generated-programs", "-k", SUITE_KEYWORD]
    if engine != DEFAULT_ENGINE:
        args += ["--engine", engine]
    args += ["--hypothesis-profile", profile]
    database = config.getoption("--hypothesis-db")
    shard = config.getoption("--shard")
    seed = config.getoption("hypothesis_seed", None)
    if database:
        args += ["--hypothesis-db", campaign.shown(str(database))]
    if seed is None and drawn_seed is not None and not saves:
        seed, shard = drawn_seed, None  # with --shard, the seed would be hashed with K
    if shard:
        args += ["--shard", str(shard)]
    if seed is not None:
        args += ["--hypothesis-seed", str(seed)]
    if config.getoption("--expectations"):
        args += ["--expectations", str(config.getoption("--expectations"))]
    timeout = config.getoption("--item-timeout")
    if timeout != limits.DEFAULT_ITEM_TIMEOUT:
        args += ["--item-timeout", f"{timeout:g}"]
    return shlex.join(args)


def record(item: pytest.Item, call: pytest.CallInfo[None], rep: pytest.TestReport,
           profile: str) -> dict[str, Any]:
    """The generated-program item's record. A failure of a generated program also becomes
    the item's short report: pytest's traceback (the test's source, its fixtures' reprs,
    hypothesis' falsifying example) only with --tb=long or --tb=native."""
    config = item.config
    engine = str(config.getoption("--engine"))
    if not rep.failed:
        return report.generated_record(item.nodeid, engine, rep.outcome)
    failure, others = _failure(call.excinfo)
    if failure is None:  # not a generated program's failure: pytest's own report
        error = call.excinfo.exconly() if call.excinfo is not None else str(rep.longrepr)
        record = report.generated_record(item.nodeid, engine, rep.outcome, str(rep.longrepr),
                                         verdict=ERROR)
        record["reason"] = error[-2000:]
        return record
    # the seed hypothesis drew for this run's draws, when it drew one (random profiles), and
    # whether the failure was saved to an example database (none under --hypothesis-seed)
    test = getattr(item, "obj", None)
    drawn = getattr(test, "_hypothesis_internal_use_generated_seed", None)
    used = getattr(test, "_hypothesis_internal_use_settings", None) or settings()
    saves = used.database is not None and core.global_force_seed is None
    command = repro(config, profile, drawn, saves)
    lines = [f"{item.nodeid}: {failure.headline}", *failure.details]
    if others:
        lines.append(f"  (and {others} other failure{'s' if others > 1 else ''} hypothesis "
                     "found in this run: --tb=long shows them)")
    lines.append(f"  rerun: {command}")
    text = "\n".join(lines)
    if config.getoption("tbstyle", "auto") not in ("long", "native") and \
            not config.getoption("fulltrace", False):
        rep.longrepr = text
    return report.generated_record(item.nodeid, engine, rep.outcome, text,
                                   verdict=failure.verdict, fields=failure.fields,
                                   repro=command)
