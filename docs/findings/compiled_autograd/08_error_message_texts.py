# Errors raised while compiled autograd captures a graph carry other texts than eager's:
# a hook that changes a gradient's shape, and a custom Function's wrongly shaped gradient.
import torch
from torch._dynamo import compiled_autograd


class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g[:2]


def hook_case() -> str:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g[:2])
    try:
        y.sum().backward()
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return "ok"


def function_case() -> str:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    try:
        Bad.apply(x).sum().backward()
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return "ok"


print("torch", torch.__version__)
print("eager    hook:    ", hook_case())
print("eager    Function:", function_case())
with compiled_autograd._enable(lambda gm: gm):
    print("compiled hook:    ", hook_case())
    print("compiled Function:", function_case())
