# A matmul output's _version under inductor differs from eager's, both ways; only the
# version counter differs, never a value. 2-D @ 2-D: eager 0, inductor 1. Inductor's
# generated code allocates the output buffer and runs mm as an extern kernel into it,
# `extern_kernels.mm(..., out=buf0)` (torch/_inductor/kernel/mm.py: aten_mm =
# ExternKernelChoice(torch.mm, "at::mm_out", op_overload=aten.mm.out)), and an out= call
# bumps its output's version counter (autograd's ADInplaceOrView kernel of every out=
# overload), as torch.mm(a, b, out=o) does in eager; the buffer itself is returned.
# 1-D @ 2-D: eager 1, inductor 0 (aot_eager 0): eager's matmul runs unsqueeze, mm and an
# in-place squeeze_, which bumps the version; the compiled graph returns the mm buffer
# through reinterpret_tensor, a new tensor with a version counter of its own.
import torch
from torch._inductor.utils import run_and_get_code
from torch.utils._python_dispatch import TorchDispatchMode


class Ops(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def inputs(v_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    v = torch.randn(*((2, 3) if v_dim == 2 else (3,)), requires_grad=True)
    return v, torch.randn(3, 4, requires_grad=True)


print("torch", torch.__version__)
for v_dim in (2, 1):
    print(f"{v_dim}-D @ 2-D")
    v, w = inputs(v_dim)
    with Ops() as ops:
        out = torch.matmul(v, w)
    print("  eager:     _version", out._version, "ops", ops.seen)
    aot = torch.compile(torch.matmul, backend="aot_eager", fullgraph=True)
    print("  aot_eager: _version", aot(*inputs(v_dim))._version)
    inductor = torch.compile(torch.matmul, backend="inductor", fullgraph=True)
    out, (code, *_) = run_and_get_code(inductor, *inputs(v_dim))
    mm = next(line.strip() for line in code.splitlines() if "extern_kernels.mm(" in line)
    # the forward's return: its first element is the output, the rest what it saves
    ret = next(line.strip() for line in code.splitlines() if line.strip().startswith("return ("))
    print("  inductor:  _version", out._version)
    print("    code:", mm)
    print("    output:", ret.split(", reinterpret_tensor(primals")[0].removeprefix("return ("))
o = torch.empty(2, 4)
torch.mm(*(t.detach() for t in inputs(2)), out=o)
print("eager torch.mm(a, b, out=o): o._version", o._version)
