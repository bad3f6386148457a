# torch.median(dim) and torch.nanmedian(dim) on CPU read the reduced dimension as if its
# stride were 1 when it is 0 (an expanded tensor), so they read the elements after the
# tensor's one element in its storage: inside a larger storage those are the neighbours'
# values (shown here), at the end of a storage memory never written (run to run garbage).
# aten/src/ATen/native/Sorting.cpp, median_with_indices_impl: `if (in.stride(dim) > 1)`
# makes the dim contiguous only for a stride above 1; the kernel then reads ip[0..size).
import torch

print("torch", torch.__version__)
storage = torch.tensor([5.0, 1.0, 2.0, 3.0, 4.0, 6.0], dtype=torch.float64)
t = storage[0].expand(3)  # [5., 5., 5.], stride (0,)
print("t:", t.tolist(), "strides", t.stride())
for name, r in [("t.median(0)             ", t.median(0)),
                ("t.contiguous().median(0)", t.contiguous().median(0)),
                ("t.nanmedian(0)          ", t.nanmedian(0))]:
    print(name, "value", r.values.item(), "index", r.indices.item())
print("t.median() (all dims)   ", t.median().item())
print("t.kthvalue(2, 0)        ", t.kthvalue(2, 0).values.item())
# a stride-0 dim that is not the last: column j reads storage[j .. j + 4), not 4 copies
u = storage[:3].expand(4, 3)  # four rows [5., 1., 2.], strides (0, 1)
print("u.median(0)             ", u.median(0).values.tolist(), "strides", u.stride())
print("u.contiguous().median(0)", u.contiguous().median(0).values.tolist())
# the autograd route that met it: sum's backward expands its 0-d gradient (stride 0)
x = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
g, = torch.autograd.grad(x.sum(), x, grad_outputs=storage[0])
print("grad:", g.tolist(), "strides", g.stride())
print("grad.median(1)          ", g.median(1).values.tolist())
