# Gradients that changed from torch 2.13 to 2.14 at ties, at clamp boundaries and against a
# NaN (derivatives.yaml of each release: torchgen/packaged/autograd/derivatives.yaml in
# the installed wheel). 2.14 splits a tie evenly between fmax/fmin's or a Tensor bound's
# two inputs, and gives a scalar clamp bound's boundary point a zero gradient; its fmax and
# fmin formulas are maximum's and minimum's, with no NaN term, so fmax(1, nan) = 1 sends
# its gradient to both inputs and its tangent is the NaN input's. native_group_norm's
# input gets a gradient from its mean or rstd alone in 2.14; in 2.13 that was None.
import torch
import torch.autograd.forward_ad as fwAD

print("torch", torch.__version__)
nan = float("nan")


def grads(f, *values):
    ins = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    g = torch.autograd.grad(f(*ins).sum(), ins, allow_unused=True)
    return [None if t is None else t.tolist() for t in g]


tie_nan = ([1.0, 1.0, nan], [1.0, nan, 1.0])
print("fmax(self, other)   grads at (1,1), (1,nan), (nan,1):", grads(torch.fmax, *tie_nan))
print("fmin(self, other)   grads at (1,1), (1,nan), (nan,1):", grads(torch.fmin, *tie_nan))
print("clamp_min(x, 0.0)   grad of x at x = 0:", grads(lambda x: torch.clamp_min(x, 0.0), [0.0]))
print("clamp(x, max=1.0)   grad of x at x = 1:", grads(lambda x: torch.clamp(x, max=1.0), [1.0]))
print("clamp_min(x, m)     grads at x = m = 0:", grads(torch.clamp_min, [0.0], [0.0]))
with fwAD.dual_level():
    p = fwAD.make_dual(torch.tensor([1.0]), torch.tensor([10.0]))
    q = fwAD.make_dual(torch.tensor([nan]), torch.tensor([20.0]))
    out = torch.fmax(p, q)
    print("fmax(1, nan) with tangents 10, 20: value", out.tolist(),
          "tangent", fwAD.unpack_dual(out).tangent.tolist())
torch.manual_seed(0)
x = torch.randn(2, 4, 3, dtype=torch.float64, requires_grad=True)
_, mean, rstd = torch.native_group_norm(x, None, None, 2, 4, 3, 2, 1e-05)
g_rstd = torch.autograd.grad(rstd.sum(), x, allow_unused=True)[0]
print("native_group_norm: grad of x from rstd alone:",
      None if g_rstd is None else f"|g|_1 = {g_rstd.abs().sum().item():.6f}")
