# backward() called on a leaf with inputs= naming another leaf: eager still runs the
# root's own tensor hook on the root gradient; compiled autograd skips it.
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
    calls = []
    x = torch.tensor(3.0, requires_grad=True)
    w = torch.tensor(1.0, requires_grad=True)
    x.register_hook(lambda g: calls.append("x hook") or g * 2)
    call(lambda: x.backward(inputs=[w]))
    return f"hooks run: {calls}, x.grad={x.grad}, w.grad={w.grad}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
