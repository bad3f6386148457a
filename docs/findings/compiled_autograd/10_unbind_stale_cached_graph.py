# A backward through unbind of a 2-row tensor after one through unbind of a 3-row tensor:
# compiled autograd's cache takes the second graph for the first and fails; with its cache
# cleared first, the same backward works.
import torch
from torch._dynamo import compiled_autograd


def run(rows: int) -> str:
    x = torch.ones(rows, 2, requires_grad=True)
    try:
        g, = torch.autograd.grad(x.unbind()[0].sum(), x)
    except Exception as e:
        return f"{type(e).__name__}: {str(e)[:150]}"
    return f"ok, grad of shape {list(g.shape)}"


print("torch", torch.__version__)
print("eager:    3 rows:", run(3), "| then 2 rows:", run(2))
with compiled_autograd._enable(lambda gm: gm):
    print("compiled: 3 rows:", run(3), "| then 2 rows:", run(2))
compiled_autograd.reset()  # clears compiled autograd's cache
with compiled_autograd._enable(lambda gm: gm):
    print("compiled, cache cleared: 2 rows:", run(2))
