# An in-place change of a tensor that eager's node saved, then a backward: eager refuses
# (the saved tensor's version changed), a compiled function computes the gradient. Eager's
# AmaxBackward0 saves the input and the result, MaximumBackward0 both inputs; AOTAutograd's
# graph saves bool masks made in the forward instead, so no saved tensor was changed and no
# check fires, and the gradient is that of the values the forward saw. The pack hook of
# saved_tensors_hooks shows what each saves.
import torch


def compiled(f):
    return torch.compile(f, backend="aot_eager", fullgraph=True)


def saved(f, *inputs) -> str:
    seen = []

    def pack(t):
        kind = "input" if any(t is i for i in inputs) else "new"
        seen.append(f"{kind} {str(t.dtype)[6:]}{list(t.shape)}")
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        f(*inputs)
    return ", ".join(seen)


def backward(step) -> str:
    try:
        return step()
    except RuntimeError as e:
        return f"RuntimeError: {str(e)[:48]}..."


def amax_result_changed(f) -> str:
    x = torch.tensor([1.0, 3.0, 2.0], requires_grad=True)
    what = saved(f, x)
    m = f(x)
    m.add_(1.0)  # the result AmaxBackward0 saved

    def step():
        m.backward()
        return f"x.grad={x.grad.tolist()}"
    return f"saves [{what}]: {backward(step)}"


def maximum_input_changed(f) -> str:
    x = torch.tensor([1.0, 3.0, 2.0], requires_grad=True)
    w = torch.tensor([2.0, 2.0, 2.0], requires_grad=True)
    y = x * 1.0
    what = saved(f, y, w)
    z = f(y, w)
    y.add_(1.0)  # an input MaximumBackward0 saved

    def step():
        z.sum().backward()
        return f"x.grad={x.grad.tolist()}, w.grad={w.grad.tolist()}"
    return f"saves [{what}]: {backward(step)}"


def chunk_base_changed(f) -> str:
    x = torch.tensor([1.0, 3.0, 2.0, 4.0], requires_grad=True)
    y = x * 1.0
    c = y.chunk(2)[0]
    what = saved(f, c)
    m = f(c)  # eager's AminBackward0 saves c, a multi-output view of y
    y.sub_(1.0)

    def step():
        m.backward()
        return f"x.grad={x.grad.tolist()}"
    return f"saves [{what}]: {backward(step)}"


print("torch", torch.__version__)
for name, run, op in [("x.amax(), then result.add_(1)", amax_result_changed, lambda a: a.amax()),
                      ("maximum(y, w), then y.add_(1)", maximum_input_changed, torch.maximum),
                      ("y.chunk(2)[0].amin(), then y.sub_(1)", chunk_base_changed,
                       lambda a: a.amin())]:
    print(name)
    print("  eager:    ", run(op))
    print("  aot_eager:", run(compiled(op)))
