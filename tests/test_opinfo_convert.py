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
