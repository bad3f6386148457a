# A post-hook on a leaf's AccumulateGrad node reads its grad_outputs after the leaf's
# post-accumulate-grad hook changed .grad in place. In eager, grad_outputs[0] is the
# tensor that became .grad (AccumulateGrad took the incoming buffer), so it sees the
# change (0.3) and the copy leaves .grad at 3.0; under compiled autograd it is another
# tensor (-0.2) and .grad ends at -2.0. From test_autograd.py
# test_post_accumulate_grad_hook_ordering.
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


def run(call) -> str:
    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    acc = t.view_as(t).grad_fn.next_functions[0][0]  # t's AccumulateGrad node
    seen = []

    def post_accumulate(leaf):
        leaf.grad.add_(0.5)

    def node_post_hook(grad_inputs, grad_outputs):
        seen.append(grad_outputs[0].clone())
        t.grad.copy_(grad_outputs[0] * 10)

    t.register_hook(lambda g: g - 2.0)
    acc.register_prehook(lambda gs: (gs[0] / 5.0,))
    t.register_post_accumulate_grad_hook(post_accumulate)
    acc.register_hook(node_post_hook)
    loss = t.sum()
    call(lambda: loss.backward())
    saw = [round(v, 3) for v in seen[0].tolist()]
    return f"node post-hook saw {saw}, t.grad={[round(v, 3) for v in t.grad.tolist()]}"


print("torch", torch.__version__)
for name, call in (("eager", eager), ("compiled", compiled), ("_enable", private)):
    compiled_autograd.reset()  # each entry point starts without graphs cached by another
    print(f"{name + ':':10}", run(call))
