"""Findings cannot rot: every script under docs/findings/ is shown in its document as it is
in the file, and prints, run standalone on the pinned torch, exactly the output the
document shows under it.

A document shows a script as a link to it, its code in a ```python block, then its output
in the next plain ``` block (docs/findings/compiled_autograd.md). The output's first line
names the torch it was made with (`torch 2.13.0+cpu`); on another torch the run is skipped
saying so, the code comparison still runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
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


@pytest.mark.parametrize("shown", SHOWN_SCRIPTS, ids=lambda s: s.script.name)
def test_the_script_prints_what_the_document_shows(shown: Shown, tmp_path: Path) -> None:
    made_with = shown.output.splitlines()[0]
    if made_with != f"torch {torch.__version__}":
        pytest.skip(f"the output shown was made with {made_with}; this is torch "
                    f"{torch.__version__}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH", "PYTHON"))}
    done = subprocess.run([sys.executable, str(shown.script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == shown.output, \
        f"{shown.script.name} now prints:\n{done.stdout}\nthe document shows:\n{shown.output}"
