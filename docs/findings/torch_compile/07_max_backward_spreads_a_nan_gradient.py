# The gradient of a full max() reduction (also min, median, nanmedian) given a gradient that
# is not finite: eager on CPU writes it into the maximal element alone and leaves the others
# exactly 0; the compiled backward multiplies a mask by it, so the others get 0 * nan = nan
# (or 0 * inf = nan). eager's evenly_distribute_backward takes the mask-multiply branch on
# CUDA and for tensor subclasses, and AOTAutograd traces it with FakeTensors (a subclass).
import torch

full_max = torch.compile(lambda a: a.max(), backend="aot_eager", fullgraph=True)


def run(f) -> str:
    grads = []
    for g in (float("nan"), float("inf")):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        f(x).backward(torch.tensor(g))
        grads.append(f"upstream {g}: x.grad={x.grad.tolist()}")
    return "; ".join(grads)


print("torch", torch.__version__)
print("eager:    ", run(lambda a: a.max()))
print("aot_eager:", run(full_max))
