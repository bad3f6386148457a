"""Isolation at load time: a program may change only values it made.

Hostile programs that would change a class, a namespace or another engine object (and so
every later case in the process) are rejected with their line and the fix; the forms that
change the program's own values still load.
"""

from __future__ import annotations

import pytest

from conformance.case.diagnostics import CaseError
from conformance.case.language import parse
from conformance.case.loader import load_case

FUNCTION = """\
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.k = 2.0
        {forward}
        return x * ctx.k
    @staticmethod
    def backward(ctx, g):
        {backward}
        return g * ctx.k
x = torch.ones(2, requires_grad=True)
y = Scale.apply(x)
"""


def function(forward: str = "pass", backward: str = "pass") -> str:
    return FUNCTION.format(forward=forward, backward=backward)


FIX = "a program may set attributes only on values it made"

HOSTILE = [
    # (source, line, message, fix)
    ("nn.Parameter.requires_grad = False", 1,
     "cannot assign to `nn.Parameter.requires_grad`: `nn.Parameter` belongs to the engine",
     FIX),
    ("torch.Tensor.grad = None", 1, "`torch.Tensor` belongs to the engine", FIX),
    ("torch.autograd.Function.apply = None", 1,
     "`torch.autograd.Function` belongs to the engine", FIX),
    ("F.relu.data = None", 1, "`F.relu` belongs to the engine", FIX),
    ("torch.float32.requires_grad = True", 1, "`torch.float32` belongs to the engine", FIX),
    ("torch.grad = None", 1, "`torch` belongs to the engine", FIX),
    ("nn.Linear.weight = None", 1, "`nn.Linear` belongs to the engine", FIX),
    ("torch.nn.Linear[0] = 1", 1, "`torch.nn.Linear` belongs to the engine", FIX),
    ("P = nn.Parameter\nP.requires_grad = False", 2,
     "`P` is bound to `nn.Parameter` (line 1), an engine object", FIX),
    ("L = nn\nL.Linear.grad = None", 2, "`L.Linear` is an engine object reached by attribute",
     FIX),
    ("float.grad = None", 1, "`float` is a harness builtin", FIX),
    (function() + "Scale.apply = None", 13, "`Scale` is a class", FIX),
    (function() + "S = Scale\nS.requires_grad = False", 14,
     "`S` is bound to `Scale` (line 13)", FIX),
    (function() + "y.grad_fn.grad = None", 13,
     "`y.grad_fn` is an engine object reached by attribute", FIX),
    (function() + "y.grad_fn.something = 1", 13,
     "`y.grad_fn` is an engine object reached by attribute", FIX),
    (function() + "g = y.grad_fn\ng.requires_grad = False", 14,
     "`g` is bound to `y.grad_fn` (line 13), an engine object", FIX),
    (function() + "y.grad_fn.next_functions[0] = None", 13,
     "`y.grad_fn.next_functions` is an engine object reached by attribute", FIX),
    ("x = torch.ones(2)\nx.shape[0] = 3", 2, "`x.shape` is an engine object", FIX),
    # a class's methods called unbound write onto the class
    ("torch.autograd.Function.mark_dirty(nn.Parameter)", 1,
     "attribute `mark_dirty` of the engine's `torch.autograd.Function` is not in the "
     "supported API", "call it on a value the program made"),
    ("x = torch.ones(1)\nnn.Parameter.requires_grad_(x)", 2,
     "attribute `requires_grad_` of the engine's `torch.nn.Parameter`", None),
    # ctx: only its table and the Function's own state
    (function(forward="a = ctx.apply"), 5, "`ctx.apply` is not in the ctx API",
     "ctx offers mark_dirty"),
    (function(backward="a = ctx.saved_tensorz"), 9,
     "`ctx.saved_tensorz` is not in the ctx API", "saved_tensors"),
    (function(forward="ctx.saved_variables = ()"), 5,
     "cannot assign to `ctx.saved_variables`: the name belongs to the engine's ctx", None),
    (function(backward="a = ctx.next_functions"), 9, "`ctx.next_functions` is not in the ctx API",
     None),
    (function(forward="ctx.apply = None"), 5,
     "cannot assign to `ctx.apply`: the name belongs to the engine's ctx", "another name"),
    (function(forward="ctx.saved_tensors = ()"), 5,
     "cannot assign to `ctx.saved_tensors`: the name belongs to the engine's ctx", None),
    (function(forward="ctx.needs_input_grad = (True,)"), 5,
     "cannot assign to `ctx.needs_input_grad`", None),
]


@pytest.mark.parametrize(("source", "line", "message", "fix"), HOSTILE)
def test_assignments_to_what_the_program_did_not_make_are_rejected(
        source: str, line: int, message: str, fix: str | None) -> None:
    with pytest.raises(CaseError) as info:
        parse(source)
    err = info.value
    assert err.line == line, str(err)
    assert message in err.message, str(err)
    if fix is not None:
        assert err.fix is not None and fix in err.fix, str(err)


def test_rejection_names_the_case_file_and_its_line() -> None:
    text = ("description: pollutes nn.Parameter\nfeatures: [leaf]\nprogram: |\n"
            "  x = torch.ones(2)\n  nn.Parameter.requires_grad = False\n")
    with pytest.raises(CaseError) as info:
        load_case("cases/leaf/pollutes.yaml", text)
    assert str(info.value).startswith(
        "cases/leaf/pollutes.yaml:5: cannot assign to `nn.Parameter.requires_grad`")
    assert "fix: a program may set attributes only on values it made" in str(info.value)


@pytest.mark.parametrize("source", [
    "x = torch.ones(2, requires_grad=True)\nx.grad = None\nx.requires_grad = False",
    "x = torch.ones(2)\nx.data = torch.zeros(2)",
    "x = torch.ones(2, requires_grad=True)\nx.sum().backward()\nx.grad.data = torch.zeros(2)",
    "x = torch.ones(2, requires_grad=True)\nx.sum().backward()\nx.grad[0] = 5.0",
    "model = nn.Linear(2, 2)\nmodel.weight.requires_grad = False\nmodel.bias.grad = None",
    "xs = [torch.ones(1), torch.ones(1)]\nxs[0] = torch.zeros(1)\nxs[1].requires_grad = True",
    "x = torch.ones(2)\nx.detach().requires_grad = True",
    function(forward="ctx.scale_by = 2.0", backward="s = ctx.scale_by"),
    function(backward="t = ctx.needs_input_grad"),
])
def test_assignments_to_the_programs_own_values_load(source: str) -> None:
    parse(source)
