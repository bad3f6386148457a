# fmax and fmin ignore a NaN input (fmax(1, nan) = 1), so that input's gradient is 0 there.
# torch 2.14.1 gives it the whole gradient (and the output's tangent is the NaN input's):
# the gradient w.r.t. the NaN input is 1 where finite differences give 0, and each element's
# gradient is counted twice. gradcheck, which compares with finite differences, shows it.
# torch 2.13 gives 0 to the NaN input and passes gradcheck.
import torch
import torch.autograd.forward_ad as fwAD

print("torch", torch.__version__)
nan = float("nan")
x = torch.tensor([1.0, nan], dtype=torch.float64, requires_grad=True)
y = torch.tensor([nan, 2.0], dtype=torch.float64, requires_grad=True)
for f in (torch.fmax, torch.fmin):
    out = f(x, y)
    gx, gy = torch.autograd.grad(out.sum(), (x, y))
    print(f"{f.__name__}(x, y) = {out.tolist()}: grad x {gx.tolist()}, grad y {gy.tolist()}")
    with fwAD.dual_level():
        dx = fwAD.make_dual(x.detach(), torch.tensor([10.0, 10.0], dtype=torch.float64))
        dy = fwAD.make_dual(y.detach(), torch.tensor([20.0, 20.0], dtype=torch.float64))
        tangent = fwAD.unpack_dual(f(dx, dy)).tangent
    print(f"  tangent with x' = 10, y' = 20: {tangent.tolist()}")
    try:
        torch.autograd.gradcheck(f, (x, y), check_forward_ad=True)
        print("  gradcheck: passes")
    except RuntimeError as e:  # GradcheckError
        print("  gradcheck:", str(e).splitlines()[0])
