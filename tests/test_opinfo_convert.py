"""OpInfo's callables on another engine (conformance/opinfo/convert.py): the lambdas that call
torch's wrapper_set_seed run with its stand-in, and any other helper of torch's test suite a
lambda calls still makes it Unconvertible."""

from __future__ import annotations

import pytest

pytest.importorskip("expecttest", reason="OpInfo needs the dev extra's expecttest")

from torch.testing._utils import freeze_rng_state, wrapper_set_seed

import reference_engine
from conformance.opinfo import convert, database
from conformance.run.engine import Engine

REFERENCE = Engine("reference_engine", reference_engine)


def test_a_lambda_calling_wrapper_set_seed_runs_on_the_engine_with_the_stand_in():
    op = database.autograd_entries()["nn.functional.feature_alpha_dropout.without_train"]
    fn = convert.engine_callable(REFERENCE, op.op)
    assert fn.__globals__["wrapper_set_seed"] is convert._unseeded
    assert fn.__globals__["torch"] is reference_engine
    x = reference_engine.tensor([[1.0, -2.0]], requires_grad=True)
    assert fn(x, p=0.5, training=False) is x   # not training: the input itself, as torch's


def _seeded(x):
    return wrapper_set_seed(lambda t: t, x)


def _frozen(x):
    with freeze_rng_state():
        return x


def test_only_wrapper_set_seed_has_a_stand_in():
    assert callable(convert.engine_callable(REFERENCE, _seeded))
    with pytest.raises(convert.Unconvertible, match="freeze_rng_state"):
        convert.engine_callable(REFERENCE, _frozen)


def test_an_aten_overload_is_the_engines_at_the_same_path():
    """OpInfo's `slice` calls torch.ops.aten.slice.Tensor: the engine's object there, which
    runs its forward (h30ops)."""
    import torch

    fn = convert.engine_callable(REFERENCE, torch.ops.aten.slice.Tensor, "slice")
    assert fn is reference_engine.ops.aten.slice.Tensor
    x = reference_engine.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    assert fn(x, 1, 1).tolist() == [[2.0, 3.0]]
    assert fn(x, 1, 1).grad_fn.name() == "SliceBackward0"


def test_a_parameterless_module_becomes_the_engines_with_its_arguments():
    """triplet_margin_with_distance_loss's samples pass nn.PairwiseDistance(): the engine's
    class of that name, built from the attributes torch keeps its arguments in; a module with
    parameters is refused, never passed as it is."""
    import torch

    module = convert.engine_value(REFERENCE, torch.nn.PairwiseDistance(p=3.0, keepdim=True), {})
    assert isinstance(module, reference_engine.nn.PairwiseDistance)
    assert (module.norm, module.eps, module.keepdim) == (3.0, 1e-6, True)
    with pytest.raises(convert.Unconvertible, match="Linear"):
        convert.engine_value(REFERENCE, torch.nn.Linear(2, 3), {})
