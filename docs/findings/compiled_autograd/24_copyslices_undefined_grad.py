# A CopySlices node (the base's grad_fn after an in-place op on a view) that receives an
# undefined gradient, from a custom Function whose backward returns None: eager passes it
# on (CopySlices::apply_impl: an undefined grad gives undefined grads) and the leaves' .grad
# stay None; compiled autograd captured the node with a defined (fake) gradient and fails
# at run time on the None with an AttributeError.
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


class DropGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return None  # an undefined gradient for a


def run(call) -> str:
    x = torch.ones(3, requires_grad=True)
    w = torch.full((1,), 3.0, requires_grad=True)
    b = x.clone()
    b[:1].mul_(w)  # b.grad_fn is now CopySlices
    loss = DropGrad.apply(b).sum()
    try:
        call(lambda: loss.backward())
        return f"ok, x.grad={x.grad}, w.grad={w.grad}"
    except AttributeError as e:
        return f"AttributeError: {e}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
