"""native_layer_norm's create_graph grads come from one node, NativeLayerNormBackwardBackward0,
whose backward is FunctionsManual's layer_norm_double_backward: compared with torch's node,
values and refusal (without a weight, the bias's term is an undefined tensor that ATen adds
to the input's: a RuntimeError whose kind no case can name, so its text is compared here)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import reference_engine as engine


def _grads(lib: Any, weight: bool, bias: bool, wrt: tuple[int, ...]) -> Any:
    rng = np.random.default_rng(7)

    def leaf(shape: tuple[int, ...]) -> Any:
        return lib.tensor(rng.standard_normal(shape), dtype=lib.float64, requires_grad=True)
    x, w, b, go = leaf((2, 3, 4)), leaf((3, 4)), leaf((3, 4)), leaf((2, 3, 4))
    y = lib.nn.functional.layer_norm(x, (3, 4), w if weight else None, b if bias else None)
    inputs = [t for t, used in ((x, True), (w, weight), (b, bias)) if used]
    grads = lib.autograd.grad(y, inputs, go, create_graph=True)
    names = {g.grad_fn.name() for g in grads}
    second = lib.autograd.grad([grads[i].sum() for i in wrt], [x, go, *inputs[1:]],
                               allow_unused=True)
    return names, [None if s is None else np.array(s.tolist()) for s in second]


@pytest.mark.parametrize("weight, bias, wrt", [(True, True, (0, 1, 2)), (True, False, (0, 1)),
                                               (False, False, (0,)), (False, True, (1,)),
                                               (True, True, (2,))])
def test_one_node_gives_torchs_second_order_grads(weight: bool, bias: bool,
                                                  wrt: tuple[int, ...]) -> None:
    theirs, ours = _grads(torch, weight, bias, wrt), _grads(engine, weight, bias, wrt)
    assert ours[0] == theirs[0] == {"NativeLayerNormBackwardBackward0"}
    for t, o in zip(theirs[1], ours[1], strict=True):
        assert (t is None) == (o is None)   # the bias's grad alone: no grad of grad_out
        if t is not None:
            np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-12)


def test_input_and_bias_grads_together_without_a_weight_raise_as_torchs() -> None:
    with pytest.raises(RuntimeError) as theirs:
        _grads(torch, False, True, (0, 1))
    with pytest.raises(RuntimeError) as ours:
        _grads(engine, False, True, (0, 1))
    assert str(ours.value) == str(theirs.value)
