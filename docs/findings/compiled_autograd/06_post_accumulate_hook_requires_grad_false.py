# A leaf set to requires_grad_(False) after the graph used it: eager's AccumulateGrad checks
# requires_grad when it runs (no .grad) and still runs the leaf's post-accumulate hook;
# compiled autograd also leaves .grad alone but skips the hook.
import torch
from torch._dynamo import compiled_autograd


def run() -> str:
    calls = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda t: calls.append("x post-accumulate"))
    y = (x * w).sum()
    x.requires_grad_(False)
    y.backward()
    return f"hooks run: {calls}, x.grad={x.grad}, w.grad={w.grad}"


print("torch", torch.__version__)
print("eager:   ", run())
with compiled_autograd._enable(lambda gm: gm):
    print("compiled:", run())
