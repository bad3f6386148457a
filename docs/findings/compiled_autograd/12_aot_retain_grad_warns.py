# Backend aot_eager (a torch.compile backend): a backward through a tensor with retain_grad()
# gives a dynamo UserWarning about a builtin it cannot trace; eager gives none. (Run in a
# fresh process: dynamo gives the warning once per process.)
import warnings

import torch
from torch._dynamo import compiled_autograd


def run() -> list[str]:
    a = torch.rand(1, 4, requires_grad=True)
    b = a ** 2
    b.retain_grad()
    d = (b * 2).mean()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d.backward()
    return [f"{w.category.__name__}: {str(w.message)[:120]}..." for w in caught]


def aot_eager(gm):
    return torch.compile(gm, backend="aot_eager", dynamic=True)


print("torch", torch.__version__)
print("eager:              ", run())
with compiled_autograd._enable(aot_eager):
    print("compiled, aot_eager:", run())
