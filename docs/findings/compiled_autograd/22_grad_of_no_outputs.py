# torch.autograd.grad with no outputs (as gradcheck calls it for a function that returns
# ()): eager returns a None for each input (allow_unused=True); compiled autograd fails
# with an IndexError while it starts capturing, where it reads the first input.
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
    x = torch.ones(1, requires_grad=True)
    try:
        grads = call(lambda: torch.autograd.grad((), (x,), (), allow_unused=True))
        grad_of_nothing = f"ok, {grads}"
    except IndexError as e:
        grad_of_nothing = f"IndexError: {e}"
    try:
        passed = call(lambda: torch.autograd.gradcheck(lambda x: (), (x,), fast_mode=False))
        gradcheck = f"ok, {passed}"
    except IndexError as e:
        gradcheck = f"IndexError: {e}"
    return f"grad of no outputs: {grad_of_nothing} | gradcheck of lambda x: (): {gradcheck}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
