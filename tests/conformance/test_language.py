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


def test_a_product_loop_is_nested_loops_in_products_order() -> None:
    """`for a, b in product(X, Y):` (itertools.product, as the tests import it) is the loop
    over X holding the loop over Y; `repeat=N` repeats the tuples; it prints as those loops."""
    nested = parse("for a in (True, False):\n    for b in (1, -2.5, 'x', None):\n"
                   "        y = a\n")
    assert parse("for a, b in product((True, False), [1, -2.5, 'x', None]):\n"
                 "    y = a\n") == nested
    repeated = parse("for a, b in product((0, 1), repeat=2):\n    pass\n")
    assert repeated == parse("for a in (0, 1):\n    for b in (0, 1):\n        pass\n")
    assert parse(to_source(repeated)) == repeated
    loop = repeated.body[0]
    assert isinstance(loop, ir.For) and loop.line == 1 and loop.body[0].line == 1


@pytest.mark.parametrize(("source", "says"), [
    # a non-literal could differ between product's one evaluation and an inner loop's many
    ("n = 1\nfor a, b in product((1, 2), (n,)):\n    pass\n", "literals"),
    ("for a, b in product((1, 2), range(2)):\n    pass\n", "literals"),
    ("for a, b in product((1, 2), ()):\n    pass\n", "literals"),
    ("for t in product((1, 2), (3, 4)):\n    pass\n", "one variable per tuple"),
    ("for a, b in product((1, 2)):\n    pass\n", "one variable per tuple"),
    ("for a, b in product((1, 2), repeat=0):\n    pass\n", "repeat=N"),
    ("for a, b in product((1, 2), times=2):\n    pass\n", "repeat=N"),
])
def test_a_product_loop_refuses_what_nested_loops_would_not_mean(source: str,
                                                                 says: str) -> None:
    with pytest.raises(CaseError) as err:
        parse(source)
    assert says in str(err.value) and "product((True, False), (1, 2))" in str(err.value)


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


def test_error_moves_into_file_coordinates() -> None:
    with pytest.raises(CaseError) as info:
        parse("x = 1\ny = eval('x')\n")
    moved = info.value.at("cases/a.yaml", 4)
    assert str(moved).startswith("cases/a.yaml:6: unknown name `eval`")


def test_ellipsis_is_an_index_and_nothing_else() -> None:
    src = "x = torch.ones(2, 3)\ny = x[..., 0]\nz = x[[0], ...]\n"
    program = parse(src)
    assert to_source(program) == src
    assert parse(to_source(program)) == program
    with pytest.raises(CaseError, match="constant Ellipsis"):
        parse("x = ...\n")


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


def test_slice_objects_round_trip_and_take_only_literals() -> None:
    """`slice(None)`, `slice(a, b, c)` with literal ints or None, as the tests build index
    tuples; anything else (a name, a float, a keyword, no or four arguments) is refused."""
    source = "x = torch.ones(3, 4)\nidx = (slice(None), slice(1, -1, 2))\ny = x[idx]\n"
    assert to_source(parse(source)) == source
    for bad in ("slice()", "slice(1, 2, 3, 4)", "slice(1.5)", "slice(True)", "slice(-None)",
                "slice(stop=1)", "slice(len(x))"):
        with pytest.raises(CaseError, match="literal ints or None"):
            parse(f"x = torch.ones(3)\ny = {bad}\n")


def test_a_def_takes_literal_defaults_for_its_last_parameters() -> None:
    source = "def fn(x, k=2, retain=True, y=None):\n    return x * k\n"
    program = parse(source)
    assert [d.value for d in program.body[0].defaults]  # type: ignore[union-attr] == [2, True, None]
    assert to_source(program) == source
    for bad in ("def fn(x, k=len(x)):\n    pass\n", "def fn(x, k='a'):\n    pass\n"):
        with pytest.raises(CaseError, match="a default of fn is a literal"):
            parse(bad)
    with pytest.raises(CaseError, match="plain positional"):
        parse("def fn(x, k=1, *args):\n    pass\n")
