# A custom Function's `vjp`, torch's documented alias of `backward` (BackwardCFunction.apply
# calls vjp when the class overrides it, and refuses a class that overrides both): under
# compiled autograd vjp is never called. A class that defines vjp alone fails at backward
# with "You must implement either the backward or vjp method", and one that defines both
# runs its backward where eager raises.
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


class VjpOnly(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def vjp(ctx, g):
        return g * 3


class BackwardAndVjp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g * 2

    @staticmethod
    def vjp(ctx, g):
        return g * 3


def run(call) -> str:
    results = []
    for fn in (VjpOnly, BackwardAndVjp):
        x = torch.ones(1, requires_grad=True)
        try:
            call(lambda fn=fn, x=x: fn.apply(x).sum().backward())
            results.append(f"{fn.__name__}: x.grad {x.grad.tolist()}")
        except RuntimeError as e:  # NotImplementedError is one
            results.append(f"{fn.__name__}: {type(e).__name__}: {str(e)[:48]}...")
    return "; ".join(results)


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
