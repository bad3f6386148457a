"""conformance/ is layered, and the layers are its folders: a module imports only from its own
layer or the layers below, no modules import each other in a circle, reference_engine never
imports the harness, and the README's architecture section lists the layers in this order.

The import graph is read from the sources (ast), not by importing them: every `import`
counts, at module level, inside a function or under `if TYPE_CHECKING:`, since each is a
dependency a reader has to follow (the issue-21 circle compare -> trace -> isolation ->
engines -> compare was closed by a TYPE_CHECKING import)."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "conformance"

# Bottom to top: the prefixes (dotted, under conformance) of each layer's modules. A layer
# may import the layers before it, never those after it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the case format", ("case",)),
    ("running one item", ("run",)),
    ("generated programs", ("gen",)),
    ("reports", ("report",)),
    # OpInfo's samples on torch and an engine, compared op by op (its own command)
    ("the OpInfo check", ("opinfo",)),
    # engines loaded by name with --engine: nothing below imports them
    ("shipped engines", ("engines",)),
    # the options of a run, which the plugin and the command line share
    ("the run's options", ("shared_options",)),
    # the test module the plugin collects for generated programs (its path is its item id)
    ("the generated-program suite", ("generated_suite",)),
    ("the pytest plugin", ("plugin",)),
    ("the command line", ("cli",)),
)
# conformance/__init__.py holds only the version; every layer may read it.
PACKAGE_ROOT = "conformance"
# What conformance takes from reference_engine: its registry (the op table the case language
# and the generator share); fault_injection's job is to load faulty copies of the engine.
ENGINE_IMPORTS = {"reference_engine.registry": "*",
                  "reference_engine": "conformance.gen.fault_injection"}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, e.g. conformance.run.trace
    target: str  # the module imported, e.g. conformance.run.isolation
    path: Path
    line: int

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def modules(package: Path) -> dict[str, Path]:
    """Every module under `package` by its dotted name (a package by its __init__)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imported(node: ast.Import | ast.ImportFrom, source: str, is_package: bool) -> list[str]:
    """The dotted names an import statement reaches (`from a import b`: a.b, whether b is a
    module or a name in a; `imports` keeps the longest existing module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        parts = source.split(".")[:len(source.split(".")) - node.level + is_package]
        base = ".".join(parts + ([base] if base else []))
    return [f"{base}.{alias.name}" for alias in node.names]


def imports(package: Path, known: dict[str, Path]) -> Iterator[Import]:
    """Every import from a module of `package` to a module of `known`, as the module reached
    (the longest known prefix of the imported name)."""
    for source, path in modules(package).items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in _imported(node, source, path.name == "__init__.py"):
                while name and name not in known:
                    name = name.rpartition(".")[0]
                if name and name != source:
                    yield Import(source, name, path, node.lineno)


def layer_of(module: str) -> int | None:
    """The index in LAYERS of a conformance module; -1 for the package root."""
    if module == PACKAGE_ROOT:
        return -1
    rest = module.removeprefix(PACKAGE_ROOT + ".")
    for index, (_, prefixes) in enumerate(LAYERS):
        if any(rest == p or rest.startswith(p + ".") for p in prefixes):
            return index
    return None


CONFORMANCE = modules(PACKAGE)
EDGES = list(imports(PACKAGE, CONFORMANCE))


def test_every_module_is_in_a_layer() -> None:
    unplaced = [m for m in CONFORMANCE if layer_of(m) is None]
    assert not unplaced, (f"{unplaced}: not in a layer; put each in the subpackage of the "
                          "layer it belongs to, or add its layer to LAYERS (and the README)")
    empty = [name for i, (name, _) in enumerate(LAYERS)
             if all(layer_of(m) != i for m in CONFORMANCE)]
    assert not empty, f"layers without modules: {empty}"


def test_no_module_imports_a_higher_layer() -> None:
    wrong = []
    for e in EDGES:
        low, high = layer_of(e.source), layer_of(e.target)
        assert low is not None and high is not None
        if high > low:
            wrong.append(f"{e.where()}: {e.source} ({LAYERS[low][0]}) imports {e.target} "
                         f"({LAYERS[high][0]}), a layer above it")
    assert not wrong, "\n".join(wrong)


def circles(edges: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_modules_import_each_other_in_a_circle() -> None:
    found = circles(EDGES)
    assert not found, "import circles (each a set of modules that import each other):\n" + \
        "\n".join(", ".join(c) for c in found)


def test_the_circle_check_finds_a_circle() -> None:
    # the check above can fail: the issue-21 circle, as it was
    names = ["compare", "trace", "isolation", "engines"]
    edges = [Import(a, b, ROOT, 1) for a, b in zip(names, names[1:] + names[:1], strict=True)]
    assert circles([*edges, Import("runner", "compare", ROOT, 1)]) == [sorted(names)]


def test_conformance_takes_only_the_registry_from_the_reference_engine() -> None:
    engine = modules(ROOT / "reference_engine")
    wrong = [f"{e.where()}: {e.source} imports {e.target}"
             for e in imports(PACKAGE, engine)
             if ENGINE_IMPORTS.get(e.target) not in ("*", e.source)]
    assert not wrong, "\n".join(wrong)


def test_the_reference_engine_never_imports_the_harness() -> None:
    wrong = [f"{e.where()}: {e.source} imports {e.target}"
             for e in imports(ROOT / "reference_engine", CONFORMANCE)]
    assert not wrong, "\n".join(wrong)


def test_the_readme_draws_the_layers_in_order() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("Layout."):]
    section = section[:section.index("\n## ")] if "\n## " in section else section
    drawn = re.findall(r"^\s*(\d+)\. +`conformance/([\w]+)(?:/|\.py)`", section, re.M)
    expected = [prefix for _, prefixes in LAYERS for prefix in prefixes]
    assert [name for _, name in drawn][::-1] == expected, (
        "the README's layer list (top first) does not match LAYERS (bottom first)")


def _loaded_by_importing(module: str) -> set[str]:
    code = f"import sys, {module}; print('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT)
    return set(done.stdout.split())


@pytest.fixture(scope="module")
def loaded_by_the_plugin() -> set[str]:
    return _loaded_by_importing("conformance.plugin")


def test_importing_the_plugin_imports_no_torch(loaded_by_the_plugin: set[str]) -> None:
    # the plugin loads in every pytest run where the package is installed
    assert "torch" not in loaded_by_the_plugin


def test_importing_the_plugin_imports_no_engine(loaded_by_the_plugin: set[str]) -> None:
    # its hooks import the harness when first called (the plugin's docstring, issue 21.1)
    assert not {m for m in loaded_by_the_plugin if m.split(".")[0] == "reference_engine"}


_UNRELATED_CONFTEST = '''
import json, sys

def pytest_unconfigure(config):
    with open("loaded.json", "w") as f:
        json.dump(sorted(sys.modules), f)
'''


def _loaded_by_a_pytest_run(project: Path, *args: str) -> set[str]:
    """The modules loaded by the end of a pytest run (in a process of its own) of the small
    project at `project`, which has nothing to do with conformance but a YAML file."""
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (project / "conftest.py").write_text(_UNRELATED_CONFTEST, encoding="utf-8")
    (project / "test_sum.py").write_text("def test_sum():\n    assert 1 + 1 == 2\n",
                                         encoding="utf-8")
    (project / "settings.yaml").write_text("a: 1\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *args], capture_output=True, text=True, cwd=project, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout, done.stdout
    return set(json.loads((project / "loaded.json").read_text(encoding="utf-8")))


def test_another_projects_pytest_run_loads_no_harness(tmp_path: Path) -> None:
    # the plugin is loaded in every pytest run of the environment (its entry point): a run of
    # another project imports neither torch nor an engine, nor the harness that loads them
    loaded = _loaded_by_a_pytest_run(tmp_path / "unrelated", "test_sum.py")
    assert "conformance.plugin" in loaded  # the plugin was there
    assert not {m for m in loaded if m.split(".")[0] in ("torch", "reference_engine")}
    assert "conformance.run.runner" not in loaded


def test_a_conformance_option_loads_the_harness(tmp_path: Path) -> None:
    # the probe above can fail: asking for a conformance option makes it a conformance run
    loaded = _loaded_by_a_pytest_run(tmp_path / "unrelated", "test_sum.py", "--devices=cpu")
    assert "conformance.run.runner" in loaded
    assert "reference_engine" in loaded
