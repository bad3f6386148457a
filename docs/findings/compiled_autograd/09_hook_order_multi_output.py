# Tensor hooks on two outputs of one multi-output node (unbind). Eager runs a node's
# tensor pre-hooks in registration order just before the node; compiled autograd's pass
# reorder_tensor_pre_hook_nodes moves each right after the node that computes its
# gradient, so here u[2]'s hook runs first whichever was registered first.
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


def order(call, first: int) -> list[str]:
    calls = []
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    u = (a * 1).unbind(0)
    for i in (first, 2 - first):
        u[i].register_hook(lambda g, i=i: calls.append(f"u{i}"))
    loss = u[0] * 3 + u[2]
    call(lambda: loss.backward())
    return calls


def run(call) -> str:
    return f"u0 first: {order(call, 0)}, u2 first: {order(call, 2)}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
