# A custom Function returns a gradient for a non-tensor input (a Python float): eager
# raises, compiled autograd drops it silently.
import torch
from torch._dynamo import compiled_autograd


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * 3.0, g  # k is a float: its gradient must be None


def run() -> str:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    try:
        Scale.apply(x, 3.0).sum().backward()
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return f"ok, x.grad={x.grad}"


print("torch", torch.__version__)
print("eager:   ", run())
with compiled_autograd._enable(lambda gm: gm):
    print("compiled:", run())
