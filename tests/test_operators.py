"""The operator table is the one source of the parser's, printer's and interpreter's operators."""
from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from conformance.case import language, operators
from conformance.case import program as ir
from conformance.run import interpreter

PRELUDE = "a = 1.0\nb = 2.0\n"
SOURCES = ([f"x = a {o.symbol} b" for o in operators.BINARY]
           + [f"x = {o.symbol} a" for o in operators.UNARY]
           + [f"x = a {o.symbol} b" for o in operators.COMPARE]
           + [f"a {o.symbol}= b" for o in operators.AUGMENTED])


@pytest.mark.parametrize("source", SOURCES)
def test_every_operator_parses_and_prints_back(source: str) -> None:
    printed = language.to_source(language.parse(PRELUDE + source))
    assert printed.strip().splitlines()[2:] == [ast.unparse(ast.parse(source))]


def test_symbols_are_unique_per_table() -> None:
    for table in (operators.BINARY, operators.UNARY, operators.COMPARE):
        symbols = [o.symbol for o in table]
        assert len(symbols) == len(set(symbols))


def test_interpreter_evaluates_each_operator_with_its_table_function() -> None:
    assert {o.symbol: o.function for o in operators.BINARY} == interpreter.BINARY
    assert {o.symbol: o.function for o in operators.COMPARE} == interpreter.COMPARE
    assert set(interpreter.INPLACE) == {o.symbol for o in operators.AUGMENTED}
    assert interpreter.BINARY["+"](2, 3) == 5
    assert interpreter.INPLACE["*"](2, 3) == 6
    assert interpreter.COMPARE["is not"](1, None)


def test_ir_nodes_carry_table_symbols() -> None:
    body = language.parse(PRELUDE + "x = a @ b").body
    assert isinstance(body[2], ir.Assign) and isinstance(body[2].value, ir.BinOp)
    assert body[2].value.op == "@"


def test_program_does_not_import_the_parser() -> None:
    # The IR and its printer need only the operator table: no program <-> language cycle.
    code = ("import sys, conformance.case.program as p; p.Program(()).__repr__(); "
            "assert 'conformance.case.language' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)
