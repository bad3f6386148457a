"""OpSpec's slot for a forward-mode (jvp) formula: the forms it takes, and what it refuses."""

from __future__ import annotations

import pytest

import reference_engine
from reference_engine import views_inplace, views_multi_output
from reference_engine.autograd_meta import OpSpec
from reference_engine.ops import (
    backward,
    binary_math,
    division,
    erf_gamma,
    extremes,
    inplace_ops,
    linalg,
    piecewise,
    unary_math,
    unary_via_backward,
)
from reference_engine.ops.basic import (
    comparisons,
    copying,
    elementwise,
    indexing,
    inplace,
    reductions,
    views,
    views_strided,
)


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


# OpSpecs without a jvp formula, each with the reason; every other one has a formula or a
# shorthand (test_forward_ad.py checks each registry op's tangent by central differences).
_VIEW = "a view op: its tangent is the same view of its base's tangent (forward_ad.fw_grad)"
# (the other backward ops have their jvp: forward-over-reverse runs them on dual tensors)
_MSE_BACKWARD = ("mse_loss_backward: forward-over-reverse through it fails in torch itself "
                 "(its formula writes into an efficient zero tensor: 'ZeroTensors are "
                 "immutable'), which is not modelled")
_INPLACE = "in-place only (eq_): forward_ad.update_inplace writes the tangent (zeros)"
NO_JVP = {
    **{s.grad_fn: _VIEW for m in (views, views_inplace, views_multi_output, views_strided)
       for s in vars(m).values() if isinstance(s, OpSpec) and s is not views.UNSAFE_VIEW},
    backward.MSE_LOSS_BACKWARD.grad_fn: _MSE_BACKWARD,
    "EqBackward0": _INPLACE, "EqBackward1": _INPLACE,
    "IgammaBackward0": "torch gives igamma no forward formula (derivatives.yaml: its input's "
                       "derivative is not_implemented): forward mode refuses it, as torch's",
    "SqueezeBackward4": _VIEW,
    # a view that lives with sum, its backward (ops/basic/reductions.py says why)
    reductions.EXPAND.grad_fn: _VIEW,
}


def test_every_op_has_its_jvp_beside_its_backward() -> None:
    # each spec once: a module's namespace also holds the specs it imports from another
    specs = list({id(v): v for m in (elementwise, division, comparisons, copying, backward,
                                     indexing, linalg, reductions, extremes, views,
                                     views_inplace, views_multi_output, views_strided, inplace,
                                     inplace_ops, unary_math, unary_via_backward, erf_gamma,
                                     piecewise, binary_math)
                  for v in vars(m).values() if isinstance(v, OpSpec)}.values())
    assert len(specs) > 50
    assert sorted(s.grad_fn for s in specs if s.jvp is None) == sorted(NO_JVP)
    assert reference_engine.autograd.forward_ad.make_dual   # torch.autograd.forward_ad
