# A second-order gradient through a compiled function whose saved tensors do not require
# grad (exp saves its result, computed in the graph): eager's create_graph gradient is
# exp(x) with a graph to x, so the Hessian of exp(x).sum() is diag(exp(x)). Compiled, the
# gradient requires grad but its graph reaches only the dummy input AOTAutograd's
# _double_backward adds, not x: the double-backward error is never raised, autograd.grad
# finds x unused, and torch.autograd.functional.hessian and hvp (allow_unused inside)
# return zeros, silently.
import torch

exp = torch.compile(lambda a: a.exp(), backend="aot_eager", fullgraph=True)


def hessian(f) -> str:
    x = torch.tensor([0.25, 0.5])
    h = torch.autograd.functional.hessian(lambda a: f(a).sum(), x)
    _, hv = torch.autograd.functional.hvp(lambda a: f(a).sum(), x, torch.ones(2))
    return f"hessian={h.diagonal().tolist()} (diagonal), hvp={hv.tolist()}"


def second_order(f) -> str:
    x = torch.tensor(0.25, requires_grad=True)
    g, = torch.autograd.grad(f(x), x, create_graph=True)
    try:
        gg, = torch.autograd.grad(g, x)
    except Exception as e:
        return f"g.requires_grad={g.requires_grad}, {type(e).__name__}: {str(e)[:56]}..."
    return f"g.requires_grad={g.requires_grad}, gg={gg.item():.4f}"


print("torch", torch.__version__)
print("eager:    ", hessian(torch.exp))
print("aot_eager:", hessian(exp))
print("eager:    ", second_order(torch.exp))
print("aot_eager:", second_order(exp))
