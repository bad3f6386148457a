# A saved_tensors_hooks pack hook that returns a new tensor (here t * 1), then a
# create_graph=True gradient: eager's gradient has a graph and the double backward works;
# under compiled autograd it has none (requires_grad=False), so the second-order term is
# lost without an error. Without the hooks both agree.
import torch
from torch._dynamo import compiled_autograd

# The supported switch: a backward called inside a torch.compile'd function runs under
# compiled autograd, and its captured graph is compiled with that function's backend.
torch._dynamo.config.compiled_autograd = True


@torch.compile(backend="eager")
def compiled(step):
    return step()  # dynamo breaks the graph at the backward call, which compiled autograd runs


def eager(step):
    return step()


def private(step):  # the private entry point with no compiler: capture and runtime alone
    with compiled_autograd._enable(lambda gm: gm):
        return step()


def run(call) -> str:
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        y = (w ** 3).sum()
    g, = call(lambda: torch.autograd.grad(y, w, create_graph=True))
    if g.requires_grad:
        g.sum().backward()  # d/dw of sum(3 w^2) = 6 w
    return f"g={g.tolist()}, g.requires_grad={g.requires_grad}, w.grad={w.grad}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
