# An output of a multi-output view (unbind, split, chunk) returned by a function compiled
# with inductor shares its input's storage but is not an autograd view of it: it has its own
# version counter. An in-place change through it (here under no_grad) then escapes the
# check that protects a tensor saved for backward: eager refuses the backward, inductor
# computes the gradient from the changed values, silently. aot_eager runs eager kernels,
# which make real views, and agrees with eager.
import torch


def run(f) -> str:
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1.0
    z = (y * y).sum()  # mul saves y
    u = f(y)[0]
    with torch.no_grad():
        u.mul_(10)  # writes into y's storage
    seen = f"u._is_view()={u._is_view()}, y._version={y._version}"
    try:
        z.backward()
    except RuntimeError as e:
        return f"{seen}: RuntimeError: {str(e)[:56]}..."
    return f"{seen}: x.grad={x.grad.tolist()}"


print("torch", torch.__version__)
print("eager:    ", run(lambda a: a.unbind()))
for backend in ("aot_eager", "inductor"):
    print(f"{backend}:".ljust(10), run(torch.compile(lambda a: a.unbind(), backend=backend,
                                                     fullgraph=True)))
