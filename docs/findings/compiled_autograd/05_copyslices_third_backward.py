# A third backward through an in-place-on-a-view node (CopySlices) whose graph the second
# backward freed: eager raises the backward-twice error, compiled autograd an INTERNAL ASSERT.
import torch
from torch._dynamo import compiled_autograd


def run() -> str:
    x = torch.rand(2, requires_grad=True)
    y = x.clone()
    y[0] = 0.0  # y.grad_fn is CopySlices
    y.sum().backward(retain_graph=True)
    y.sum().backward()  # frees the graph
    try:
        y.sum().backward()
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    return "ok"


print("torch", torch.__version__)
print("eager:   ", run())
with compiled_autograd._enable(lambda gm: gm):
    print("compiled:", run())
