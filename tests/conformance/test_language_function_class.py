"""The case language's custom Function classes: the methods it accepts (static, class or
legacy; once_differentiable; setup_context), ctx state, torch's class flags and forward's
defaults; what it rejects, with line and fix."""

from __future__ import annotations

import pytest

from conformance.case import program as ir
from conformance.case.diagnostics import CaseError
from conformance.case.language import parse, to_source


def test_function_class_methods_are_static() -> None:
    src = ("class Fn(torch.autograd.Function):\n"
           "    @staticmethod\n"
           "    def forward(ctx, x):\n"
           "        return x\n")
    parse(src)   # torch's Function defines backward (raising): it may be left out
    with pytest.raises(CaseError, match="defines none of forward, backward and vjp"):
        parse("class Fn(torch.autograd.Function):\n    \"A docstring alone.\"\n")
    with pytest.raises(CaseError, match="decorated with @staticmethod"):
        parse(src.replace("    @staticmethod\n", "    @property\n"))
    with pytest.raises(CaseError, match="decorated with @staticmethod"):
        parse(src.replace("    @staticmethod\n", "    @classmethod\n    @staticmethod\n"))



def test_function_class_methods_may_be_classmethods_or_legacy() -> None:
    """torch's tests also write @classmethod methods (cls before ctx) and the legacy style's
    undecorated instance methods (self in ctx's place): both parse and print back."""
    classmethods = ("class Fn(torch.autograd.Function):\n"
                    "    @classmethod\n"
                    "    def forward(cls, ctx, x):\n"
                    "        ctx.k = 2\n"
                    "        return x * ctx.k\n"
                    "    @classmethod\n"
                    "    def backward(cls, ctx, g):\n"
                    "        return g * ctx.k\n")
    legacy = ("class Fn(torch.autograd.Function):\n"
              "    def forward(self, x):\n"
              "        return x\n")
    for src in (classmethods, legacy):
        program = parse(src)
        assert parse(to_source(program)) == program
    fc = parse(classmethods).body[0]
    assert isinstance(fc, ir.FunctionClass)
    assert [m.decorators for m in fc.methods] == [("classmethod",)] * 2
    with pytest.raises(CaseError, match="takes ctx as its second parameter"):
        parse(classmethods.replace("forward(cls, ctx, x)", "forward(cls)"))



def test_once_differentiable_decorator_round_trips() -> None:
    src = ("class Fn(torch.autograd.Function):\n"
           "    @staticmethod\n"
           "    def forward(ctx, x):\n"
           "        return x * 2\n"
           "    @staticmethod\n"
           "    @torch.autograd.function.once_differentiable\n"
           "    def backward(ctx, g):\n"
           "        return g * 2\n")
    program = parse(src)
    fc = program.body[0]
    assert isinstance(fc, ir.FunctionClass)
    assert fc.methods[1].decorators == ("staticmethod",
                                        "torch.autograd.function.once_differentiable")
    assert parse(to_source(program)) == program
    with pytest.raises(CaseError, match="outermost"):
        parse(src.replace("    @staticmethod\n    @torch.autograd.function.once_differentiable",
                          "    @torch.autograd.function.once_differentiable\n"
                          "    @staticmethod"))



def test_ctx_state_may_be_stored_and_read_back_only_in_its_class() -> None:
    src = ("class Scale(torch.autograd.Function):\n"
           "    @staticmethod\n"
           "    def forward(ctx, x, k):\n"
           "        ctx.k = k\n"
           "        return x * k\n"
           "    @staticmethod\n"
           "    def backward(ctx, g):\n"
           "        return g * ctx.k, None\n")
    program = parse(src)
    assert parse(to_source(program)) == program
    with pytest.raises(CaseError, match=r"`ctx\.j` is not in the ctx API"):
        parse(src.replace("g * ctx.k", "g * ctx.j"))
    with pytest.raises(CaseError, match="private"):
        parse(src.replace("ctx.k = k", "ctx._k = k"))
    with pytest.raises(CaseError, match="cannot assign to attribute `k`"):
        parse(src + "x = torch.ones(1)\nx.k = 1\n")



def test_setup_context_pairs_with_a_forward_without_ctx() -> None:
    src = ("class Sq(torch.autograd.Function):\n"
           "    @staticmethod\n"
           "    def forward(x):\n"
           "        return x * x\n\n"
           "    @staticmethod\n"
           "    def setup_context(ctx, inputs, output):\n"
           "        ctx.k = 2\n\n"
           "    @staticmethod\n"
           "    def backward(ctx, g):\n"
           "        return g * ctx.k\n")
    program = parse(src)
    assert parse(to_source(program)) == program
    # without setup_context, forward's first parameter is ctx, so it needs one
    no_setup = src.replace("    @staticmethod\n    def setup_context(ctx, inputs, output):\n"
                           "        ctx.k = 2\n\n", "").replace("ctx.k", "2")
    with pytest.raises(CaseError, match="takes ctx as its first parameter"):
        parse(no_setup.replace("def forward(x)", "def forward()"))
    with pytest.raises(CaseError, match="holds only"):
        parse(src.replace("setup_context", "setup"))



_FLAGGED = ("class Fn(torch.autograd.Function):\n"
            "    clear_saved_tensors_on_access = True\n"
            "    @staticmethod\n"
            "    def forward(ctx, x):\n"
            "        return x\n")



def test_function_class_may_set_torchs_flags() -> None:
    program = parse(_FLAGGED)
    fc = program.body[0]
    assert isinstance(fc, ir.FunctionClass)
    assert fc.attributes == (("clear_saved_tensors_on_access", True),)
    assert parse(to_source(program)) == program



@pytest.mark.parametrize("line, message", [
    # the engine's own names, a dunder, another name: no state of the program on a class
    ("    apply = True\n", "may set only the flags"),
    ("    _backward_cls = True\n", "may set only the flags"),
    ("    __init__ = True\n", "may set only the flags"),
    ("    vjp = True\n", "may set only the flags"),
    ("    a = b = True\n", "may set only the flags"),
    ("    clear_saved_tensors_on_access, y = True, False\n", "may set only the flags"),
    # only a bool literal: never a name, call or lambda that would run or leak a value
    ("    clear_saved_tensors_on_access = 1\n", "takes True or False"),
    ("    clear_saved_tensors_on_access = torch\n", "takes True or False"),
    ("    clear_saved_tensors_on_access = lambda: True\n", "takes True or False"),
    ("    clear_saved_tensors_on_access = (True, 1)\n", "takes True or False"),
    # other assignment forms are not class attributes of the language
    ("    clear_saved_tensors_on_access: bool = True\n", "holds only"),
    ("    clear_saved_tensors_on_access += True\n", "holds only"),
])
def test_function_class_refuses_other_class_attributes(line: str, message: str) -> None:
    with pytest.raises(CaseError, match=message) as info:
        parse(_FLAGGED.replace("    clear_saved_tensors_on_access = True\n", line))
    assert info.value.line == 2



def test_function_class_flag_is_set_once() -> None:
    with pytest.raises(CaseError, match="set twice") as info:
        parse(_FLAGGED.replace("True\n", "True\n    clear_saved_tensors_on_access = False\n",
                               1))
    assert info.value.line == 3



_DEFAULTS = ("class Pow(torch.autograd.Function):\n"
             "    @staticmethod\n"
             "    def forward(x, y=3):\n"
             "        return x ** y\n"
             "    @staticmethod\n"
             "    def setup_context(ctx, inputs, output):\n"
             "        pass\n")



def test_forward_may_have_literal_defaults() -> None:
    program = parse(_DEFAULTS)
    fc = program.body[0]
    assert isinstance(fc, ir.FunctionClass)
    assert fc.methods[0].defaults == (ir.Const(3),)
    assert parse(to_source(program)) == program
    for literal in ("-2.5", "None", "True"):
        parse(_DEFAULTS.replace("y=3", f"y={literal}"))



@pytest.mark.parametrize("signature, message", [
    # a default is never an expression run when the class is made
    ("forward(x, y=torch.ones(2))", "literal number, bool or None"),
    ("forward(x, y=z)", "unknown name `z`"),
    ("forward(x, y=torch)", "literal number, bool or None"),
    ("forward(x, y=lambda: 1)", "literal number, bool or None"),
    ("forward(x, y='s')", "literal number, bool or None"),
    ("forward(x, y=...)", "not supported"),
    ("forward(x, y=[1])", "literal number, bool or None"),
    # still plain positional parameters
    ("forward(x, *, y=3)", "plain positional parameters"),
    ("forward(x, *ys)", "plain positional parameters"),
    ("forward(x, **kw)", "plain positional parameters"),
])
def test_forward_defaults_refuse_anything_but_literals(signature: str, message: str) -> None:
    with pytest.raises(CaseError, match=message) as info:
        parse(_DEFAULTS.replace("forward(x, y=3)", signature))
    assert info.value.line == 3



def test_only_forward_takes_defaults() -> None:
    with pytest.raises(CaseError, match="plain positional parameters"):
        parse(_DEFAULTS.replace("setup_context(ctx, inputs, output)",
                                "setup_context(ctx, inputs, output=None)"))
