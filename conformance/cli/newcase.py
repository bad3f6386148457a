"""`autograd-conformance new PATH`: a case file skeleton, from a template or from a program.

A program given on stdin is parsed (it must be in the case language) and run on torch
first; a statement torch fails is named, and the file is still written, with a comment at
that statement saying what torch did, so the author can wrap it in `with raises(...)` or
fix it.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

from conformance.case import language, vocabulary
from conformance.case.diagnostics import CaseError
from conformance.run.interpreter import run_program
from conformance.run.runner import torch_engine
from conformance.run.trace import ERROR, Step

PLACEHOLDER = """\
# placeholder: replace with the program that shows the behaviour
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = (a * a).sum()
b.backward()
assert_close(a.grad, 2 * a.detach())
"""

TODO_DESCRIPTION = "TODO one sentence: the behaviour this case pins"
TODO_SOURCE = "TODO torch docs page, a test_autograd.py test name, or a seed note"


@dataclass
class NewCase:
    text: str
    torch_failure: str | None  # what torch did at the statement it failed, if any
    failure_line: int | None = None  # that statement's line in the file


def _scalar(text: str) -> str:
    # a double-quoted JSON string is a valid YAML scalar, whatever the text holds
    return json.dumps(text, ensure_ascii=False)


def _failure_note(step: Step, statement: str) -> str:
    o = step.outcome
    if o.status == ERROR:
        what = f"raises {o.type} [{o.kind}]: {o.text}"
        hint = f'wrap it in `with raises("{o.kind}"):` if that is the behaviour to pin'
    else:
        what = o.describe()
        hint = "fix the assertion"
    what = " ".join(str(what).split())
    if len(what) > 200:
        what = what[:197] + "..."
    return f"`{statement}`: torch {what}; {hint}"


def build(program: str | None, *, description: str | None = None,
          features: tuple[str, ...] = ("leaf",), dtypes: tuple[str, ...] = ("float32",),
          source: str | None = None) -> NewCase:
    """The text of a new case file; CaseError when `program` is not in the case language."""
    for f in features:
        if f not in vocabulary.FEATURES:
            raise CaseError(f"unknown feature `{f}`",
                            fix=f"valid features: {', '.join(vocabulary.FEATURES)}")
    for d in dtypes:
        if d not in vocabulary.DTYPES:
            raise CaseError(f"unknown dtype `{d}`",
                            fix=f"valid dtypes: {', '.join(vocabulary.DTYPES)}")
    body = PLACEHOLDER if program is None else textwrap.dedent(program).strip("\n") + "\n"
    parsed = language.parse(body)  # CaseError, line relative to the program
    if not parsed.body:
        raise CaseError("the program is empty", fix="give at least one statement")
    failure = None
    failed_line = 0
    lines = body.splitlines()
    if program is not None:
        torch = torch_engine()
        for dtype in dtypes:
            trace = run_program(torch, parsed, dtype=dtype, device="cpu")
            if trace.failure is not None:
                step = trace.failure
                failure = _failure_note(step, lines[step.line - 1].strip())
                failed_line = step.line + 1  # after the comment inserted before it
                line = lines[step.line - 1]
                indent = line[:len(line) - len(line.lstrip())]
                note = failure.split(": torch ", 1)[1]
                lines.insert(step.line - 1, f"{indent}# on torch {torch.module.__version__} "
                             f"({dtype}) this statement {note}")
                break
    yaml_lines = [
        f"description: {_scalar(description or TODO_DESCRIPTION)}",
        f"# features: one or more of {', '.join(vocabulary.FEATURES)}",
        f"features: [{', '.join(features)}]",
        f"source: {_scalar(source or TODO_SOURCE)}",
        f"dtypes: [{', '.join(dtypes)}]",
    ]
    file_line = None
    if failure is not None:
        # the header, this comment and `program: |` come before the program's line 1
        file_line = len(yaml_lines) + 2 + failed_line
        yaml_lines.insert(0, f"# at line {file_line} {failure}")
    yaml_lines.append("program: |")
    yaml_lines += [f"  {line}".rstrip() for line in lines]
    return NewCase("\n".join(yaml_lines) + "\n", failure, file_line)


def write(path: Path, case: NewCase) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8") as f:  # "x": never overwrite
        f.write(case.text)
