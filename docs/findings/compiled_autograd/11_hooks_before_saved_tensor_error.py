# A backward that fails because a saved tensor was modified in place: eager runs the hooks
# of the nodes it reaches before the failing one (here the hook on s), then raises;
# compiled autograd raises the same error while capturing the graph, before any hook runs.
import torch
from torch._dynamo import compiled_autograd


def run() -> str:
    calls = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    s = x.exp()  # exp saves its result, s
    s.register_hook(lambda g: calls.append("s hook"))
    with torch.no_grad():
        s.add_(1.0)
    try:
        (s * 2).sum().backward()
    except Exception as e:
        return f"hooks run: {calls}; {type(e).__name__}: {str(e)[:90]}..."
    return f"hooks run: {calls}; ok"


print("torch", torch.__version__)
print("eager:   ", run())
with compiled_autograd._enable(lambda gm: gm):
    print("compiled:", run())
