# A custom Function whose backward returns None for its input, after another custom
# Function: eager hands the second Function's backward zeros (ctx.set_materialize_grads
# defaults to True) and the leaf gets a zero .grad; under compiled autograd that backward
# receives None and the leaf's .grad stays None, without an error. A backward that uses
# its gradient (g * 2) then fails with TypeError instead.
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


received = []


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        received.append(None if g is None else g.tolist())
        return g


class Doubling(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g * 2  # needs a tensor: eager materializes one


class NoGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return None  # an undefined gradient for x


def run(call) -> str:
    received.clear()
    x = torch.ones(2, requires_grad=True)
    loss = NoGradient.apply(Identity.apply(x)).sum()
    call(lambda: loss.backward())
    first = f"backward received {received}, x.grad={x.grad}"
    x = torch.ones(2, requires_grad=True)
    loss = NoGradient.apply(Doubling.apply(x)).sum()
    try:
        call(lambda: loss.backward())
        second = f"ok, x.grad={x.grad}"
    except TypeError as e:
        second = f"TypeError: {e}"
    return f"{first} | g * 2: {second}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
