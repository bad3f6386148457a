# A custom Function returns a gradient for a non-tensor input (a Python float): eager
# raises, compiled autograd drops it silently.
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


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * 3.0, g  # k is a float: its gradient must be None


def run(call) -> str:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = Scale.apply(x, 3.0).sum()
    try:
        call(lambda: loss.backward())
    except Exception as e:
        return f"{type(e).__name__}: {str(e)[:110]}..."
    return f"ok, x.grad={x.grad.tolist()}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
