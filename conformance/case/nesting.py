"""The nesting limit on a program (MAX_NESTING, docs/case-format.md "Loading limits"):
found before the recursive conversion, and, for a program too deep for Python's own parser,
the line where it gives up."""

from __future__ import annotations

import ast

from conformance.case.diagnostics import CaseError


def too_deep(max_nesting: int | None, line: int | None) -> CaseError:
    deep = "too deep for Python's parser" if max_nesting is None else \
        f"more than {max_nesting} levels deep"
    return CaseError(f"the program nests {deep}", line=line,
                     fix="split deep expressions into several assignments")


def nests_beyond(tree: ast.Module, limit: int) -> int | None:
    """The first line where statements and expressions nest more than `limit` deep, or
    None. Iterative: the tree may be deeper than the stack allows. A negative number literal
    is one level, as the IR has it (Const(-2.0))."""
    stack: list[tuple[ast.AST, int, int]] = [(tree, 0, 0)]
    while stack:
        node, depth, line = stack.pop()
        if isinstance(node, (ast.stmt, ast.expr)):
            depth += 1
            line = getattr(node, "lineno", line)
            if depth > limit:
                return line
        children = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
                isinstance(node.operand, ast.Constant) and \
                type(node.operand.value) in (int, float):
            children = []  # one constant in the IR
        stack.extend((child, depth, line) for child in reversed(children))
    return None


def line_too_deep_to_parse(source: str) -> int | None:
    """The line at which Python's parser gives up for depth: the fewest first lines of
    `source` it cannot parse for depth (bisected; a prefix cut inside the deep part is as
    deep), or None if none is."""
    lines = source.split("\n")

    def too_deep(count: int) -> bool:
        try:
            ast.parse("\n".join(lines[:count]))
        except (RecursionError, MemoryError):
            return True
        except SyntaxError:  # an unfinished statement, before its depth was reached
            return False
        return False

    low, high = 1, len(lines)
    if not too_deep(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if too_deep(middle):
            high = middle
        else:
            low = middle + 1
    return low
