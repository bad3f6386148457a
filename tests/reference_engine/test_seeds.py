"""The seed programs: expected values by hand, facts checked against torch 2.13."""

import warnings

import numpy as np
import pytest

import reference_engine as torch
from reference_engine import messages


def close(t, expected):
    return np.allclose(np.asarray(t.tolist(), dtype=float), expected)


def test_seed1_backward_twice_and_retain():
    data = [[0.1, 0.2, 0.3, 0.4]]
    a = torch.autograd.Variable(torch.tensor(data), requires_grad=True)
    c = (a**2) * 2
    d, e = c.mean(), c.sum()
    d.backward()
    with pytest.raises(RuntimeError) as err:
        e.backward()
    assert str(err.value) == messages.BACKWARD_TWICE

    a = torch.autograd.Variable(torch.tensor(data), requires_grad=True)
    c = (a**2) * 2
    c.mean().backward(retain_graph=True)
    c.sum().backward()
    assert close(a.grad, 5 * np.array(data))  # 4a/4 + 4a


def test_seed1_non_leaf_grad_and_retain_grad():
    x = torch.ones(2, requires_grad=True)
    b = x * 2
    with pytest.warns(UserWarning) as rec:
        assert b.grad is None
    assert str(rec[0].message) == messages.NON_LEAF_GRAD_ACCESS
    b.retain_grad()
    b.mean().backward()
    assert close(b.grad, [0.5, 0.5])
    lin = torch.nn.Linear(3, 2)
    assert lin.weight.is_leaf and lin.bias.is_leaf
    assert lin.weight._version == 1 and lin.bias._version == 1
    assert type(lin.weight).__name__ == "Parameter"


def test_seed2_linear_regression_and_cat_gradient():
    X = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    Y = torch.tensor([[1.0], [2.0]])
    w = torch.tensor([[3.0, 1.0]], requires_grad=True)
    b = torch.tensor([[3.0]], requires_grad=True)
    loss = torch.mean(torch.pow(X @ w.t() + b - Y, 2))
    loss.backward()
    r = np.array([[1, 2], [3, 4]]) @ np.array([3, 1]) + 3 - np.array([1, 2])  # residuals
    assert close(w.grad, [(r[:, None] * np.array([[1, 2], [3, 4]])).mean(0) * 2])
    assert close(b.grad, [[r.mean() * 2]])

    w1 = torch.tensor([1.0], requires_grad=True)
    x1 = torch.tensor([2.0], requires_grad=True)
    a, b1 = torch.add(w1, x1), torch.add(w1, 1)
    out = torch.cat([torch.mul(a, b1), torch.add(a, b1)], dim=0)
    assert type(out.grad_fn).__name__ == "CatBackward0"
    out.backward(gradient=torch.tensor([1.0, 2.0]))
    assert close(w1.grad, [9.0])  # (b+a) + 2*2
    assert close(x1.grad, [4.0])  # b + 2


def test_seed2_custom_relu():
    class MyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input

    x = torch.tensor([-1.0, 2.0, 3.0], requires_grad=True)
    y = MyReLU.apply(x)
    assert type(y.grad_fn).__name__ == "MyReLUBackward"
    y.sum().backward()
    assert close(x.grad, [0, 1, 1])
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


def test_seed2_hooks_and_grads():
    w = torch.tensor([1.0], requires_grad=True)
    x = torch.tensor([2.0], requires_grad=True)
    a = torch.add(w, x)
    b = torch.add(w, 1)
    seen = []
    a.register_hook(lambda g: seen.append(("a", g.item())))
    b.register_hook(lambda g: seen.append(("b", g.item())))
    torch.mul(a, b).backward()
    # b's node was created after a's, so it runs first, like torch's ready queue.
    assert seen == [("b", 3.0), ("a", 2.0)]
    assert close(w.grad, [5.0])

    x = torch.tensor([3.0], requires_grad=True)
    (g1,) = torch.autograd.grad(torch.pow(x, 2), x, create_graph=True)
    (g2,) = torch.autograd.grad(g1, x)
    assert close(g1, [6.0]) and close(g2, [2.0])

    xa = torch.tensor([2.0], requires_grad=True)
    xb = torch.tensor([3.0], requires_grad=True)
    ga, gb = torch.autograd.grad([xa * xb, xa + xb], [xa, xb])
    assert close(ga, [4.0]) and close(gb, [3.0])


def test_seed3_graph_values_and_names():
    inp = torch.ones(2, 2, requires_grad=True)
    w1, w2, w3 = (torch.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
    l1 = inp * w1
    l2, l3 = l1 + w2, l1 * w3
    loss = (l2 * l3).mean()
    l1.retain_grad()
    loss.backward()
    assert close(w1.grad, 28) and close(w2.grad, 8) and close(w3.grad, 10)
    assert close(inp.grad, np.full((2, 2), 14.0)) and close(l1.grad, np.full((2, 2), 7.0))
    assert type(inp.exp().grad_fn).__name__ == "ExpBackward0"
    assert type(loss.grad_fn).__name__ == "MeanBackward0"
    assert type(l4_fn := (l2 * l3).grad_fn).__name__ == "MulBackward0", l4_fn


def test_seed3_version_error_and_leaf_inplace():
    a = torch.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    loss = (b * b).mean()
    b[0] = 1000.0
    assert b._version == 1 and b.grad_fn.name() == "torch::autograd::CopySlices"
    with pytest.raises(RuntimeError) as err:
        loss.backward()
    assert str(err.value) == messages.modified_by_inplace(
        "torch.FloatTensor [2]", "output 0 of torch::autograd::CopySlices", 1, 0)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        torch.tensor([10.0, 5.0, 2.0, 3.0], requires_grad=True).add_(10.0)


def test_seed3_cuda_label():
    x = torch.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    assert str(x.device) == "cuda:0" and x.is_cuda
    (x * 2).sum().backward()
    assert str(x.grad.device) == "cuda:0"
    with pytest.raises(RuntimeError, match="same device"):
        x + torch.ones(2)
    assert str((x + torch.tensor(1.0)).device) == "cuda:0"  # 0-dim cpu joins any device
    y = torch.tensor([1.0], requires_grad=True).cuda()
    assert type(y.grad_fn).__name__ == "ToCopyBackward0"


def test_seed4_data_replacement_keeps_graph():
    a = torch.tensor([2.0, 1.0], requires_grad=True)
    loss2 = (a**2).mean() ** 2
    loss2.data = torch.tensor([3.4])
    assert loss2.shape == (1,) and type(loss2.grad_fn).__name__ == "PowBackward0"
    loss2.backward()
    assert close(a.grad, [10.0, 5.0])


def test_seed4_signed_zeros():
    w = torch.tensor([[1.0, 2.0], [0.0, 2.0]], requires_grad=True)
    b = torch.tensor([1.0, 1.0], requires_grad=True)
    x, y = torch.tensor([1.0, 1.0]), torch.tensor([3.0, 3.0])
    (y - (w @ x + b)).pow(2).mean().backward()
    assert w.grad.tolist() == [[1, 1], [0, 0]]
    assert np.signbit(np.array(w.grad.tolist())).tolist() == [[False, False], [True, True]]
    assert np.signbit(np.array(b.grad.tolist())).tolist() == [False, True]
    assert b.grad._version == 1 and w.grad._version == 0  # copied vs stolen, as in torch


def test_seed5_mm_accumulation_and_jacobian():
    x = torch.autograd.Variable(torch.ones(2, 3), requires_grad=True)
    a = torch.autograd.Variable(torch.ones(3, 4))
    out = torch.mm(x, a)
    g = torch.tensor([[1.0, 2, 3, 4], [5, 6, 7, 8]])
    out.backward(g, retain_graph=True)
    assert close(x.grad, [[10] * 3, [26] * 3])
    first = x.grad
    out.backward(g, retain_graph=True)
    assert x.grad is first and close(x.grad, [[20] * 3, [52] * 3]) and x.grad._version == 1
    x.grad.zero_()
    jac = []
    for i in range(2):
        for j in range(4):
            onehot = torch.zeros(2, 4)
            onehot[i, j] = 1.0
            x.grad.zero_()
            out.backward(onehot, retain_graph=True)
            jac.append(x.grad.tolist())
    assert close(torch.tensor(jac), [[[1] * 3 if r == i else [0] * 3 for r in range(2)]
                                     for i in range(2) for _ in range(4)])


def test_no_warning_for_leaf_grad():
    x = torch.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is None
