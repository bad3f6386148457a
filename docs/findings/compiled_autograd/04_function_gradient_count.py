# A custom Function whose backward returns the wrong number of gradients: eager raises
# "returned an incorrect number of gradients"; compiled autograd accepts too many
# silently and fails on too few with an IndexError.
import contextlib
import io

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


class TooMany(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g, g  # one input, two gradients


class TooFew(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        return x * y

    @staticmethod
    def backward(ctx, g):
        return g  # two inputs, one gradient


def attempt(call, fn, n) -> str:
    inputs = [torch.tensor([1.0, 2.0], requires_grad=True) for _ in range(n)]
    loss = fn.apply(*inputs).sum()
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # torch.fx prints the failing graph
            call(lambda: loss.backward())
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0][:100]}"
    return f"ok, grad {inputs[0].grad.tolist()}"


def run(call) -> str:
    return f"too many: {attempt(call, TooMany, 1)} | too few: {attempt(call, TooFew, 2)}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
