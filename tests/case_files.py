"""Small case files that tests of whole runs write into a temporary project."""

from __future__ import annotations

from pathlib import Path

CASE = """\
description: {op} and its grad
features: [grad_fn]
source: test
devices: [cpu]
program: |
  a = torch.tensor([1.0, 2.0], requires_grad=True)
  b = torch.{op}(a)
  b.sum().backward()
"""


def write_cases(root: Path, *ops: str, template: str = CASE) -> None:
    """cases/family/<op>.yaml under `root` for each op, from `template` (by default one cpu
    item each)."""
    for op in ops:
        path = root / "cases" / "family" / f"{op}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(op=op))
