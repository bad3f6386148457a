# Hooks on two outputs of one multi-output node (unbind) run in a different order.
import torch
from torch._dynamo import compiled_autograd


def run() -> list[str]:
    calls = []
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    u = (a * 1).unbind(0)
    u[0].register_hook(lambda g: calls.append("u0"))
    u[2].register_hook(lambda g: calls.append("u2"))
    (u[0] * 3 + u[2]).backward()
    return calls


print("torch", torch.__version__)
print("eager:   ", run())
with compiled_autograd._enable(lambda gm: gm):  # capture only, no torch.compile
    print("compiled:", run())
