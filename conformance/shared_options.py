"""The options of a conformance run, declared once: the pytest plugin adds them to pytest and
`autograd-conformance run` to its parser, passing each one given on to pytest under the same
name. Options of one side only stay with it: the plugin's `--conformance-report` and
`--generated-programs` (which `run` sets from `--report-dir` and `--no-generated`), `run`'s
`--workers`, `--profile` and the rest of its parser. `--opinfo` is declared on each side, by
design: its default differs (pytest's is the ini option conformance_opinfo; run's, whether the
whole suite runs), and `run` passes pytest `--opinfo` or `--no-opinfo` explicitly."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformance.run.engine import DEFAULT_ENGINE
from conformance.run.limits import DEFAULT_ITEM_TIMEOUT


@dataclass(frozen=True)
class Option:
    name: str  # "--engine"
    help: str
    default: Any = None
    flag: bool = False  # present or absent (store_true)
    metavar: str | None = None
    type: Callable[[str], Any] | None = None
    run_help: str = ""  # what `run --help` adds: how `run` differs from plain pytest

    @property
    def dest(self) -> str:
        return self.name.removeprefix("--").replace("-", "_")

    def add_to(self, parser: argparse.ArgumentParser, more_help: str = "") -> None:
        """This option, to a command's parser (`run`'s, or another command that takes it)."""
        parser.add_argument(self.name, help=self.help + more_help, **self._kwargs())

    def _kwargs(self) -> dict[str, Any]:
        if self.flag:
            return {"action": "store_true"}
        kwargs: dict[str, Any] = {"default": self.default, "metavar": self.metavar}
        if self.type is not None:
            kwargs["type"] = self.type
        return kwargs


# the engine under test: also `explain`'s (cli/__init__.py), declared here once
ENGINE = Option("--engine", f"importable module of the engine under test (default: "
                f"{DEFAULT_ENGINE})", default=DEFAULT_ENGINE)
OPTIONS = (
    ENGINE,
    Option("--lenient-messages", "pass items whose only difference from torch is an exact "
           "error/warning text (kinds must still agree)", flag=True),
    Option("--expectations", "known divergences of the engine under test (default: "
           "expectations/<engine>.yaml when it exists)", metavar="FILE"),
    Option("--strict-expectations", "fail the run when an expectations entry is stale: it "
           "applies to items that ran and none of them needed it", flag=True,
           run_help=" (the default of `run` when the whole suite runs: no cases named, no "
                    "--no-generated, --devices or pytest arguments)"),
    Option("--save-divergences", "write each shrunk divergence of a generated program to DIR "
           "as a ready YAML case", metavar="DIR"),
    Option("--devices", "run only items on these devices, comma-separated (e.g. cpu); the "
           "others are deselected", metavar="LIST"),
    Option("--write-expectations", "merge this run into the expectations file FILE (created "
           "if absent): entries still needed are kept as written, new failures added, stale "
           "entries listed", metavar="FILE"),
    Option("--prune-expectations", "with --write-expectations: also remove the stale entries",
           flag=True),
    Option("--hit-rates", "print the generated programs' hit-rate table at the end (by "
           "default one line; the report's summary.md has the table)", flag=True),
    Option("--hypothesis-db", "hypothesis' example database, shared by the machines of a "
           "campaign: a directory, or redis://host:port/N (needs the `redis` extra); failures "
           "saved there replay first, under every profile", metavar="PATH|URL"),
    Option("--shard", "this machine is shard K of N: generated programs draw from a seed of "
           "their own per shard (with --hypothesis-seed S: of S and K; see README, Scaling "
           "out)", metavar="K/N"),
    Option("--item-timeout", "wall-clock limit of one case item, of one generated program, "
           "or of each sample of an OpInfo item (both engines' runs); an item over it is an "
           "error naming the line running "
           f"(default: {DEFAULT_ITEM_TIMEOUT:g}; 0: none)", default=DEFAULT_ITEM_TIMEOUT,
           metavar="SECONDS", type=float),
)


def add_to_pytest(group: Any) -> None:
    """Each option, to the plugin's option group (a pytest OptionGroup)."""
    for option in OPTIONS:
        group.addoption(option.name, help=option.help, **option._kwargs())


def add_to_run(parser: argparse.ArgumentParser) -> None:
    """Each option, to `run`'s parser."""
    for option in OPTIONS:
        option.add_to(parser, option.run_help)


def to_pytest(args: argparse.Namespace) -> list[str]:
    """`run`'s options as pytest arguments, each one `--name=value` (pytest takes its rootdir
    from the existing paths among its free arguments, which a separate value could be)."""
    given = []
    for option in OPTIONS:
        value = getattr(args, option.dest)
        if option.flag and value:
            given.append(option.name)
        elif not option.flag and value not in (None, ""):
            given.append(f"{option.name}={value}")
    return given
