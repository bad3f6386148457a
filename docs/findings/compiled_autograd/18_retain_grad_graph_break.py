# A backward through a tensor with retain_grad() under compiled autograd with a dynamo
# backend: dynamo cannot trace the C++ retains_grad hook (call_cpp_tensor_pre_hooks) and
# warns, breaking the backward graph; eager and the no-compiler path give no warning.
# pytorch/pytorch#138901. (Dynamo warns once per process: run in a fresh one.)
import warnings

import torch
from torch._dynamo import compiled_autograd

# The supported switch: a backward called inside a torch.compile'd function runs under
# compiled autograd, and its captured graph is compiled with that function's backend.
torch._dynamo.config.compiled_autograd = True


@torch.compile(backend="eager")
def compiled(step):
    return step()  # dynamo breaks the graph at the backward call, which compiled autograd runs


def eager(step):
    return step()


def private(step):  # the private entry point with no compiler: capture and runtime alone
    with compiled_autograd._enable(lambda gm: gm):
        return step()


def run(call) -> str:
    a = torch.tensor([[1.0, 2.0, 3.0, 4.0]], requires_grad=True)
    b = a ** 2
    b.retain_grad()
    d = (b * 2).mean()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(lambda: d.backward())
    return f"b.grad={b.grad.tolist()}, warnings: {[str(w.message)[:75] + '...' for w in caught]}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
