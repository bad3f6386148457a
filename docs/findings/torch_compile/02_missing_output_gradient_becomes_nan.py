# A compiled function with two outputs, only one of which reaches the loss: eager's
# backward gets no gradient for the other output and skips its term; AOTAutograd's
# compiled backward is given zeros for it and computes the term anyway. Where that term is
# not finite (var of one element is nan, so its derivative is too), 0 * nan makes the
# gradient nan, silently.
import torch

var_mean = torch.compile(lambda a: torch.var_mean(a), backend="aot_eager", fullgraph=True)


def run(f) -> str:
    x = torch.tensor([1.5], requires_grad=True)  # one element: its variance is nan
    var, mean = f(x)
    mean.backward()  # d mean / dx = 1; var is not used
    return f"var={var.item()}, x.grad={x.grad.tolist()}"


print("torch", torch.__version__)
print("eager:    ", run(torch.var_mean))
print("aot_eager:", run(var_mean))
