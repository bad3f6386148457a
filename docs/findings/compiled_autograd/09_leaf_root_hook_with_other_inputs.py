# backward() called on a leaf with inputs= naming another leaf (not in its graph): eager
# still runs the root's own tensor hook on the root gradient; compiled autograd skips it.
# With inputs=[x] both run it.
import torch
from torch._dynamo import compiled_autograd


def run() -> str:
    calls = []
    x = torch.tensor(3.0, requires_grad=True)
    w = torch.tensor(1.0, requires_grad=True)
    x.register_hook(lambda g: calls.append("x hook") or g * 2)
    x.backward(inputs=[w])
    return f"hooks run: {calls}, x.grad={x.grad}, w.grad={w.grad}"


print("torch", torch.__version__)
print("eager:   ", run())
with compiled_autograd._enable(lambda gm: gm):
    print("compiled:", run())
