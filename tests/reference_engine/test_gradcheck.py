"""Central-difference check, in float64 and independently of torch, of every op's backward
and double backward.

OPS (gradcheck_rows.py) holds the rows: one for every op of reference_engine/registry.py
with a sample, and its in-place form, made from the sample; then the variants written by
hand. Every
differentiable op has a row named for it (test_registry.py checks this), and every OpSpec
is built by some row (test_gradcheck_coverage.py). For each row:

- backward: the grad of sum(f(x) * u), for a random u, against central differences;
- double backward: the grad of s(x) = sum_i <vjp_i(x), w_i>, the random-vector-Jacobian
  product made with create_graph=True, against central differences of s (each evaluated
  with a first-order backward, itself checked by the first test).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import reference_engine as torch
from reference_engine import messages
from tests.reference_engine.gradcheck_rows import (
    DOUBLE_BACKWARD_NOT_MODELLED,
    NO_DOUBLE_BACKWARD,
    NOT_IMPLEMENTED_NODE,
    OPS,
    TORCH_FORMULA_NOT_THE_DERIVATIVE,
    _outputs,
)

EPS = 1e-6


def _rng(test: str, name: str) -> np.random.Generator:
    """A generator seeded from the test's id alone, so a row's inputs do not depend on which
    tests ran before it in this process (test order, xdist scheduling)."""
    return np.random.default_rng(zlib.crc32(f"{test}[{name}]".encode()))


def _weighted(f: Callable[..., Any], weights: list[np.ndarray]) -> Callable[..., Any]:
    """x -> sum_k sum(f(x)_k * weights_k): a scalar whose grad is a vector-Jacobian product."""
    def scalar(*xs: Any) -> Any:
        total = None
        for out, w in zip(_outputs(f(*xs)), weights, strict=True):
            term = (out * torch.tensor(w)).sum()
            total = term if total is None else total + term
        return total
    return scalar


def _numeric(scalar: Callable[..., float], arrays: list[np.ndarray], i: int) -> np.ndarray:
    grad = np.zeros_like(arrays[i])
    for idx in np.ndindex(arrays[i].shape):
        up = [a.copy() for a in arrays]
        down = [a.copy() for a in arrays]
        up[i][idx] += EPS
        down[i][idx] -= EPS
        grad[idx] = (scalar(up) - scalar(down)) / (2 * EPS)
    return grad


def _setup(name: str, rng: np.random.Generator
           ) -> tuple[Callable[..., Any], list[np.ndarray], list[np.ndarray]]:
    f, shapes = OPS[name]
    arrays = [rng.uniform(-1, 1, s) for s in shapes]
    with torch.no_grad():
        outs = _outputs(f(*(torch.tensor(a) for a in arrays)))
    weights = [rng.uniform(-1, 1, tuple(o.shape)) for o in outs]
    return f, arrays, weights


def _leaves(arrays: list[np.ndarray]) -> list[Any]:
    return [torch.tensor(a, requires_grad=True) for a in arrays]


def _as_array(t: Any) -> np.ndarray:
    return np.array(t.tolist(), dtype=np.float64)


@pytest.mark.parametrize("name", sorted(OPS))
def test_backward_matches_central_difference(name: str) -> None:
    f, arrays, weights = _setup(name, _rng("backward", name))
    scalar = _weighted(f, weights)
    inputs = _leaves(arrays)
    grads = torch.autograd.grad(scalar(*inputs), inputs, allow_unused=True,
                                materialize_grads=True)

    def value(arrs: list[np.ndarray]) -> float:
        with torch.no_grad():
            return float(scalar(*(torch.tensor(a) for a in arrs)).item())
    wrong = TORCH_FORMULA_NOT_THE_DERIVATIVE.get(name, ())
    for i, g in enumerate(grads):
        derivative = np.allclose(_as_array(g), _numeric(value, arrays, i), atol=1e-5)
        assert derivative != (i in wrong), i


@pytest.mark.parametrize("name", sorted(NO_DOUBLE_BACKWARD))
def test_a_backward_torch_does_not_differentiate_refuses_double_backward(name: str) -> None:
    f, arrays, weights = _setup(name, _rng("double_backward", name))
    inputs = _leaves(arrays)
    grads = torch.autograd.grad(_weighted(f, weights)(*inputs), inputs, create_graph=True)
    with pytest.raises(NotImplementedError) as info:
        torch.autograd.grad(sum(g.sum() for g in grads), inputs)
    assert str(info.value) == messages.derivative_not_implemented(NO_DOUBLE_BACKWARD[name])


def _reaches_not_implemented(node: Any) -> bool:
    if node is None:
        return False
    return type(node).__name__ == "NotImplemented" or any(
        _reaches_not_implemented(n) for n, _ in node.next_functions)


@pytest.mark.parametrize("name", sorted(NOT_IMPLEMENTED_NODE))
def test_a_backward_torch_records_as_not_implemented_refuses_double_backward(name: str
                                                                             ) -> None:
    f, arrays, weights = _setup(name, _rng("double_backward", name))
    inputs = _leaves(arrays)
    grads = torch.autograd.grad(_weighted(f, weights)(*inputs), inputs, create_graph=True)
    # the node itself, or (ctc_loss through log_softmax) a node of the grad's graph
    assert all(_reaches_not_implemented(g.grad_fn) for g in grads)
    with pytest.raises(RuntimeError) as info:
        torch.autograd.grad(sum(g.sum() for g in grads), inputs)
    assert str(info.value) == messages.no_derivative_for(NOT_IMPLEMENTED_NODE[name])


@pytest.mark.parametrize("name", sorted(DOUBLE_BACKWARD_NOT_MODELLED))
def test_a_double_backward_not_modelled_gives_grads_without_a_graph(name: str) -> None:
    """The engine's known limit, pinned: when it is modelled this fails, and the row joins
    the central-difference test below."""
    f, arrays, weights = _setup(name, _rng("double_backward", name))
    inputs = _leaves(arrays)
    grads = torch.autograd.grad(_weighted(f, weights)(*inputs), inputs, create_graph=True)
    assert [g.grad_fn for g in grads] == [None] * len(grads)


@pytest.mark.parametrize("name", sorted(set(OPS) - set(NO_DOUBLE_BACKWARD)
                                        - set(NOT_IMPLEMENTED_NODE)
                                        - set(DOUBLE_BACKWARD_NOT_MODELLED)))
def test_double_backward_matches_central_difference(name: str) -> None:
    rng = _rng("double_backward", name)
    f, arrays, weights = _setup(name, rng)
    scalar = _weighted(f, weights)
    probes = [rng.uniform(-1, 1, a.shape) for a in arrays]

    def vjp_dot(inputs: list[Any], create_graph: bool) -> Any:
        """s(x) = sum_i <grad_i of scalar(x), probe_i>."""
        grads = torch.autograd.grad(scalar(*inputs), inputs, create_graph=create_graph,
                                    allow_unused=True, materialize_grads=True)
        return sum(((g * torch.tensor(p)).sum() for g, p in zip(grads, probes, strict=True)),
                   torch.tensor(0.0))

    inputs = _leaves(arrays)
    s = vjp_dot(inputs, create_graph=True)
    if s.requires_grad:
        second = torch.autograd.grad(s, inputs, allow_unused=True, materialize_grads=True)
        analytic = [_as_array(g) for g in second]
    else:   # the first derivative does not depend on the inputs at all
        analytic = [np.zeros_like(a) for a in arrays]

    def value(arrs: list[np.ndarray]) -> float:
        return float(vjp_dot(_leaves(arrs), create_graph=False).item())
    for i, g in enumerate(analytic):
        assert np.allclose(g, _numeric(value, arrays, i), atol=1e-4), i
