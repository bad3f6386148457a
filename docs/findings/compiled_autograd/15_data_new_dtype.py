# After `.data` of another dtype (float32) replaces a float64 leaf's data, a graph built
# before gives a float64 gradient. Eager casts nothing: it leaves a float32 tensor holding
# a float64 .grad, a state its own .grad setter refuses; compiled autograd applies that
# setter's check and raises. A real cast (a Function returning a float64 gradient for a
# float32 input) gives the same float32 .grad on both.
import contextlib
import io

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


class Float64Grad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g.double()


def data_case(call) -> str:
    y = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    before = y.sum()
    y.data = torch.tensor([1.0, 2.0], dtype=torch.float32)
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # torch.fx prints the failing graph
            call(lambda: before.backward())
    except Exception as e:
        return f"{type(e).__name__}: {str(e)[:68]}..."
    state = f"y {y.dtype}, y.grad {y.grad.dtype}"
    try:
        y.grad = y.grad.clone()  # the setter's own check on that state
    except RuntimeError as e:
        return f"{state}; setting that .grad again: {str(e)[:30]}..."
    return state


def cast_case(call) -> str:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = Float64Grad.apply(x).sum()
    call(lambda: loss.backward())
    return f"x.grad {x.grad.dtype}"


def run(call) -> str:
    return f"{data_case(call)} | Function cast: {cast_case(call)}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
