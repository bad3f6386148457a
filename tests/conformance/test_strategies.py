"""The program generator: well-formed programs, every statement kind reachable, hit rates."""

from __future__ import annotations

from hypothesis import Phase, given, settings

from conformance import program as ir
from conformance.engines import load_engine
from conformance.generated import HitRates, check, hits, walk
from conformance.language import parse, to_source
from conformance.strategies import programs

TORCH = load_engine("torch")


@given(programs())
def test_print_then_parse_is_identity(program: ir.Program) -> None:
    assert parse(to_source(program)) == program


def _sample(n: int, record: object) -> None:
    """Run `record` on n programs of the default profile's distribution, generation only."""

    @settings(max_examples=n, database=None, derandomize=True, phases=[Phase.generate],
              deadline=None)
    @given(programs())
    def run(program: ir.Program) -> None:
        record(program)  # type: ignore[operator]

    run()


def _kinds(program: ir.Program) -> set[str]:
    found = {type(s).__name__ for s in walk(program.body)}
    for stmt in walk(program.body):
        if isinstance(stmt, ir.Assign):
            found.add(f"Assign to {type(stmt.target).__name__}")
    text = to_source(program)
    if "lambda" in text:
        found.add("Lambda")
    return found


def test_every_statement_kind_of_the_language_is_reachable() -> None:
    seen: set[str] = set()
    _sample(300, lambda p: seen.update(_kinds(p)))
    expected = {"Assign", "AugAssign", "ExprStmt", "Assert", "With", "For", "Return",
                "FunctionClass", "Lambda", "Assign to Name", "Assign to Tuple",
                "Assign to Subscript", "Assign to Attribute"}
    assert expected <= seen, expected - seen


def test_hit_rates_meet_the_floors() -> None:
    # Measured on torch alone: the floors are about the programs, not about an engine.
    rates = HitRates()
    _sample(300, lambda p: rates.record(hits(check(p, TORCH, TORCH))))
    assert rates.programs == 300
    assert rates.rate("error:backward_twice") >= 0.10, rates.table()
    assert rates.rate("error:saved_tensor_modified") >= 0.10, rates.table()
    assert rates.rate("completed_backward") >= 0.40, rates.table()
