"""Findings cannot rot: every script under docs/findings/ is shown in its document as it is
in the file, and prints, run standalone on the pinned torch, exactly the output the
document shows under it.

A document shows a script as a link to it, its code in a ```python block, then its output
in the next plain ``` block (docs/findings/compiled_autograd.md). The output's first line
names the torch it was made with (`torch 2.13.0+cpu`); on another torch the run is skipped
saying so, the code comparison still runs.

Each script runs as `python <script>` would run it, in a process of its own with the
document's torch, its directory first on sys.path and a clean environment; that process is
forked from a server that has imported torch and torch._dynamo once (one per xdist worker),
as importing them is most of a script's cost (3.3 of its 4-5 s of CPU). A fork begins with
nothing of another script's state: no script ever runs in the server.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
FINDINGS = ROOT / "docs" / "findings"
SHOWN = re.compile(r"\[`(?P<path>[\w/]+\.py)`\]\((?P=path)\):\n\n```python\n(?P<code>.*?)```\n\n"
                   r"[^\n]*\n\n```\n(?P<output>.*?)```", re.S)


@dataclass(frozen=True)
class Shown:
    document: Path
    script: Path
    code: str
    output: str


def _shown() -> list[Shown]:
    found = []
    for document in sorted(FINDINGS.glob("*.md")):
        for m in SHOWN.finditer(document.read_text()):
            found.append(Shown(document, document.parent / m["path"], m["code"], m["output"]))
    return found


SHOWN_SCRIPTS = _shown()


def test_every_script_is_shown_once_and_every_shown_script_exists() -> None:
    scripts = sorted(FINDINGS.glob("*/[0-9][0-9]_*.py"))
    shown = [s.script for s in SHOWN_SCRIPTS]
    assert scripts, "no findings scripts found"
    assert sorted(shown) == scripts, "scripts not shown, shown twice, or missing"


@pytest.mark.parametrize("shown", SHOWN_SCRIPTS, ids=lambda s: s.script.name)
def test_the_document_shows_the_script_as_it_is(shown: Shown) -> None:
    assert shown.code == shown.script.read_text(), \
        f"{shown.document.name} shows another version of {shown.script.name}"


# The server: imports what every script imports, then for each request (a JSON line: the
# script, its working directory, files for its output) forks a child that runs the script as
# `python <script>` does (as __main__, its directory first on sys.path, stdin empty, stdout
# and stderr to the files, a traceback and exit status 1 on an exception) and answers with
# the child's exit status. SIGALRM ends a child that runs longer than the request's limit.
SERVER = """\
import json, os, runpy, signal, sys, traceback
import torch, torch._dynamo
for line in sys.stdin:
    r = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        signal.alarm(r["limit"])
        os.chdir(r["cwd"])
        for fd, name, flags in ((0, os.devnull, os.O_RDONLY),
                                (1, r["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, r["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            os.dup2(os.open(name, flags, 0o644), fd)
        sys.argv, sys.path[0] = [r["script"]], os.path.dirname(r["script"])
        code = 0
        try:
            runpy.run_path(r["script"], run_name="__main__")
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
            if not isinstance(e.code, (int, type(None))):
                print(e.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush(); sys.stderr.flush()
        os._exit(code)
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    print(json.dumps(status), flush=True)
"""
LIMIT = 600  # seconds a script may run


@pytest.fixture(scope="module")
def run_script() -> Iterator[Callable[[Path, Path], tuple[int, str, str]]]:
    """Run a script as a standalone process would (see SERVER): its exit status, stdout and
    stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH", "PYTHON"))}
    server = subprocess.Popen([sys.executable, "-c", SERVER], env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None

    def run(script: Path, cwd: Path) -> tuple[int, str, str]:
        out, err = cwd / "stdout.txt", cwd / "stderr.txt"
        request = {"script": str(script), "cwd": str(cwd / "run"), "stdout": str(out),
                   "stderr": str(err), "limit": LIMIT}
        (cwd / "run").mkdir()
        print(json.dumps(request), file=server.stdin, flush=True)
        answer = server.stdout.readline()
        assert answer, f"the script server ended (exit status {server.poll()})"
        return int(json.loads(answer)), out.read_text(), err.read_text()

    yield run
    server.stdin.close()
    server.wait()


@pytest.mark.parametrize("shown", SHOWN_SCRIPTS, ids=lambda s: s.script.name)
def test_the_script_prints_what_the_document_shows(
        shown: Shown, tmp_path: Path, run_script: Callable[[Path, Path], tuple[int, str, str]]
        ) -> None:
    made_with = shown.output.splitlines()[0]
    if made_with != f"torch {torch.__version__}":
        pytest.skip(f"the output shown was made with {made_with}; this is torch "
                    f"{torch.__version__}")
    code, stdout, stderr = run_script(shown.script, tmp_path)
    assert code == 0, stderr[-2000:]
    assert stdout == shown.output, \
        f"{shown.script.name} now prints:\n{stdout}\nthe document shows:\n{shown.output}"
