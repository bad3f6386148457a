# With dynamic shapes (compiled autograd's `dynamic`, which torch.compile(dynamic=True)
# and the private _enable default turn on), a backward through unbind of a 2-row tensor
# after one of a 3-row tensor reuses the graph cached for 3 rows and fails. The
# supported path with torch.compile's default (static) shapes captures a second graph.
# `captures` counts the graphs compiled autograd captured: the failing backward captured
# none, it ran (or, under torch.compile, recompiled) the graph cached for 3 rows.
import torch
from torch._dynamo import compiled_autograd
from torch._dynamo.utils import counters

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


@torch.compile(backend="eager", dynamic=True)
def compiled_dynamic(step):
    return step()


def grad_of_first_row(call, rows: int) -> str:
    x = torch.ones(rows, 2, requires_grad=True)
    out = x.unbind()[0].sum()
    try:
        g, = call(lambda: torch.autograd.grad(out, x))
    except Exception as e:
        text = str(e).split("got RuntimeError('")[-1]  # dynamo wraps the capture's error
        return f"{type(e).__name__}: {text.splitlines()[0][:56]}"
    return f"ok {list(g.shape)}"


def run(call) -> str:
    counters.clear()
    first, second = grad_of_first_row(call, 3), grad_of_first_row(call, 2)
    captures = counters["compiled_autograd"]["captures"]
    return f"3 rows: {first}, then 2 rows: {second}; captures {captures}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled),
                   ("dynamic", compiled_dynamic), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
