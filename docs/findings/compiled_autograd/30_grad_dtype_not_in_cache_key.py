# Tensor.grad_dtype (the dtype a leaf's .grad must have; None allows any). A custom Function
# returns a float64 gradient for a float32 leaf: AccumulateGrad casts it to the leaf's
# grad_dtype, float32 by default, and keeps float64 under grad_dtype None. (1) Under compiled
# autograd the cache key does not hold grad_dtype: once the same graph shape ran for a leaf
# with the default, a leaf with grad_dtype None reuses that graph and gets float32. (2) A
# bfloat16 leaf whose .grad is float32 (allowed by grad_dtype None) fails the next backward
# while compiled autograd makes its fake copy of the leaf.
import torch
from torch._dynamo import compiled_autograd

# The supported switch: a backward called inside a torch.compile'd function runs under
# compiled autograd, and its captured graph is compiled with that function's backend.
torch._dynamo.config.compiled_autograd = True


@torch.compile(backend="eager")
def compiled(step):
    return step()  # dynamo breaks the graph at the backward call, which compiled autograd runs


def eager(step):
    return step()


def private(step):  # the private entry point with no compiler: capture and runtime alone
    with compiled_autograd._enable(lambda gm: gm):
        return step()


class ToFloat64(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g.to(torch.float64)


def grad_dtype_of(call, any_dtype: bool) -> str:
    leaf = torch.tensor([3.0, 4.0], requires_grad=True)
    if any_dtype:
        leaf.grad_dtype = None
    loss = ToFloat64.apply(leaf).sum()
    call(lambda: loss.backward())
    return str(leaf.grad.dtype).removeprefix("torch.")


def run(call) -> str:
    alone = grad_dtype_of(call, any_dtype=True)
    compiled_autograd.reset()
    after_default = grad_dtype_of(call, any_dtype=False)
    after = grad_dtype_of(call, any_dtype=True)
    leaf = torch.tensor([3.0, 4.0], dtype=torch.bfloat16, requires_grad=True)
    leaf.grad_dtype = None
    leaf.grad = torch.zeros(2)  # float32
    loss = (leaf * 2).sum()
    try:
        call(lambda: loss.backward())
        bf16 = f"ok, .grad {str(leaf.grad.dtype).removeprefix('torch.')} {leaf.grad.tolist()}"
    except NotImplementedError as e:
        bf16 = f"NotImplementedError: {str(e)[:55]}..."
    return (f"grad_dtype None: {alone}; after a default leaf: {after_default}, then {after}"
            f" | bfloat16 leaf, float32 .grad: {bf16}")


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
