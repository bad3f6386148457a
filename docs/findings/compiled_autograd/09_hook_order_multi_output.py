# Tensor hooks on two outputs of one multi-output node (unbind, then a custom Function).
# Eager runs a node's tensor pre-hooks in registration order just before the node;
# compiled autograd's pass reorder_tensor_pre_hook_nodes moves each right after the node
# that computes its gradient, so here the hook of the output added last (u[2], b) runs
# first whichever was registered first. The last line runs _enable again with that pass
# replaced by one that does nothing: the registration order comes back.
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


class Split(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, ga, gb):
        return ga * 2 + gb * 3


def function_outputs(call) -> list[str]:
    calls = []
    a, b = Split.apply(torch.tensor([1.0, 2.0], requires_grad=True))
    a.register_hook(lambda g: calls.append("a"))
    b.register_hook(lambda g: calls.append("b"))
    loss = (a * 3 + b).sum()
    call(lambda: loss.backward())
    return calls


def run(call) -> str:
    return (f"u0 first: {order(call, 0)}, u2 first: {order(call, 2)}, "
            f"Function a first: {function_outputs(call)}")


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
compiled_autograd.reset()
compiled_autograd.AutogradCompilerInstance.reorder_tensor_pre_hook_nodes = lambda self: None
print(f"{'pass off:':10}", run(private))
