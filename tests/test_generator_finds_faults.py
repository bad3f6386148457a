"""The generator's power: faults injected into a copy of the reference engine are found and
shrunk to a program of a handful of statements, under the default profile.

The oracle here is the unfaulted reference engine, not torch, so that a divergence the engine
may have from torch cannot stand in for the injected fault.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings

import reference_engine
from conformance import expectations, profiles
from conformance.engines import Engine
from conformance.generated import HitRates, walk
from conformance.generated_suite import GeneratedDivergence, check_generated
from conformance.loader import load_case
from conformance.program import Program
from conformance.strategies import programs

ORACLE = Engine("reference_engine", reference_engine)
HANDFUL = 6
SHRINKS = 500  # successful shrinks allowed per failure: the only bound on shrinking here


@pytest.fixture
def shrinking_bounded_by_count() -> Iterator[None]:
    """Shrinking bounded by a count of shrinks and by no wall time, whatever profile is loaded,
    so that the shrunk program is the same on an idle machine and under load."""
    from hypothesis.internal.conjecture import engine

    before = engine.MAX_SHRINKS, engine.MAX_SHRINKING_SECONDS
    profiles.bound_shrinking_to(SHRINKS, float("inf"))
    yield
    profiles.bound_shrinking_to(*before)


def engine_copy(name: str) -> ModuleType:
    """An independent copy of reference_engine, imported under another name."""
    root = Path(reference_engine.__file__).parent
    spec = importlib.util.spec_from_file_location(name, root / "__init__.py",
                                                  submodule_search_locations=[str(root)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def wrong_sin_backward(m: Any) -> None:
    ops = m.ops
    ops.SIN = dataclasses.replace(
        ops.SIN, backward=lambda c, g: [ops.mul(g, ops.neg(ops.cos(c.self)))])


def mul_inplace_skips_version_bump(m: Any) -> None:
    apply_inplace = m.inplace.apply_inplace

    def patched(self: Any, spec: Any, *args: Any, **kwargs: Any) -> Any:
        out = apply_inplace(self, spec, *args, **kwargs)
        if spec.grad_fn == "MulBackward0":
            self._version_counter.value -= 1
        return out

    m.inplace.apply_inplace = patched


def pow_keeps_saved_tensors(m: Any) -> None:
    release = m.autograd_meta.OpNode.release_variables

    def patched(self: Any) -> None:
        if self.spec.grad_fn != "PowBackward0":
            release(self)

    m.autograd_meta.OpNode.release_variables = patched


def neg_result_claims_leaf(m: Any) -> None:
    m.Tensor.is_leaf = property(
        lambda self: self.grad_fn is None or type(self.grad_fn).__name__ == "NegBackward0")


FAULTS: dict[str, tuple[Callable[[Any], None], str]] = {
    # fault: (injection, a word the divergent field must contain)
    "wrong_sin_backward": (wrong_sin_backward, "grad"),
    "mul_inplace_skips_version_bump": (mul_inplace_skips_version_bump, "version"),
    "pow_keeps_saved_tensors": (pow_keeps_saved_tensors, "outcome"),
    "neg_result_claims_leaf": (neg_result_claims_leaf, "is_leaf"),
}


def _size(program: Program) -> int:
    """Statements outside custom Function bodies."""
    return sum(1 for s in walk(program.body) if s.line) - sum(
        sum(1 for _ in walk(m.body)) for s in program.body
        if hasattr(s, "methods") for m in s.methods)


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.usefixtures("shrinking_bounded_by_count")
def test_injected_fault_is_found_and_shrunk(fault: str, tmp_path: Path) -> None:
    inject, field_word = FAULTS[fault]
    module = engine_copy(f"faulty_{fault}")
    inject(module)
    faulty = Engine(f"faulty_{fault}", module)

    @settings(parent=settings.get_profile("default"), database=None, derandomize=True)
    @given(programs())
    def search(program: Program) -> None:
        check_generated(program, faulty, ORACLE, HitRates(), str(tmp_path))

    with pytest.raises(GeneratedDivergence) as info:
        search()
    checked = info.value.checked
    divergence = checked.comparison.divergence
    assert divergence is not None
    assert field_word in divergence.field, (divergence.field, checked.source)
    assert _size(checked.program) <= HANDFUL, checked.source
    # the shrunk program was written as a case the loader accepts
    (saved,) = tmp_path.glob("*.yaml")
    case = load_case(saved)
    assert case.features and case.program.body


def test_listed_generated_divergence_is_counted_not_shrunk(tmp_path: Path) -> None:
    module = engine_copy("faulty_known")
    neg_result_claims_leaf(module)
    faulty = Engine("faulty_known", module)
    listed = tmp_path / "known.yaml"
    listed.write_text("known:\n  - generated: {field: '*.is_leaf'}\n    reason: injected\n")
    known = expectations.load(listed)
    log, matched = HitRates(), set()

    @settings(parent=settings.get_profile("default"), database=None, derandomize=True)
    @given(programs())
    def search(program: Program) -> None:
        check_generated(program, faulty, ORACLE, log, None, known, matched)

    search()  # no GeneratedDivergence: every divergence it met is listed
    assert log.counts["known_divergence"] > 0
    assert matched == {0}
