"""`autograd-conformance`: run the suite and write the report, check case files, start a new
case, explain one item side by side, record traces and diff recordings (drift)."""

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
    if args.expectations:
        pytest_args += ["--expectations", str(args.expectations)]
    # the whole suite runs here, so an entry that matches nothing is stale
    if not args.cases_given and not args.no_generated:
        pytest_args.append("--strict-expectations")
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


def _new(args: argparse.Namespace) -> int:
    from conformance import newcase

    path = Path(args.path)
    if path.exists():
        print(f"{path} exists; refusing to overwrite it", file=sys.stderr)
        return 1
    program = sys.stdin.read() if args.from_stdin else None
    features = tuple(f.strip() for f in args.features.split(",") if f.strip())
    dtypes = tuple(d.strip() for d in args.dtypes.split(",") if d.strip())
    try:
        case = newcase.build(program, description=args.description, features=features,
                             dtypes=dtypes, source=args.source)
    except CaseError as e:
        print(e.at("<stdin>", 0) if args.from_stdin else e, file=sys.stderr)
        return 1
    try:
        newcase.write(path, case)
    except FileExistsError:
        print(f"{path} exists; refusing to overwrite it", file=sys.stderr)
        return 1
    if case.torch_failure is not None:
        print(f"{path}:{case.failure_line}: {case.torch_failure} (noted in the file)",
              file=sys.stderr)
    print(f"wrote {path}; next: edit it, then `autograd-conformance check {path}` and "
          f"`pytest {path}`")
    return 0


def _importable_here() -> None:
    # Engines are named by module path; as with `python -m` and pytest's rootdir, modules
    # under the working directory (e.g. tests.conformance.engine_wrong_exp) are importable.
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))


def _explain(args: argparse.Namespace) -> int:
    from conformance import explain
    from conformance.engines import load_engine
    from conformance.runner import DIVERGES, PASS

    _importable_here()
    try:
        item = explain.find_item(args.id)
        engine = load_engine(args.engine)
    except (CaseError, ValueError) as e:
        print(e, file=sys.stderr)
        return 2
    text, result = explain.explain(item, engine, all_names=args.all_names)
    print(text)
    return 0 if result.verdict == PASS else 1 if result.verdict == DIVERGES else 2


def _record(args: argparse.Namespace) -> int:
    from conformance import recording

    _importable_here()
    try:
        rec = recording.record(args.cases, args.engine, every=args.progress_every,
                               progress=None if args.quiet else recording.print_progress,
                               errors=sys.stderr)
    except ValueError as e:  # the engine cannot be imported
        print(e, file=sys.stderr)
        return 2
    recording.dump(rec, args.out)
    statuses: dict[str, int] = {}
    for r in rec["items"].values():
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    print(f"recorded {len(rec['items'])} items on {args.engine} "
          f"(torch {rec['header']['torch_version']}; "
          + ", ".join(f"{k}: {n}" for k, n in sorted(statuses.items())) + f") to {args.out}")
    return 0 if set(statuses) <= {recording.RAN} else 1


def _diff(args: argparse.Namespace) -> int:
    from conformance import drift, recording

    try:
        old, new = recording.load(args.old), recording.load(args.new)
        d = drift.diff(old, new)
    except recording.RecordingError as e:
        print(e, file=sys.stderr)
        return 2
    print(drift.summary(d, str(args.old), str(args.new)))
    if args.markdown:
        drift.write_markdown(d, args.markdown, str(args.old), str(args.new))
    if args.json:
        drift.write_json(d, args.json)
    return 0 if d.identical else 1


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
    run.add_argument("--expectations", type=Path, default=None, metavar="FILE",
                     help="known divergences (default: expectations/<engine>.yaml if present)")
    run.add_argument("--lenient-messages", action="store_true",
                     help="do not fail items whose only difference is an exact message text")
    check = sub.add_parser("check", help="validate case files without running them")
    check.add_argument("files", nargs="+", help="case files or directories")
    new = sub.add_parser("new", help="write a new case file from a template, or from a "
                         "program on stdin (run on torch first)")
    new.add_argument("path", help="the case file to create (never overwritten)")
    new.add_argument("--from-stdin", action="store_true",
                     help="read the program from stdin and run it on torch first")
    new.add_argument("--description", default=None, help="the case's one sentence")
    new.add_argument("--features", default="leaf",
                     help="comma-separated feature names (default: %(default)s)")
    new.add_argument("--dtypes", default="float32",
                     help="comma-separated dtypes (default: %(default)s)")
    new.add_argument("--source", default=None, help="where the behaviour is documented")
    explain = sub.add_parser("explain", help="run one item on torch and an engine and show "
                             "both traces side by side, statement by statement")
    explain.add_argument("id", help="an item, e.g. cases/leaf/leaf_rules.yaml::cpu-float32 "
                         "(a bare case file: its first item)")
    explain.add_argument("--engine", default=DEFAULT_ENGINE,
                         help="importable module of the engine (default: %(default)s)")
    explain.add_argument("--all-names", action="store_true",
                         help="show every name at every step, not only new or changed ones")
    record = sub.add_parser("record", help="run every case item on one engine and store "
                            "the traces (to diff against another recording)")
    record.add_argument("cases", nargs="*", type=Path, default=[Path("cases")],
                        help="case files or directories (default: cases)")
    record.add_argument("--out", type=Path, required=True,
                        help="the recording to write (JSON; gzip-compressed if it ends in .gz)")
    record.add_argument("--engine", default="torch",
                        help="importable module of the engine (default: %(default)s)")
    record.add_argument("--progress-every", type=int, default=25, metavar="N",
                        help="print a progress line to stderr every N items "
                             "(default: %(default)s)")
    record.add_argument("--quiet", action="store_true", help="no progress lines")
    diff = sub.add_parser("diff", help="compare two recordings: every behaviour and "
                          "message that changed; exit 1 when they differ")
    diff.add_argument("old", type=Path, help="the older recording")
    diff.add_argument("new", type=Path, help="the newer recording")
    diff.add_argument("--markdown", type=Path, default=None, metavar="FILE",
                      help="also write the drift report as Markdown")
    diff.add_argument("--json", type=Path, default=None, metavar="FILE",
                      help="also write the drift report as JSON")
    args, extra = parser.parse_known_args(argv)
    args.cases_given = bool(getattr(args, "cases", None)) and args.cases != [Path("cases")]
    if args.command == "run":
        return _run(args, extra)
    if extra:
        parser.error(f"unrecognised arguments: {' '.join(extra)}")
    commands = {"check": _check, "new": _new, "explain": _explain, "record": _record,
                "diff": _diff}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
