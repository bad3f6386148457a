"""`autograd-conformance`: run the suite and write the report, or check case files."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from conformance import generated_suite, profiles
from conformance.diagnostics import CaseError
from conformance.engines import DEFAULT_ENGINE
from conformance.loader import load_case


def _run(args: argparse.Namespace, extra: list[str]) -> int:
    import pytest

    suite = [] if args.no_generated else [str(Path(generated_suite.__file__))]
    pytest_args = [str(p) for p in args.cases] + suite + [
        "--engine", args.engine, "--conformance-report", str(args.report_dir),
        "--hypothesis-profile", args.profile,
        "-p", "no:cacheprovider", "-q", "--continue-on-collection-errors",
        # this command imported hypothesis (for its profiles) before pytest could rewrite it
        "-W", "ignore::pytest.PytestAssertRewriteWarning",
    ]
    if args.save_divergences:
        pytest_args += ["--save-divergences", str(args.save_divergences)]
    if args.workers != "0":
        pytest_args += ["-n", args.workers]
    if args.lenient_messages:
        pytest_args.append("--lenient-messages")
    return int(pytest.main(pytest_args + extra))


def _check(args: argparse.Namespace) -> int:
    files: list[Path] = []
    for p in args.files:
        path = Path(p)
        files += sorted(path.rglob("*.yaml")) if path.is_dir() else [path]
    bad = 0
    for f in files:
        try:
            load_case(f)
        except CaseError as e:
            bad += 1
            print(e, file=sys.stderr)
    print(f"{len(files) - bad} of {len(files)} case files are valid")
    return 1 if bad else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograd-conformance", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the conformance suite and write the report; "
                         "arguments after the options are passed to pytest")
    run.add_argument("cases", nargs="*", type=Path, default=[Path("cases")],
                     help="case files or directories (default: cases)")
    run.add_argument("--engine", default=DEFAULT_ENGINE,
                     help="importable module of the engine under test (default: %(default)s)")
    run.add_argument("--report-dir", type=Path, default=Path("reports"),
                     help="where conformance.json and summary.md go (default: %(default)s)")
    run.add_argument("--workers", default="auto",
                     help="pytest-xdist workers, a number or auto; 0 runs in-process")
    run.add_argument("--profile", default="default", choices=profiles.PROFILES,
                     help="hypothesis profile for generated programs (default: %(default)s)")
    run.add_argument("--no-generated", action="store_true",
                     help="run the case library only, no generated programs")
    run.add_argument("--save-divergences", type=Path, default=None, metavar="DIR",
                     help="write shrunk divergences of generated programs to DIR as cases")
    run.add_argument("--lenient-messages", action="store_true",
                     help="do not fail items whose only difference is an exact message text")
    check = sub.add_parser("check", help="validate case files without running them")
    check.add_argument("files", nargs="+", help="case files or directories")
    args, extra = parser.parse_known_args(argv)
    if args.command == "run":
        return _run(args, extra)
    if extra:
        parser.error(f"unrecognised arguments: {' '.join(extra)}")
    return _check(args)


if __name__ == "__main__":
    sys.exit(main())
