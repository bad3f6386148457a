# A custom Function whose backward returns the wrong number of gradients: eager raises
# "returned an incorrect number of gradients"; compiled autograd accepts too many silently
# and fails on too few with an IndexError.
import torch
from torch._dynamo import compiled_autograd


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


def run(fn, *inputs) -> str:
    try:
        fn.apply(*inputs).sum().backward()
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"
    return f"ok, grad {inputs[0].grad}"


def inputs(n):
    return [torch.tensor([1.0, 2.0], requires_grad=True) for _ in range(n)]


print("torch", torch.__version__)
print("eager    too many:", run(TooMany, *inputs(1)))
print("eager    too few: ", run(TooFew, *inputs(2)))
with compiled_autograd._enable(lambda gm: gm):
    print("compiled too many:", run(TooMany, *inputs(1)))
    print("compiled too few: ", run(TooFew, *inputs(2)))
