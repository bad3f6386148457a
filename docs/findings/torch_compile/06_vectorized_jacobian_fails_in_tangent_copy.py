# torch.autograd.functional.jacobian(vectorize=True) of a compiled function: eager computes
# the Jacobian with one batched (vmap) backward; compiled, AOTAutograd's backward prologue
# (coerce_to_expected_memory_format, the code of finding 01) restrides the batched tangent
# by copying it in place into a new unbatched tensor, which vmap refuses. Under inductor a
# Jacobian that needs no restride (3 * a) fails too: its compiled kernel reads the batched
# tangent's storage, which a vmap BatchedTensor has not.
import traceback

import torch

exp = torch.compile(lambda a: a.exp(), backend="aot_eager", fullgraph=True)


def run(f, then=lambda r: r.sum(dim=1)) -> str:
    x = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
    try:
        j = torch.autograd.functional.jacobian(lambda a: then(f(a)), x, vectorize=True)
    except Exception as e:
        where = traceback.extract_tb(e.__traceback__)[-1].name
        return f"{type(e).__name__} in {where}: {str(e)[:50]}..."
    return f"ok, shape {tuple(j.shape)}"


print("torch", torch.__version__)
print("eager:    ", run(torch.exp))
print("aot_eager:", run(exp))
for backend in ("aot_eager", "inductor"):
    scale = torch.compile(lambda a: 3 * a, backend=backend, fullgraph=True)
    print(f"3 * a, {backend}:", run(scale, then=lambda r: r))
