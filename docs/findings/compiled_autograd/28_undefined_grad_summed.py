# Two outputs that share an input (x + y and y * 1), the first given an undefined gradient
# (torch._C._functions.UndefinedGrad, as gradcheck's undefined-grad check does for each
# output of a function of several): eager sums y's defined and undefined contributions
# (InputBuffer::add skips the undefined one) and gives y the other output's gradient;
# compiled autograd's captured graph adds the None and fails with a TypeError.
import torch
from torch._dynamo import compiled_autograd

torch._dynamo.config.compiled_autograd = True


@torch.compile(backend="eager")
def compiled(step):
    return step()  # dynamo breaks the graph at the backward call, which compiled autograd runs


def eager(step):
    return step()


def private(step):  # the private entry point with no compiler: capture and runtime alone
    with compiled_autograd._enable(lambda gm: gm):
        return step()


def step():
    x = torch.ones(2, dtype=torch.double, requires_grad=True)
    y = torch.ones(2, dtype=torch.double, requires_grad=True)
    out0, out1 = x + y, y * 1
    undefined = torch._C._functions.UndefinedGrad()(out0)
    ones = torch.ones(2, dtype=torch.double)
    return torch.autograd.grad([undefined, out1], (x, y), [ones, ones], allow_unused=True)


print("torch", torch.__version__)
for name, run in (("eager", eager), ("compiled", compiled), ("private", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    try:
        print(f"{name}: {run(step)}")
    except Exception as e:  # the script reports what each mode raises
        print(f"{name}: {type(e).__name__}: {str(e).splitlines()[0]}")
