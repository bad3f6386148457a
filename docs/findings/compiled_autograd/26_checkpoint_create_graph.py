# A create_graph=True gradient through a non-reentrant activation checkpoint
# (torch.utils.checkpoint.checkpoint(..., use_reentrant=False), which saves through
# saved_tensors_hooks and recomputes the saved tensors in its unpack hook): eager's
# gradient has a graph and its own gradient (the second derivative) follows; under
# compiled autograd it does not require grad, and the second derivative fails. Finding 1's
# cause in its most common form. Without the checkpoint both agree.
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


from torch.utils.checkpoint import checkpoint  # noqa: E402


def f(x):
    return x.sin().exp().sin()


def run(call) -> str:
    x = torch.tensor(0.5, requires_grad=True)
    y = checkpoint(f, x, use_reentrant=False)
    g, = call(lambda: torch.autograd.grad(y, x, create_graph=True))
    first = f"dy/dx={g.item():.4f} requires_grad={g.requires_grad}"
    try:
        gg, = call(lambda: torch.autograd.grad(g, x))
        second = f"d2y/dx2={gg.item():.4f}"
    except RuntimeError as e:
        second = f"RuntimeError: {e}"
    return f"{first} | {second}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
