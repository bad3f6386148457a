# A tensor hook on a leaf that assigns the leaf's .grad while the backward runs: eager's
# AccumulateGrad, which runs after the hook, adds the gradient to that .grad (10 + 3);
# compiled autograd decided at capture time that .grad was None and overwrites it (3).
# The hook runs in both; the final .grad silently differs.
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
    p = torch.tensor([1.0, 2.0], requires_grad=True)

    def hook(g):
        p.grad = torch.full_like(p, 10.0)
        return g

    p.register_hook(hook)
    loss = (p * 3).sum()
    call(lambda: loss.backward())
    return f"p.grad={p.grad.tolist()}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
