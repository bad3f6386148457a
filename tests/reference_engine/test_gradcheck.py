"""Central-difference check of every op's backward, in float64."""

import numpy as np
import pytest

import reference_engine as torch

RNG = np.random.default_rng(0)


def numeric_grad(f, arrays, i, eps=1e-6):
    grad = np.zeros_like(arrays[i])
    for idx in np.ndindex(arrays[i].shape):
        up = [a.copy() for a in arrays]
        down = [a.copy() for a in arrays]
        up[i][idx] += eps
        down[i][idx] -= eps
        hi = f(*(torch.tensor(a) for a in up)).sum().item()
        lo = f(*(torch.tensor(a) for a in down)).sum().item()
        grad[idx] = (hi - lo) / (2 * eps)
    return grad


CASES = {
    "add": (lambda a, b: a + b, [(2, 3), (3,)]),
    "sub": (lambda a, b: torch.sub(a, b, alpha=2), [(2, 3), (2, 3)]),
    "rsub": (lambda a: 2 - a, [(3,)]),
    "mul": (lambda a, b: a * b, [(2, 3), (1, 3)]),
    "div": (lambda a, b: a / (b.abs() + 1), [(2, 3), (2, 3)]),
    "rdiv": (lambda a: 2 / (a.abs() + 1), [(3,)]),
    "pow0": (lambda a: a**3, [(3,)]),
    "pow1": (lambda a, b: (a.abs() + 0.5) ** b, [(3,), (3,)]),
    "pow2": (lambda a: 2**a, [(3,)]),
    "neg": (lambda a: -a, [(3,)]),
    "exp": (lambda a: a.exp(), [(3,)]),
    "log": (lambda a: (a.abs() + 1).log(), [(3,)]),
    "sqrt": (lambda a: (a.abs() + 1).sqrt(), [(3,)]),
    "sin": (lambda a: a.sin(), [(3,)]),
    "cos": (lambda a: a.cos(), [(3,)]),
    "tanh": (lambda a: a.tanh(), [(3,)]),
    "sigmoid": (lambda a: a.sigmoid(), [(3,)]),
    "relu": (lambda a: a.relu(), [(4,)]),
    "clamp": (lambda a: a.clamp(-0.5, 0.5), [(4,)]),
    "mm": (lambda a, b: a.mm(b), [(2, 3), (3, 4)]),
    "mv": (lambda a, b: a @ b, [(2, 3), (3,)]),
    "vm": (lambda a, b: a @ b, [(3,), (3, 2)]),
    "dot": (lambda a, b: a.dot(b), [(3,), (3,)]),
    "sum_dim": (lambda a: a.sum(1) ** 2, [(2, 3)]),
    "mean": (lambda a: a.mean() ** 2, [(2, 3)]),
    "mean_dim": (lambda a: a.mean(0, keepdim=True) ** 2, [(2, 3)]),
    "cat": (lambda a, b: torch.cat([a, b], 1) ** 2, [(2, 1), (2, 3)]),
    "stack": (lambda a, b: torch.stack([a, b], 1) ** 2, [(2,), (2,)]),
    "views": (lambda a: a.t().reshape(6).view(2, 3).transpose(0, 1)[1:, 0] ** 2, [(2, 3)]),
    "squeeze": (lambda a: a.unsqueeze(0).squeeze(0).expand(2, 3, 3) ** 2, [(3, 3)]),
    "index": (lambda a: a[a > 0] ** 2, [(5,)]),
    "where": (lambda a, b: torch.where(a > 0, a, b) ** 2, [(4,), (4,)]),
    "mse": (lambda a, b: torch.nn.functional.mse_loss(a, b), [(3,), (3,)]),
    "linear": (lambda x, w, b: torch.nn.functional.linear(x, w, b) ** 2, [(2, 3), (4, 3), (4,)]),
    "setitem": (lambda a, b: _setitem(a, b), [(3,), ()]),
    "inplace_view": (lambda a: _inplace_view(a), [(2, 2)]),
}


def _setitem(a, b):
    c = a * 1
    c[1] = b
    return c**2


def _inplace_view(a):
    c = a * 1
    c[0].mul_(c[1])
    return c**2


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_central_difference(name):
    f, shapes = CASES[name]
    arrays = [RNG.uniform(-1, 1, s) for s in shapes]
    inputs = [torch.tensor(a, requires_grad=True) for a in arrays]
    f(*inputs).sum().backward()
    for i, t in enumerate(inputs):
        assert np.allclose(np.array(t.grad.tolist()), numeric_grad(f, arrays, i), atol=1e-5), i


@pytest.mark.parametrize("name", ["mul", "div", "exp", "sin", "tanh", "sigmoid", "mm", "pow1"])
def test_double_backward_matches_numeric(name):
    f, shapes = CASES[name]
    arrays = [RNG.uniform(-1, 1, s) for s in shapes]

    def first_grad_sum(*ts):
        ts = [t.detach().requires_grad_() for t in ts]
        (g,) = torch.autograd.grad(f(*ts).sum(), ts[0], create_graph=True)
        return g

    inputs = [torch.tensor(a, requires_grad=True) for a in arrays]
    (g,) = torch.autograd.grad(f(*inputs).sum(), inputs[0], create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), inputs[0], materialize_grads=True)
    assert np.allclose(np.array(gg.tolist()), numeric_grad(first_grad_sum, arrays, 0), atol=1e-4)
