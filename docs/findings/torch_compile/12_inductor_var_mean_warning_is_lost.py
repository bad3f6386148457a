# var_mean of one element (no degrees of freedom left: its variance is nan) warns in eager,
# from the ATen kernel (aten/src/ATen/native/ReduceOps.cpp). aot_eager's graph runs that
# kernel and warns too; inductor lowers aten.var_mean itself (torch/_inductor/lowering.py,
# var_mean_helper_) into generated code, which computes the same nan without the warning.
import warnings

import torch


def run(f) -> str:
    x = torch.tensor([1.5], requires_grad=True)  # one element: var's degrees of freedom is 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        var, _mean = f(x)
    texts = [str(w.message)[:60] for w in caught if issubclass(w.category, UserWarning)]
    return f"var={var.item()}, warnings={texts}"


print("torch", torch.__version__)
print("eager:    ", run(torch.var_mean))
for backend in ("aot_eager", "inductor"):
    print(f"{backend}:".ljust(10), run(torch.compile(lambda a: torch.var_mean(a), backend=backend,
                                                     fullgraph=True)))
