# A final callback queued from a custom Function's backward with
# Variable._execution_engine.queue_callback (as DDP and FSDP do), which queues another:
# eager runs both. Compiled autograd through torch.compile (fullgraph=False, the default)
# refuses it with an AssertionError; with the private entry point and a compiler that is
# not dynamo, the captured graph's callback stub does nothing and neither runs, silently.
import torch
from torch._dynamo import compiled_autograd
from torch.autograd import Variable

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

    def second():
        calls.append("second")

    def first():
        calls.append("first")
        Variable._execution_engine.queue_callback(second)

    class Queue(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            Variable._execution_engine.queue_callback(first)
            return g

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = Queue.apply(x).sum()
    try:
        call(lambda: loss.backward())
    except Exception as e:
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"
    return f"callbacks run: {calls}, x.grad={x.grad.tolist()}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
