# `.data` of another dtype assigned to a leaf after a graph used it: eager casts the
# gradient of the old graph to the leaf's old dtype; compiled autograd raises.
import torch
from torch._dynamo import compiled_autograd


def run() -> str:
    y = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    before = y.sum()
    y.data = torch.tensor([1.0, 2.0], dtype=torch.float32)
    try:
        before.backward()
    except Exception as e:
        return f"{type(e).__name__}: {str(e)[:200]}"
    return f"ok, y.grad={y.grad}"


print("torch", torch.__version__)
print("eager:   ", run())
with compiled_autograd._enable(lambda gm: gm):
    print("compiled:", run())
