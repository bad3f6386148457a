# The version counter (_version) of a gradient torch.autograd.grad returns from a double
# backward, as torch.autograd.functional.jvp computes J·v (the gradient of a vjp with
# respect to its grad_outputs). Eager's is 1 where the engine summed two contributions into
# one buffer in place (the contributions through x and through y) and 0 where it
# did not; under compiled autograd it is 0. The values agree.
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
    x = torch.tensor([1.0, 2.0])
    y = torch.tensor([3.0, 4.0])
    v = (torch.ones(2), torch.ones(2))
    versions = []
    for name, f in (("2 * x + 3 * y", lambda x, y: 2 * x + 3 * y), ("x * 5", lambda x, y: x * 5)):
        _, jv = call(lambda f=f: torch.autograd.functional.jvp(f, (x, y), v))
        versions.append(f"{name}: jvp {jv.tolist()} _version {jv._version}")
    return "; ".join(versions)


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
