# Inside a custom Function's backward: eager passes the Function's backward node as ctx
# (type MyFnBackward) and calls a saved tensor's unpack hook when backward reads
# ctx.saved_tensors; compiled autograd passes its FakeBackwardCFunction and calls the
# unpack hook while capturing, before backward runs.
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


events = []


class MyFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 1

    @staticmethod
    def backward(ctx, g):
        events.append(f"backward(ctx: {type(ctx).__name__})")
        x, = ctx.saved_tensors
        return g * x / x


def run(call) -> str:
    events.clear()
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    y = MyFn.apply(a)
    saved_x = y.grad_fn._raw_saved_tensors[0]
    saved_x.register_hooks(lambda t: t, lambda t: events.append("unpack") or t)
    loss = y.sum()
    call(lambda: loss.backward())
    return f"{events}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
