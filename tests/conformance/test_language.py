"""The case language: what it accepts, what it rejects (with line and fix), and printing."""

from __future__ import annotations

import pytest

from conformance.case import program as ir
from conformance.case.diagnostics import CaseError
from conformance.case.language import parse, to_source

SEED_LIKE = """\
a = torch.rand(1, 4, requires_grad=True)
c = (a ** 2) * 2
with raises("backward_twice"):
    c.sum().backward()
b = a + 2
b[0] = 1000.0
b[:, 1:3] += 1
h = b.register_hook(lambda grad: grad * 2)
for i in range(3):
    a.grad = None
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)
    @staticmethod
    def backward(ctx, g):
        input, = ctx.saved_tensors
        gi = g.clone()
        gi[input < 0] = 0
        return gi
assert a.grad is None and -a.shape[0] == -(1 - 2) ** 2, "message"
y = MyReLU.apply(a)
lin = nn.Linear(4, 2)
z = F.relu(lin(a)) @ torch.ones(2)
v = Variable(torch.ones(2), requires_grad=True)
"""


def test_round_trip_of_every_statement_kind() -> None:
    program = parse(SEED_LIKE)
    kinds = {type(s).__name__ for s in program.body}
    assert kinds == {"Assign", "AugAssign", "With", "For", "FunctionClass", "Assert"}
    printed = to_source(program)
    assert parse(printed) == program
    # printing is a fixed point after one round
    assert to_source(parse(printed)) == printed


def test_a_loop_over_a_written_tuple_keeps_its_values_and_round_trips() -> None:
    """`for rg in (True, False):`, the tests' loop over a few values (a list prints as a
    tuple: the same loop)."""
    program = parse("for rg in [True, 2, torch.ones(1)]:\n    x = rg\n")
    loop = program.body[0]
    assert isinstance(loop, ir.For) and loop.range_args == () and loop.items is not None
    assert loop.items[:2] == (ir.Const(True), ir.Const(2))
    printed = to_source(program)
    assert printed.startswith("for rg in (True, 2, torch.ones(1)):")
    assert parse(printed) == program
    assert parse("for i in range(2):\n    pass\n") != parse("for i in (0, 1):\n    pass\n")


def test_complex_literals_are_constants() -> None:
    """`1+2j` is Python's: 1 plus the imaginary constant 2j; `-2j` a negated constant."""
    program = parse("x = torch.tensor([1 + 2j, -2j], dtype=torch.complex64)\n")
    assert parse(to_source(program)) == program
    assert "2j" in to_source(program)


def test_line_numbers_are_kept_but_not_compared() -> None:
    program = parse("x = torch.ones(2)\n\n\ny = x * 2\n")
    assert [s.line for s in program.body] == [1, 4]
    assert program == parse("x = torch.ones(2)\ny = x * 2\n")


def test_lambda_carries_its_position() -> None:
    program = parse("x = torch.ones(2, requires_grad=True)\nh = x.register_hook(lambda g: g)\n")
    stmt = program.body[1]
    assert isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call)
    lam = stmt.value.args[0]
    assert isinstance(lam, ir.Lambda) and (lam.line, lam.col) == (2, 20)


@pytest.mark.parametrize(
    ("source", "line", "message", "fix"),
    [
        ("().__class__", 1, "dunder attribute `__class__`", "API table"),
        ("x = torch.__dict__", 1, "dunder attribute `__dict__`", "API table"),
        ("getattr(torch, 'x')", 1, "unknown name `getattr`", "assign it first"),
        ("import os", 1, "`Import` statements", "no imports"),
        ("from torch import nn", 1, "`ImportFrom` statements", "no imports"),
        ("x = 1\ny = __import__('os')", 2, "dunder name `__import__`", None),
        ("eval('1')", 1, "unknown name `eval`", None),
        ("open('/etc/passwd')", 1, "unknown name `open`", None),
        ("x = torch.ones(2)\nx.__class__.__bases__", 2, "dunder attribute", None),
        ("t = type(torch.ones(1))", 1, "unknown name `type`", None),
        ("'{0.__class__}'.format(1)", 1, "attribute `format`", None),
        ("torch.load('f')", 1, "`torch.load` is not in the supported API", None),
        ("torch._C._functions", 1, "`torch._C._functions` is not in the supported API", None),
        ("Variable._execution_engine.run_backward()", 1,
         "attribute `run_backward` of the engine's", None),
        ("Variable.data", 1, "attribute `data` of the engine's `torch.autograd.Variable`",
         None),
        ("torch.tensr([1.0])", 1, "`torch.tensr`", "tensor"),
        ("nn.Lenear(2, 3)", 1, "`torch.nn.Lenear`", "Linear"),
        ("x = torch.ones(2)\nx.bakward()", 2, "attribute `bakward`", "backward"),
        ("x = torch.ones(2)\nx._version = 3", 2, "cannot assign to attribute `_version`",
         "grad, grad_dtype, requires_grad"),
        ("torch = 1", 1, "reserved name `torch`", None),
        # a class named like a root would be shadowed by it: `F.apply` read as nn.functional's
        ("class F(torch.autograd.Function):\n    pass", 1, "cannot name a class `F`",
         "another class name"),
        ("x = torch.ones(2)\ny = ~x", 2, "operator Invert is not supported", "- + not"),
        ("while True:\n    pass", 1, "`While` statements", "range"),
        ("if 1:\n    pass", 1, "`If` statements", None),
        ("@staticmethod\ndef f():\n    pass", 2, "plain positional parameters", "def f(grad)"),
        ("x = [i for i in range(3)]", 1, "`ListComp` expressions", None),
        ("d = {1: 2}\nx = {**d}", 2, "`**` in a dict display", "key: value"),
        ("x = torch.ones(1)\nd = {x: 1}", 2, "key must be a string, int or bool literal",
         "literal"),
        ("d = {1.5: 1}", 1, "key must be a string, int or bool literal", "literal"),
        ("for i in range(1000):\n    pass", 1, "exceeds", None),
        ("for i in x:\n    pass", 1, "only `for NAME in range(...)`", None),
        ("for i in ():\n    pass", 1, "takes 1 to 64 values", None),
        ("for i in (*x,):\n    pass", 1, "none starred", None),
        ("return 1", 1, "`return` outside", None),
        ("x = (1,\n", 1, "syntax error", "valid Python"),
        ("class A:\n    pass", 1, "derive from torch.autograd.Function", None),
        ("x = b'a'", 1, "constant", None),
        ('with raises("backward_twice") as g:\n    pass', 1, "takes no `as`", None),
        ("torch.ones(*[2])", 1, "`*args`", None),
        ("x = y = 1", 1, "chained assignment", None),
        ("x = 1\nx //= 2", 2, "augmented assignment", None),
        ("with raises('backward_twise'):\n    pass", 1, "unknown error kind", "backward_twice"),
        ("with warns('leaf_inplace'):\n    pass", 1, "unknown warning kind",
         "nonleaf_grad_access"),
        ("k = 'leaf_inplace'\nwith raises(k):\n    pass", 2, "one kind name as a string", None),
        ("with raises('backward_twice', type='GradcheckEror'):\n    pass", 1,
         "unknown exception class 'GradcheckEror'", "GradcheckError"),
        ("with raises('backward_twice', type=RuntimeError):\n    pass", 1,
         "a class name as a string", None),
        ("with warns('nonleaf_grad_access', type='RuntimeError'):\n    pass", 1,
         "one kind name as a string", None),
        ("with warns('nonleaf_grad_access', count=0):\n    pass", 1,
         "takes a positive int literal", None),
        ("with raises('backward_twice', count=1):\n    pass", 1,
         "one kind name as a string", None),
    ],
)
def test_rejections_name_line_and_fix(source: str, line: int, message: str,
                                      fix: str | None) -> None:
    with pytest.raises(CaseError) as info:
        parse(source)
    err = info.value
    assert err.line == line
    assert message in err.message
    if fix is not None:
        assert err.fix is not None and fix in err.fix


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


def test_error_moves_into_file_coordinates() -> None:
    with pytest.raises(CaseError) as info:
        parse("x = 1\ny = eval('x')\n")
    moved = info.value.at("cases/a.yaml", 4)
    assert str(moved).startswith("cases/a.yaml:6: unknown name `eval`")


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


def test_ellipsis_is_an_index_and_nothing_else() -> None:
    src = "x = torch.ones(2, 3)\ny = x[..., 0]\nz = x[[0], ...]\n"
    program = parse(src)
    assert to_source(program) == src
    assert parse(to_source(program)) == program
    with pytest.raises(CaseError, match="constant Ellipsis"):
        parse("x = ...\n")


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


def test_a_table_path_may_pass_through_an_api_object() -> None:
    # torch.autograd.Variable is a function of the table, and the table also holds paths
    # through it: the engine's handle for final callbacks
    program = parse("Variable._execution_engine.queue_callback(lambda: None)")
    stmt = program.body[0]
    assert isinstance(stmt, ir.ExprStmt) and isinstance(stmt.value, ir.Call)
    assert parse(to_source(program)) == program


@pytest.mark.parametrize(
    ("source", "suggested", "not_suggested"),
    [
        # the statement's own target is not bound yet when its value runs (red-team N6)
        ("s = sum(range(3))", None, "s"),
        ("for idx in range(idy):\n    pass", None, "idx"),
        ("sums = 1\ns = sum(range(3))", "sums", "s"),
        # bound by an earlier statement too: a fair suggestion
        ("s = 1\ns = sun + 1", "s", None),
    ],
)
def test_did_you_mean_suggests_only_names_bound_elsewhere(source: str, suggested: str | None,
                                                          not_suggested: str | None) -> None:
    with pytest.raises(CaseError) as info:
        parse(source)
    fix = info.value.fix or ""
    near = fix.removeprefix("did you mean ").removesuffix("?").split(", ") \
        if fix.startswith("did you mean") else []
    if suggested is not None:
        assert suggested in near, fix
    if not_suggested is not None:
        assert not_suggested not in near, fix


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


def test_del_takes_the_tensor_attributes_torch_deletes_or_refuses() -> None:
    src = "x = torch.ones(1, requires_grad=True)\ndel x.grad\n"
    program = parse(src)
    assert program.body[1] == ir.Delete(ir.Name("x"), "grad")
    assert to_source(program) == src
    with pytest.raises(CaseError, match="`Delete` statements"):
        parse("x = torch.ones(1)\ndel x\n")
    with pytest.raises(CaseError, match="`Delete` statements"):
        parse("x = torch.ones(1)\ndel x.shape\n")
    with pytest.raises(CaseError, match="value the program made"):
        parse("del F.grad\n")   # an engine module's attribute, shared by every run
    with pytest.raises(CaseError, match="value the program made"):
        parse("f = torch.nn.functional\ndel f.grad\n")


def test_dict_display_round_trips() -> None:
    program = parse('inp = {"tensor": torch.randn(5, 5), 2: [1]}\nt = inp["tensor"]\n')
    value = program.body[0].value  # type: ignore[attr-defined]
    assert isinstance(value, ir.Dict) and value.keys == (ir.Const("tensor"), ir.Const(2))
    assert parse(to_source(program)) == program
