# Two library divergences once put down to "the compiler saves other tensors", checked one by
# one. (1) a * a: eager's MulBackward0 saves self and other, two saved tensors, so a pack hook
# runs twice; the compiled graph saves `a` once, and the hook runs once. (2) sin saves its
# input, and so does the compiled graph (the very tensor), yet a detach_() of it before the
# backward is refused by eager and not by the compiled function: AOTAutograd's
# CompiledFunction is an autograd.Function, whose ctx.saved_tensors unpacks with the node as
# saved_for, and SavedVariable::unpack raises its "detached in-place" error only without
# one. A hand-written autograd.Function saving its input behaves the same in eager.
import torch


def compiled(f):
    return torch.compile(f, backend="aot_eager", fullgraph=True)


class Sin(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x.cos()


def packs(f) -> str:
    seen = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        a = torch.ones(3, requires_grad=True)
        f(a)
    return f"{len(seen)} saved, the input each time: {all(t is a for t in seen)}"


def detached(f) -> str:
    a = torch.tensor(1.0, requires_grad=True).clone()
    b = f(a)
    a.detach_()
    try:
        b.backward()
    except RuntimeError as e:
        return f"RuntimeError: {str(e)[:58]}..."
    return "backward ran"


print("torch", torch.__version__)
print("a * a, pack hook:     eager:", packs(lambda a: a * a),
      "| aot_eager:", packs(compiled(lambda a: a * a)))
print("sin, input detach_(): eager:", detached(torch.sin))
print("                      aot_eager:", detached(compiled(torch.sin)))
print("                      eager autograd.Function:", detached(Sin.apply))
