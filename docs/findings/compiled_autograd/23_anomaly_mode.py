# Anomaly mode under compiled autograd. (1) A failing backward (a saved tensor modified in
# place) raises the same error, but without eager's "Error detected in PowBackward0.
# Traceback of forward call that caused the error" warning. (2) A NaN made by a custom
# Function's backward during a double backward: eager's anomaly check raises naming the
# Function; compiled autograd checks NaN on the graph's outputs only when the graph was
# captured under anomaly mode, and its graph cache ignores anomaly mode, so after the same
# double backward ran once outside anomaly mode the NaN goes through silently.
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


import warnings  # noqa: E402


class MakesNan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2.0

    @staticmethod
    def backward(ctx, g):
        g = g.clone()
        g[0] = 0
        g[0] /= 0  # 0/0: NaN
        return g


class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.sum(0, keepdim=True)

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return MakesNan.apply(g.expand(3) * a)  # a backward that builds MakesNan's node


def failing_backward() -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = torch.ones(3, requires_grad=True)
        d1 = a + 1
        d2 = d1**2
        d1 += 1  # d2's backward needs d1 as it was
        try:
            with torch.autograd.detect_anomaly():
                torch.autograd.grad(d2.sum(), a)
        except RuntimeError as e:
            error = str(e).split(":")[0]
    traced = [str(w.message).split(".")[0] for w in caught if "Error detected" in str(w.message)]
    return f"{error}; warnings {traced}"


def double_backward(call, anomaly: bool) -> str:
    a = torch.ones(3, requires_grad=True)
    ga, = torch.autograd.grad(Outer.apply(a), a, create_graph=True)  # eagerly: only the
    try:  # second backward runs under compiled autograd
        with torch.autograd.set_detect_anomaly(anomaly):
            call(lambda: ga.sum().backward())
        return f"no error, a.grad={a.grad.tolist()}"
    except RuntimeError as e:
        return f"RuntimeError: {e}"


def run(call) -> str:
    first = call(failing_backward)
    second = double_backward(call, False)
    third = double_backward(call, True)
    return f"{first} | no anomaly: {second} | then anomaly: {third}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
