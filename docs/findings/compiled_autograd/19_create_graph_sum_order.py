# A create_graph=True gradient that sums two contributions: eager's graph adds them in the
# order they arrived (AddBackward0's first edge is the MulBackward0 path), compiled
# autograd's in the other order. The values agree. From test_autograd.py test_grad.
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


def graph(fn) -> str:
    if fn is None:
        return "None"
    edges = ", ".join(graph(f) for f, _ in fn.next_functions)
    return type(fn).__name__ + (f"({edges})" if edges else "")


def run(call) -> str:
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = torch.tensor([[5.0, 6.0], [7.0, 8.0]], requires_grad=True)
    z = x ** 2 + y * x + y ** 2
    call(lambda: z.backward(torch.ones(2, 2), create_graph=True))
    grad_sum = 2 * x.grad + y.grad
    hv, = call(lambda: torch.autograd.grad(grad_sum, x, torch.ones(2, 2), create_graph=True))
    return f"{hv[0].tolist()} {graph(hv.grad_fn)}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
