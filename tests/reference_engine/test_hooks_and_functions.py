"""Hooks, custom Functions and view+in-place rules whose errors no case kind describes.

The expected texts were observed on torch 2.13 (CPU); cases cannot pin them because
conformance/case/kinds.py has no kind for them, so they are pinned here against the engine.
"""

import pytest

import reference_engine as torch

once_differentiable = torch.autograd.function.once_differentiable

MULTI = ("Output 0 of Unbind is a view and is being modified inplace. This view is the output "
         "of a function that returns multiple views. Such functions do not allow the output "
         "views to be modified inplace. You should replace the inplace operation by an "
         "out-of-place one.")
NO_GRAD = ("A view was created in no_grad mode and is being modified inplace with grad mode "
           "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You "
           "can clarify your code by moving both the view and the inplace either both inside the "
           "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
           "want the inplace to be tracked).")
CUSTOM = ("Output 0 of Id is a view and is being modified inplace. This view was created inside "
          "a custom Function (or because an input was returned as-is) and the autograd logic to "
          "handle view+inplace would override the custom backward associated with the custom "
          "Function, leading to incorrect gradients. This behavior is forbidden. You can fix "
          "this by cloning the output of the custom Function.")


def _raises(text: str, fn, exc=RuntimeError) -> None:
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == text


def test_inplace_on_multi_output_view_errors():
    x = torch.ones(4, requires_grad=True)
    u = (x * 1).unbind(0)
    _raises(MULTI, lambda: u[0].mul_(2))
    s = (x * 1).split(2)
    _raises(MULTI.replace("Unbind", "Split"), lambda: s[0].mul_(2))


def test_inplace_on_multi_output_view_after_base_changed_errors_on_grad_fn():
    x = torch.ones(4, requires_grad=True)
    z = x * 1
    u = z.unbind(0)
    z.mul_(2)
    text = MULTI.replace("is being modified", "its base or another view of its base has been "
                         "modified")
    _raises(text, lambda: u[0].grad_fn)


def test_no_grad_view_modified_in_grad_mode_errors():
    x = torch.ones(4, requires_grad=True)
    y = x * 1
    with torch.no_grad():
        v = y[:2]
    assert v.requires_grad and v.grad_fn is None and v.is_leaf
    _raises(NO_GRAD, lambda: v.mul_(2))
    plain = torch.ones(4)
    with torch.no_grad():
        vp = plain[:2]
    _raises(NO_GRAD, lambda: vp.mul_(torch.ones(2, requires_grad=True)))


def test_custom_function_view_output_inplace_errors():
    class Id(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.view_as(a)

        @staticmethod
        def backward(ctx, g):
            return g

    o = Id.apply(torch.ones(4, requires_grad=True) * 1)
    assert o._is_view() and type(o.grad_fn).__name__ == "IdBackward"
    _raises(CUSTOM, lambda: o.mul_(2))


def test_input_returned_as_is_is_a_view():
    class Ident(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    a = torch.ones(2, requires_grad=True)
    y = Ident.apply(a)
    assert y is not a and y._is_view() and y._base is a
    with torch.no_grad():
        n = Ident.apply(a)
    assert not n._is_view() and not n.requires_grad
    b = torch.ones(2)
    assert Ident.apply(b)._base is b


def test_mark_dirty_on_leaf_errors_and_bumps_version():
    class Dirty(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    leaf = torch.tensor([1.0], requires_grad=True)
    _raises("a leaf Variable that requires grad has been used in an in-place operation.",
            lambda: Dirty.apply(leaf))
    assert leaf._version == 2


def test_once_differentiable_double_backward_errors():
    class Sq(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return 2 * a * g

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    v = torch.ones(2, requires_grad=True)
    g, = torch.autograd.grad(Sq.apply(x), x, grad_outputs=v, create_graph=True)
    assert g.grad_fn.name() == "torch::autograd::Error"
    _raises("trying to differentiate twice a function that was marked with "
            "@once_differentiable", lambda: g.sum().backward())


def test_custom_function_gradient_for_non_tensor_input_errors():
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = torch.ones(2, requires_grad=True)
    _raises("function BadBackward returned a gradient different than None at position 2, but "
            "the corresponding forward input was not a Variable",
            lambda: Bad.apply(x, 2.0).sum().backward())


def test_hook_result_checks():
    a = torch.tensor([1.0, 2.0], requires_grad=True)

    def shrink(g):
        return g[:1]

    b = a * 3
    b.register_hook(shrink)
    _raises("hook 'shrink' has changed the size of value", lambda: b.sum().backward())
    b = a * 3
    b.register_hook(lambda g: g.double())
    _raises("hook '<lambda>' has changed the type of value (was torch.FloatTensor got "
            "torch.DoubleTensor)", lambda: b.sum().backward())
    b = a * 3
    b.register_hook(lambda g: 3)
    _raises("expected Variable, but hook returned 'int'", lambda: b.sum().backward(), TypeError)
    b = a * 3
    b.grad_fn.register_prehook(lambda go: go[0])
    _raises("expected tuple, but hook returned 'Tensor'", lambda: b.sum().backward(), TypeError)
    b = a * 3
    b.grad_fn.register_prehook(lambda go: (go[0], go[0]))
    _raises("hook '<lambda>' has returned an incorrect number of values (got 2, but expected 1)",
            lambda: b.sum().backward())
    b = a * 3
    b.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
    _raises("can't replace a None gradient with a non-None value", lambda: b.sum().backward())


def test_post_accumulate_grad_hook_rejects_non_leaf():
    b = torch.ones(2, requires_grad=True) * 2
    _raises("post accumulate grad hooks cannot be registered on non-leaf tensors",
            lambda: b.register_post_accumulate_grad_hook(lambda p: None))


def test_node_hook_order_and_autograd_grad():
    log = []
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: log.append("tensor"))
    b.retain_grad()
    b.grad_fn.register_prehook(lambda go: log.append("prehook"))
    b.grad_fn.register_hook(lambda gi, go: log.append("hook"))
    a.register_hook(lambda g: log.append("leaf"))
    a.register_post_accumulate_grad_hook(lambda p: log.append("post"))
    b.sum().backward(retain_graph=True)
    assert log == ["tensor", "prehook", "hook", "leaf", "post"]
    log.clear()
    torch.autograd.grad(b.sum(), a)
    assert log == ["tensor", "prehook", "hook", "leaf"]
