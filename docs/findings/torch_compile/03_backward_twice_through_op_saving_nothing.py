# A second backward through an op that saves nothing for backward (add): eager allows it
# without retain_graph (nothing was freed); a compiled add's CompiledFunctionBackward node
# refuses it with the backward-twice error.
import torch

add = torch.compile(lambda a, b: a + b, backend="aot_eager", fullgraph=True)


def run(f) -> str:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tensor([3.0, 4.0], requires_grad=True)
    loss = f(x, y).sum()
    loss.backward()
    try:
        loss.backward()
    except Exception as e:
        return f"{type(e).__name__}: {str(e)[:60]}..."
    return f"ok, x.grad={x.grad.tolist()}"


print("torch", torch.__version__)
print("eager:    ", run(torch.add))
print("aot_eager:", run(add))
