"""Rewrite the imports of moved reference_engine modules (h32struct's move of the basic ops
into ops/basic/, kept for merging branches written before it; delete after).

    python tests/reference_engine/move_imports.py . ops.elementwise=ops.basic.elementwise \
        ops.backward=ops.basic.backward ops.comparisons=ops.basic.comparisons \
        ops.complex_numbers=ops.basic.complex_numbers ops.copying=ops.basic.copying \
        ops.indexing=ops.basic.indexing ops.reductions=ops.basic.reductions \
        views=ops.basic.views views_strided=ops.basic.views_strided \
        inplace=ops.basic.inplace inplace_ops=ops.basic.inplace_ops -- $(git ls-files '*.py')
    ruff check --fix --select I001 <the files it prints>

(Imports inside the moved files themselves, written for their old place, it does not see:
those fail at import, `No module named reference_engine.ops.basic.common`; add the dot.)

Each OLD=NEW names a module relative to the package (`ops.elementwise=ops.basic.elementwise`,
`views=ops.basic.views`). Every FILE (a path under ROOT; reference_engine files by their
location *before* the move) has each `from X import ...` that reaches a moved module
rewritten to reach it at its new place, relative imports kept relative (and re-expressed
from the file's own new place when the file itself moves), absolute ones absolute. A
statement whose names now come from several modules is split, one statement each, keeping
its trailing comment. Prints the files it changed. Import order is left to `ruff --fix
--select I001`.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

PACKAGE = "reference_engine"


def module_names(package: Path) -> dict[str, Path]:
    names = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def split(name: str) -> list[str]:
    return name.split(".") if name else []


def main(argv: list[str]) -> None:
    root = Path(argv[0])
    sep = argv.index("--")
    moves = dict(a.split("=") for a in argv[1:sep])
    files = [Path(f) for f in argv[sep + 1:]]
    modules = module_names(root / PACKAGE)
    packages = {n for n, p in modules.items() if p.name == "__init__.py"}
    by_path = {p.resolve(): n for n, p in modules.items()}
    for f in files:
        old_name = by_path.get(f.resolve())
        text = f.read_text(encoding="utf-8")
        new_text = rewrite(text, old_name, moves, modules, packages)
        if new_text != text:
            f.write_text(new_text, encoding="utf-8")
            print(f)


def rewrite(text: str, old_name: str | None, moves: dict[str, str],
            modules: dict[str, Path], packages: set[str]) -> str:
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    if old_name is None:   # a file outside the package: only its absolute imports
        new_pkg: list[str] = []
        old_pkg: list[str] = []
    else:
        old_pkg = split(old_name) if old_name in packages else split(old_name)[:-1]
        new_name = moves.get(old_name, old_name)
        new_pkg = split(new_name) if old_name in packages else split(new_name)[:-1]
    edits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(PACKAGE + ".") and a.name[len(PACKAGE) + 1:] in moves:
                    raise SystemExit(f"{old_name}: `import {a.name}` not handled")
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 0:
            mod = node.module or ""
            if mod != PACKAGE and not mod.startswith(PACKAGE + "."):
                continue
            base = split(mod)[1:]
        else:
            if old_name is None:
                continue
            base = old_pkg[:len(old_pkg) - (node.level - 1)] if node.level > 1 else old_pkg
            base = base + split(node.module or "")
        groups: dict[str, list[str]] = {}
        for a in node.names:
            cand = ".".join([*base, a.name])
            if cand in modules or cand in moves:   # a submodule (moved or not yet)
                target = moves.get(cand, cand)
                new_base = ".".join(split(target)[:-1])
                assert split(target)[-1] == a.name
            else:
                new_base = moves.get(".".join(base), ".".join(base))
            text_name = a.name + (f" as {a.asname}" if a.asname else "")
            groups.setdefault(new_base, []).append(text_name)
        specs = {b: spec(b, node.level, new_pkg) for b in groups}
        old_spec = spec(".".join(base), node.level, old_pkg if old_name else [])
        if len(groups) == 1 and next(iter(specs.values())) == old_spec \
                and moves.get(old_name or "", old_name) == old_name:
            continue
        if len(groups) == 1 and next(iter(specs.values())) == source_spec(lines, node):
            continue
        edits.append((node, groups, specs))
    for node, groups, specs in sorted(edits, key=lambda e: -e[0].lineno):
        first, last = node.lineno - 1, node.end_lineno - 1   # type: ignore[operator]
        stmt = "".join(lines[first:last + 1])
        indent = stmt[:len(stmt) - len(stmt.lstrip())]
        if len(groups) == 1:
            only = next(iter(specs.values()))
            new_stmt = re.sub(r"^(\s*from\s+)([.\w]+)(\s+import)",
                              lambda m, only=only: m.group(1) + only + m.group(3),
                              stmt, count=1)
        else:
            comment = ""
            head = lines[first]
            if "#" in head:
                comment = "  " + head[head.index("#"):].rstrip("\n")
            inner = [ln for ln in lines[first + 1:last + 1] if "#" in ln]
            if inner:
                raise SystemExit(f"{old_name}:{node.lineno}: comments inside a split import")
            out = []
            for b, names in groups.items():
                one = f"{indent}from {specs[b]} import {', '.join(names)}{comment}\n"
                if len(one.rstrip("\n")) > 100:
                    one = (f"{indent}from {specs[b]} import ({comment}\n"
                           + "".join(f"{indent}    {n},\n" for n in names) + f"{indent})\n")
                out.append(one)
            new_stmt = "".join(out)
        lines[first:last + 1] = [new_stmt]
    return "".join(lines)


def source_spec(lines: list[str], node: ast.ImportFrom) -> str:
    m = re.match(r"\s*from\s+([.\w]+)\s+import", lines[node.lineno - 1])
    return m.group(1) if m else ""


def spec(base: str, level: int, pkg: list[str]) -> str:
    """`base` (relative to the package) as seen from package `pkg`: relative if level."""
    if level == 0:
        return ".".join([PACKAGE, *split(base)])
    parts = split(base)
    k = 0
    while k < min(len(parts), len(pkg)) and parts[k] == pkg[k]:
        k += 1
    return "." * (len(pkg) - k + 1) + ".".join(parts[k:])


if __name__ == "__main__":
    main(sys.argv[1:])
