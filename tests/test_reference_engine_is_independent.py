"""The reference engine earns its answers: it never imports torch."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[1] / "reference_engine"


def test_no_source_file_imports_torch() -> None:
    files = sorted(ENGINE.rglob("*.py"))
    assert files
    offenders = []
    for f in files:
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
                names = ["__import__"]
            elif isinstance(node, ast.Attribute) and node.attr == "import_module":
                names = ["importlib.import_module"]
            offenders += [f"{f.name}:{node.lineno} {n}" for n in names
                          if n.split(".")[0] in ("torch", "__import__", "importlib")]
    assert offenders == []


def test_importing_and_using_the_engine_loads_no_torch() -> None:
    code = (
        "import sys, reference_engine as t\n"
        "x = t.rand(2, 3, requires_grad=True)\n"
        "(x * 2).sum().backward()\n"
        "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if 'torch' in m)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
