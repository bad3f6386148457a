# A tensor hook on an output of a multi-output node that receives no gradient: eager calls
# it with None, compiled autograd crashes while capturing the graph.
import torch
from torch._dynamo import compiled_autograd


def run() -> str:
    seen = []
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    u = (a * 1).unbind(0)
    u[1].register_hook(lambda g: seen.append(g))
    try:
        u[0].backward()
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return f"ok, hook received {seen}, a.grad={a.grad}"


print("torch", torch.__version__)
print("eager:   ", run())
with compiled_autograd._enable(lambda gm: gm):
    print("compiled:", run())
