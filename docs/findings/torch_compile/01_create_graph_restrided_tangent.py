# A function compiled by torch.compile (AOTAutograd) whose output receives, in a
# create_graph=True backward, a gradient that requires grad and has other strides than the
# output (here `w` expanded by sum's backward, stride 0): eager gives the gradient;
# compiled, AOTAutograd's backward prologue restrides the tangent into a new tensor made
# with requires_grad=True and copies into it in place, which autograd refuses.
import torch

square = torch.compile(lambda a: a * a, backend="aot_eager", fullgraph=True)


def run(f) -> str:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor(3.0, requires_grad=True)
    loss = f(x).sum() * w
    try:
        g, = torch.autograd.grad(loss, x, create_graph=True)
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"
    return f"ok g={g.tolist()}, g.requires_grad={g.requires_grad}"


def without_create_graph(f) -> str:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor(3.0, requires_grad=True)
    g, = torch.autograd.grad(f(x).sum() * w, x)
    return f"g={g.tolist()}"


print("torch", torch.__version__)
print("eager:    ", run(lambda a: a * a))
print("aot_eager:", run(square))
print("aot_eager, create_graph=False:", without_create_graph(square))
