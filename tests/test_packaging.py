"""What the package declares matches what its code needs. (The built wheel itself, installed
into a fresh environment and run from outside the repository, is checked by
.ci/wheel_check.)"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("conformance", "reference_engine")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _imported_modules() -> dict[str, str]:
    """Top-level module -> a file that imports it, for every import in the packages."""
    found: dict[str, str] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_third_party_import_is_a_declared_dependency() -> None:
    declared = {_canonical(re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0])
                for d in _pyproject()["project"]["dependencies"]}
    distributions = importlib.metadata.packages_distributions()
    third_party = {m: f for m, f in _imported_modules().items()
                   if m not in sys.stdlib_module_names and m not in PACKAGES
                   and m != "__future__"}
    assert {"numpy", "torch", "yaml", "packaging"} <= set(third_party)  # the scan works
    undeclared = {m: f for m, f in third_party.items()
                  if not {_canonical(d) for d in distributions.get(m, [m])} & declared}
    assert not undeclared, f"imported but not in pyproject's dependencies: {undeclared}"


def test_every_subpackage_and_data_file_is_packaged() -> None:
    tool = _pyproject()["tool"]["setuptools"]
    include = tool["packages"]["find"]["include"]
    for package in PACKAGES:
        for init in (ROOT / package).rglob("__init__.py"):
            dotted = ".".join(init.parent.relative_to(ROOT).parts)
            assert any(re.fullmatch(p.replace(".", r"\.").replace("*", ".*"), dotted)
                       for p in include), f"{dotted} is not found by {include}"
    data = tool["package-data"]
    for package in PACKAGES:
        files = [p for p in (ROOT / package).rglob("*")
                 if p.is_file() and p.suffix not in (".py", ".pyc")
                 and "__pycache__" not in p.parts]
        for f in files:
            rel = f.relative_to(ROOT / package)
            assert any(rel.match(pattern) for pattern in data.get(package, [])), \
                f"{package}/{rel} is not in [tool.setuptools.package-data]"
