# Errors raised while compiled autograd captures a graph carry other texts than eager's:
# a hook that changes a gradient's shape, and a custom Function's wrongly shaped gradient.
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


class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g[:2]


def attempt(call, loss) -> str:
    try:
        call(lambda: loss.backward())
    except Exception as e:
        text = str(e).split("got RuntimeError('")[-1]  # dynamo wraps the capture's error
        return text.splitlines()[0][:56]
    return "ok"


def run(call) -> str:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g[:2])
    return f"hook: {attempt(call, y.sum())} | Function: {attempt(call, Bad.apply(x).sum())}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
