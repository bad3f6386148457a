# torch.autograd.grad(z, inputs=(y,)) with y a non-leaf, without retain_graph, then a
# gradient through the part of the graph below y: eager ran only the nodes between z and y
# and freed only their saved tensors, so the second call works. Compiled autograd also
# frees the saved tensors of y's own grad_fn, a node it did not run, so the second call
# fails with the backward-twice error.
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


def saved(node) -> str:
    try:
        _ = node._saved_self  # reading it raises once it is freed
        return "kept"
    except RuntimeError:  # the backward-twice error: its saved tensors were freed
        return "freed"


def run(call) -> str:
    x = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)
    s = x.sin()
    y = s.cos()
    z = y.sin().cos()
    gy, = call(lambda: torch.autograd.grad(z, inputs=(y,), grad_outputs=(torch.ones(3),)))
    state = f"saved tensors of y.grad_fn {saved(y.grad_fn)}, of s.grad_fn {saved(s.grad_fn)}"
    try:
        gx, = call(lambda: torch.autograd.grad(y, inputs=(x,), grad_outputs=(gy,)))
        second = f"gx={[round(v, 4) for v in gx.tolist()]}"
    except RuntimeError as e:
        second = f"RuntimeError: {str(e)[:58]}..."
    return f"{state} | {second}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
