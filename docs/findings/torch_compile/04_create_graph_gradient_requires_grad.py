# A create_graph=True gradient of a function linear in its input (a + 2 b): eager's
# gradient is a constant that does not require grad; through a compiled function it
# requires grad and has a grad_fn whose backward raises: AOTAutograd's _double_backward
# gives every create_graph gradient a graph, adding a dummy input that requires grad when
# nothing else does.
import torch

linear = torch.compile(lambda a, b: a + 2 * b, backend="aot_eager", fullgraph=True)


def run(f) -> str:
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    ga, _ = torch.autograd.grad(f(a, b).sum(), [a, b], create_graph=True)
    node = type(ga.grad_fn).__name__
    return f"ga={ga.tolist()}, ga.requires_grad={ga.requires_grad}, grad_fn={node}"


print("torch", torch.__version__)
print("eager:    ", run(lambda a, b: a + 2 * b))
print("aot_eager:", run(linear))
