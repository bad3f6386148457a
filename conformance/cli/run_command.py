"""`autograd-conformance run`: the suite in worker processes, through pytest and the plugin,
with the report written and one final line (cli/final_line.py)."""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path
from typing import TextIO

from conformance import shared_options
from conformance.case import paths
from conformance.case.vocabulary import parse_devices
from conformance.cli import final_line
from conformance.gen import campaign, profiles

RUN_PROFILE = "default"  # the run command's; plain pytest's is profiles.FALLBACK
# xdist gives up after this many crashed workers; items that crash their worker (a segfault,
# os._exit, a watchdog's kill) are error records, and the run goes on past them
MAX_WORKER_RESTARTS = 1000


def run(args: argparse.Namespace, passthrough: list[str]) -> int:
    import pytest

    # Every option with its value as one `--name=value` argument: pytest takes its rootdir
    # from every existing path among its free arguments, which would make a report
    # directory or a database given as a separate argument one of them. The rootdir is the
    # working directory (what pytest's own messages name paths from); case ids do not
    # depend on it (conformance/case/paths.py).
    pytest_args = [str(p) for p in args.cases] + [
        f"--conformance-report={args.report_dir}",
        f"--hypothesis-profile={args.profile}",
        # always in worker processes, so a crash or a hang ends one item, not the run
        f"--numprocesses={args.workers}", f"--max-worker-restart={MAX_WORKER_RESTARTS}",
        "-p", "no:cacheprovider", "-q", "--continue-on-collection-errors",
        # this command imported hypothesis (for its profiles) before pytest could rewrite it
        "-W", "ignore::pytest.PytestAssertRewriteWarning",
    ]
    if not any(a == "--rootdir" or a.startswith("--rootdir=") for a in passthrough):
        pytest_args.append(f"--rootdir={Path.cwd()}")
    if not args.no_generated:
        pytest_args.append("--generated-programs")
    # the whole suite runs here, as in CI: a stale expectations entry fails the run, and the
    # OpInfo items run (unless --no-opinfo); named so, whatever the project's ini says
    whole = not (args.cases_given or args.no_generated or args.devices or passthrough)
    if whole:
        args.strict_expectations = True
    pytest_args.append("--opinfo" if (whole if args.opinfo is None else args.opinfo)
                       else "--no-opinfo")
    # every sample of every OpInfo item, whatever the project's ini caps them to (this
    # project's pyproject.toml does, for the quick `pytest -n auto`); an argument after `--`
    # may still cap them
    pytest_args.append("--opinfo-samples=0")
    pytest_args += shared_options.to_pytest(args)
    real_stdout = sys.stdout
    # `run | head`: the run goes on and writes its report when the reader leaves
    sys.stdout = _ClosedPipeToDevnull(real_stdout)
    # what this run did with the report directory (never a report another run left there)
    observer = final_line.Observer()
    try:
        code = int(pytest.main(pytest_args + passthrough, plugins=[observer]))
        print(final_line.final_line(args.engine, args.report_dir, observer.outcome(), code))
    finally:
        sys.stdout = real_stdout
    return code


class _ClosedPipeToDevnull(io.TextIOBase):
    """stdout that, once its reader has gone, sends the rest of the output to /dev/null."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def _closed(self) -> None:
        os.dup2(os.open(os.devnull, os.O_WRONLY), self.inner.fileno())

    def write(self, text: str) -> int:
        try:
            return self.inner.write(text)
        except BrokenPipeError:
            self._closed()
            return len(text)

    def flush(self) -> None:
        try:
            self.inner.flush()
        except BrokenPipeError:
            self._closed()

    def fileno(self) -> int:
        return self.inner.fileno()

    def isatty(self) -> bool:
        return self.inner.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.inner.encoding


def prepare(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Resolve and check `run`'s options once, before pytest starts: one usage error each."""
    from conformance.run.engine import load_engine

    args.cases_given = bool(args.cases)
    if not args.cases:
        found = paths.default_cases(Path.cwd())
        if found is None:
            parser.error("no case library here (./cases does not exist): name case files or "
                         "directories, e.g. `autograd-conformance run path/to/cases`")
        args.cases = [found]
    for case in args.cases:
        if not Path(str(case).split("::")[0]).exists():
            parser.error(f"{case}: no such case file or directory")
    workers = str(args.workers)
    if workers == "0":
        print("autograd-conformance: --workers 0: items always run in a worker process (a "
              "crash then ends one item, not the run); using 1 worker", file=sys.stderr)
        workers = "1"
    if workers != "auto" and not (workers.isdigit() and int(workers) >= 1):
        parser.error(f"--workers {args.workers}: a number of worker processes (1 or more) or "
                     "auto")
    args.workers = workers
    source = "--profile" if args.profile else profiles.ENV_VAR
    args.profile = args.profile or os.environ.get(profiles.ENV_VAR) or RUN_PROFILE
    if args.profile not in profiles.PROFILES:
        parser.error(f"unknown hypothesis profile {args.profile!r} (from {source}); choose one "
                     f"of {', '.join(profiles.PROFILES)}")
    try:
        if args.devices is not None:
            parse_devices(args.devices)
        if args.shard is not None:
            campaign.parse_shard(args.shard)
        if args.hypothesis_db is not None:
            campaign.open_database(args.hypothesis_db)
        load_engine(args.engine)
    except ValueError as e:
        parser.error(str(e))


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]
               ) -> argparse.ArgumentParser:
    """`run`'s parser: its own options and those it shares with the plugin (shared_options.py)."""
    run = sub.add_parser("run", help="run the conformance suite in worker processes and "
                         "write the report; pytest's own arguments go after `--`",
                         usage="%(prog)s [CASES...] [options] [-- PYTEST ARGS]")
    run.add_argument("cases", nargs="*", type=Path,
                     help="case files or directories (default: ./cases, else the case "
                          "library of the clone this package runs from)")
    run.add_argument("--report-dir", type=Path, default=Path("reports"),
                     help="where conformance.json and summary.md go (default: %(default)s)")
    run.add_argument("--workers", default="auto",
                     help="worker processes, a number or auto (default); items always run "
                          "in workers, so 0 means 1")
    run.add_argument("--profile", default=None, choices=profiles.PROFILES,
                     help=f"hypothesis profile for generated programs (default: "
                          f"${profiles.ENV_VAR}, else {RUN_PROFILE})")
    run.add_argument("--no-generated", action="store_true",
                     help="run the case library only, no generated programs")
    run.add_argument("--opinfo", action=argparse.BooleanOptionalAction, default=None,
                     help="also run the OpInfo items (each covered entry of PyTorch's OpInfo "
                          "x float32, float64), or not (default: only when the whole suite "
                          "runs: no cases named, no --no-generated, --devices or pytest "
                          "arguments)")
    shared_options.add_to_run(run)
    return run
