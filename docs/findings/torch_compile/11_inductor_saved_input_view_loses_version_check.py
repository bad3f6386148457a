# A tensor the backward needs (the input x of x @ w, for w's gradient) changed in place
# between forward and backward: eager and aot_eager refuse the backward; under inductor the
# saved tensor is a view of the input rebuilt by the generated code, with a version counter
# of its own, so the check is lost and w's gradient is computed from the changed x. At the
# forward's x, w.grad[0] is 0 + 3/7 = 0.43 in each element; inductor gives ten times that.
import torch


def run(f) -> str:
    x = torch.arange(6.0).reshape(2, 3) / 7
    w = (torch.arange(9.0).reshape(3, 3) / 5).requires_grad_()
    y = f(x, w)
    x.mul_(10)  # the input buffer reused before backward
    try:
        y.sum().backward()
    except RuntimeError as e:
        return f"RuntimeError: {str(e)[:50]}..."
    return f"w.grad[0]={[round(v, 4) for v in w.grad[0].tolist()]}"


print("torch", torch.__version__)
print("eager:    ", run(lambda a, b: a @ b))
for backend in ("aot_eager", "inductor"):
    print(f"{backend}:".ljust(10), run(torch.compile(lambda a, b: a @ b, backend=backend,
                                                     fullgraph=True)))
