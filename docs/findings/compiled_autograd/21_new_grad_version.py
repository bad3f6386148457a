# The version counter (_version) of a .grad the backward has just created. Eager's is 0
# when AccumulateGrad takes the incoming gradient buffer as it is (nn.Linear's weight and
# bias, p * 2) and 1 when the buffer was made by an in-place sum of two contributions
# (r * r) or copied (the expanded gradient of p.sum()): it depends on how the graph made
# the gradient. Under compiled autograd it is 1 in every case. The values agree.
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
    torch.manual_seed(0)
    fc = torch.nn.Linear(3, 2)
    loss = fc(torch.ones(1, 3)).sum()
    call(lambda: loss.backward())
    versions = [f"Linear weight {fc.weight.grad._version}, bias {fc.bias.grad._version}"]
    for name, f in (("p * 2", lambda p: p * 2), ("r * r", lambda r: r * r),
                    ("p.sum()", lambda p: p)):
        p = torch.ones(3, requires_grad=True)
        loss = f(p).sum()
        call(loss.backward)
        versions.append(f"{name} {p.grad._version}")
    return "; ".join(versions)


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
