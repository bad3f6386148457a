# A post-accumulate-grad hook that returns its own argument (the leaf): eager accepts it;
# compiled autograd's call_hook raises for any hook result but None.
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
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda leaf: leaf)
    loss = x.sum()
    try:
        call(lambda: loss.backward())
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"
    return f"ok, x.grad={x.grad.tolist()}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
