# What a backward that fails has done before failing. Eager runs nodes until the failing
# one: the tensor hooks before it run, and a retained gradient is accumulated. Compiled
# autograd finds the error while capturing, before anything runs (and, for an error in a
# custom Function's backward at run time, has already written a gradient for a
# non-leaf inputs= tensor that eager only writes when the backward completes).
import contextlib

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


class BadView(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g.view(7)  # fails: g has 2 elements


def saved_modified(call) -> str:
    calls = []
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    s = x.exp()  # exp saves its result, s
    s.register_hook(lambda g: calls.append("s hook"))
    with torch.no_grad():
        s.add_(1.0)
    loss = (s * 2).sum()
    with contextlib.suppress(RuntimeError):
        call(lambda: loss.backward())
    return f"hooks run {calls}"


def freed(call) -> str:
    a = torch.tensor(1.0, requires_grad=True)
    e = a.exp()
    e2 = e * 1
    e.backward(inputs=(e,))  # eager, frees ExpBackward's saved result; e.grad = 1
    with contextlib.suppress(RuntimeError):
        call(lambda: e2.backward())
    return f"e.grad {e.grad.item()}"


def function_error(call) -> str:
    t2 = torch.tensor([1.0, 2.0], requires_grad=True) * 1
    t3 = torch.tensor([3.0, 4.0], requires_grad=True) * 1
    loss = (BadView.apply(t2) * t3).sum()
    with contextlib.suppress(Exception):
        call(lambda: loss.backward(inputs=(t2, t3)))
    return f"t3.grad {t3.grad}"


def run(call) -> str:
    return f"{saved_modified(call)}; {freed(call)}; {function_error(call)}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
