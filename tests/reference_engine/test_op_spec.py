"""OpSpec's slot for a forward-mode (jvp) formula: the forms it takes, and what it refuses."""

from __future__ import annotations

import pytest

import reference_engine
from reference_engine import inplace, views
from reference_engine.autograd_meta import OpSpec
from reference_engine.ops import backward, elementwise, indexing, linalg, reductions


def test_a_jvp_formula_or_shorthand_sits_beside_the_backward() -> None:
    formula = OpSpec("MulBackward0", ("self", "other"), jvp=lambda c: c.self_t)
    assert callable(formula.jvp)
    assert OpSpec("NegBackward0", ("self",), jvp="auto_element_wise").jvp == "auto_element_wise"
    assert OpSpec("CloneBackward0", ("self",), jvp="auto_linear").jvp == "auto_linear"
    assert OpSpec("NegBackward0", ("self",)).jvp is None


def test_a_misspelled_shorthand_is_refused() -> None:
    with pytest.raises(AssertionError, match="auto_elementwise"):
        OpSpec("NegBackward0", ("self",), jvp="auto_elementwise")


def test_auto_element_wise_takes_one_input() -> None:
    with pytest.raises(AssertionError, match="needs one input, not 2"):
        OpSpec("AddBackward0", ("self", "other"), jvp="auto_element_wise")


def test_no_op_fills_the_slot_before_forward_mode_exists() -> None:
    """Forward mode is another issue's: a formula written now would be read by nothing."""
    specs = [v for m in (elementwise, backward, indexing, linalg, reductions, views, inplace)
             for v in vars(m).values() if isinstance(v, OpSpec)]
    assert len(specs) > 50
    assert [s.grad_fn for s in specs if s.jvp is not None] == []
    assert not hasattr(reference_engine.autograd, "forward_ad")   # torch.autograd.forward_ad
