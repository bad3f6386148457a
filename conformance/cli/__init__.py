"""`autograd-conformance`: run the suite and write the report, merge several runs' reports,
check case files, start a new case, explain one item side by side, record traces and diff
recordings (drift)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import conformance
from conformance import shared_options
from conformance.case import paths
from conformance.case.diagnostics import CaseError
from conformance.case.loader import load_case
from conformance.cli import final_line, run_command


def _merge(args: argparse.Namespace) -> int:
    from conformance.report import merge
    from conformance.report.directory import ReportDirBusy

    try:
        written, outcome = merge.write(args.reports, args.out)
    except merge.MergeError as e:
        print(f"autograd-conformance merge: {e}", file=sys.stderr)
        return 2
    except ReportDirBusy:
        print(f"autograd-conformance merge: --out {args.out}: a run is writing its report "
              "there; wait for it, or merge into another directory", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"autograd-conformance merge: --out {args.out}: cannot write the report "
              f"there ({e}); name a writable directory", file=sys.stderr)
        return 2
    from conformance.report.files import status_of

    print(f"{final_line.PREFIX} merged {len(args.reports)} reports: "
          f"{status_of(written[0])}; report in {args.out}/")
    return 0 if outcome == "PASS" else 1


def _check(args: argparse.Namespace) -> int:
    import os

    # Every file is checked, whatever the others hold; a named path that is no directory is
    # checked as a file (so a FIFO, a device or a dangling symlink is reported, not read).
    files: list[Path] = []
    unreadable: list[OSError] = []
    for p in args.files:
        if not Path(p).is_dir():
            files.append(Path(p))
            continue
        # every `*.yaml` entry but directories (FIFOs and dangling symlinks too); symlinked
        # directories are not followed, as pytest does not follow them either
        for root, _, names in sorted(os.walk(p, onerror=unreadable.append)):
            files += [Path(root, n) for n in sorted(names) if n.endswith(".yaml")]
    bad = len(unreadable)
    for error in unreadable:
        print(f"{error.filename}: cannot read the directory: {error.strerror}",
              file=sys.stderr)
    for f in files:
        try:
            load_case(f)
        except CaseError as e:
            bad += 1
            print(e, file=sys.stderr)
        except Exception as e:  # a harness bug: say so, and go on with the other files
            bad += 1
            print(f"{f}: internal error while loading ({type(e).__name__}: {e}); this is a "
                  "bug in autograd-conformance, please report it", file=sys.stderr)
    total = len(files) + len(unreadable)
    print(f"{total - bad} of {total} case files are valid"
          + (f" (unreadable directories: {len(unreadable)})" if unreadable else ""))
    if not total:
        print(f"no case files (*.yaml) in {' '.join(args.files)}", file=sys.stderr)
    return 1 if bad or not total else 0


def _new(args: argparse.Namespace) -> int:
    from conformance.cli import newcase

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


def _explain(args: argparse.Namespace) -> int:
    from conformance.report import explain
    from conformance.run.engine import load_engine
    from conformance.run.runner import DIVERGES, PASS

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
    from conformance.report import recording

    if args.generated < 0:
        print("autograd-conformance record: --generated N: a number of programs, 0 or more",
              file=sys.stderr)
        return 2
    if not args.cases and not args.generated:
        found = paths.default_cases(Path.cwd())
        if found is None:
            print("autograd-conformance record: no case library here (./cases does not "
                  "exist): name case files or directories", file=sys.stderr)
            return 2
        args.cases = [found]
    try:
        rec = recording.record(args.cases, args.engine, every=args.progress_every,
                               progress=None if args.quiet else recording.print_progress,
                               errors=sys.stderr, generated=args.generated)
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
    from conformance.report import drift, recording

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


def _add_update_expectations(sub: argparse._SubParsersAction[argparse.ArgumentParser]
                             ) -> None:
    update = sub.add_parser(
        "update-expectations", help="merge a run's report (or several, e.g. a campaign's "
        "shards) into an expectations file, keeping what people wrote")
    update.add_argument("reports", nargs="+", type=Path,
                        help="conformance.json files, or report directories holding one")
    update.add_argument("--expectations", type=Path, required=True, metavar="FILE",
                        help="the expectations file to update (created if absent)")
    update.add_argument("--prune", action="store_true",
                        help="also remove the stale entries (by default they are listed)")


def _update_expectations(args: argparse.Namespace) -> int:
    from conformance.report import baseline

    try:
        records, environment, engine = baseline.from_reports(args.reports)
        done = baseline.update(args.expectations, records, shown=str(args.expectations),
                               engine=engine, torch_version=environment.torch or "?",
                               environment=environment, prune=args.prune)
        if done.changed or done.created:
            baseline.write(args.expectations, done.text)
    except (CaseError, ValueError, OSError) as e:
        print(f"autograd-conformance update-expectations: {e}", file=sys.stderr)
        return 2
    print("\n".join(done.lines()))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = _main(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()  # here, where a closed pipe is caught, not at interpreter exit
        return code
    except BrokenPipeError:
        # the reader went away (`diff | head`): stop quietly, and keep Python's own flush at
        # exit from failing on the closed pipe again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def version_text() -> str:
    import platform
    from importlib import metadata

    def installed(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    return f"autograd-conformance {conformance.__version__} (torch {installed('torch')}, " \
           f"Python {platform.python_version()})"


def _main(argv: list[str]) -> int:
    # `run CASES... [options] -- PYTEST ARGS`: what follows `--` goes to pytest untouched
    passthrough: list[str] = []
    if argv[:1] == ["run"] and "--" in argv:
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1:]
    parser = argparse.ArgumentParser(prog="autograd-conformance", description=__doc__)
    parser.add_argument("--version", action="version", version=version_text())
    sub = parser.add_subparsers(dest="command", required=True)
    run = run_command.add_parser(sub)
    merge = sub.add_parser("merge", help="merge several runs' conformance.json (the machines "
                           "of one campaign) into one report; exit 1 unless it is PASS")
    merge.add_argument("reports", nargs="+", type=Path,
                       help="conformance.json files, or report directories holding one")
    merge.add_argument("--out", type=Path, required=True, metavar="DIR",
                       help="where the merged conformance.json, summary.md and index.html go")
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
    explain.add_argument("id", help="an item, e.g. cases/leaf/leaf_rules.yaml::cpu-float32: "
                         "its case file's path, or its id as reports show it (found from "
                         "here, this project's root or the clone's); a bare case file: its "
                         "first item")
    shared_options.ENGINE.add_to(explain)  # as `run` and the plugin declare it
    explain.add_argument("--all-names", action="store_true",
                         help="show every name at every step, not only new or changed ones")
    record = sub.add_parser("record", help="run every case item on one engine and store "
                            "the traces (to diff against another recording)")
    record.add_argument("cases", nargs="*", type=Path,
                        help="case files or directories (default: ./cases, else the case "
                             "library of the clone this package runs from)")
    record.add_argument("--out", type=Path, required=True,
                        help="the recording to write (JSON; gzip-compressed if it ends in .gz)")
    record.add_argument("--engine", default="torch",
                        help="importable module of the engine (default: %(default)s)")
    record.add_argument("--progress-every", type=int, default=25, metavar="N",
                        help="print a progress line to stderr every N items "
                             "(default: %(default)s)")
    record.add_argument("--quiet", action="store_true", help="no progress lines")
    record.add_argument("--generated", type=int, default=0, metavar="N",
                        help="also record the first N generated programs of the default "
                             "profile, derandomized (the same on every run), by id "
                             "generated/K::cpu-float32; without case paths, only them")
    diff = sub.add_parser("diff", help="compare two recordings: every behaviour and "
                          "message that changed; exit 1 when they differ",
                          description="Compare two recordings: every behaviour and message "
                          "text that changed, per item and statement. Exit status: 0 when "
                          "they do not differ (no drift), 1 when they do, 2 when a file is "
                          "not a recording.")
    diff.add_argument("old", type=Path, help="the older recording")
    diff.add_argument("new", type=Path, help="the newer recording")
    diff.add_argument("--markdown", type=Path, default=None, metavar="FILE",
                      help="also write the drift report as Markdown")
    diff.add_argument("--json", type=Path, default=None, metavar="FILE",
                      help="also write the drift report as JSON")
    _add_update_expectations(sub)
    args, extra = parser.parse_known_args(argv)
    if extra:
        hint = "; pytest's options go after `--`, e.g. `autograd-conformance run cases/ops " \
               "-- -k exp -x`" if args.command == "run" else ""
        (run if args.command == "run" else parser).error(
            f"unrecognised arguments: {' '.join(extra)}{hint}")
    if args.command == "run":
        run_command.prepare(run, args)
        return run_command.run(args, passthrough)
    commands = {"check": _check, "new": _new, "explain": _explain, "record": _record,
                "diff": _diff, "merge": _merge, "update-expectations": _update_expectations}
    return commands[args.command](args)

