"""The interpreter on real torch: steps, outcomes, expectations, events, seeded values."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.case.language import parse
from conformance.run.compare import compare
from conformance.run.engine import load_engine
from conformance.run.evaluate import _check_warnings
from conformance.run.interpreter import run_program
from conformance.run.sandbox import CaseFailure, Expectation
from conformance.run.trace import ASSERTION, ERROR, LIMIT, OK, TensorSnapshot, Trace

TORCH = load_engine("torch")


def run(source: str, **kwargs: object) -> Trace:
    return run_program(TORCH, parse(source), **kwargs)  # type: ignore[arg-type]


def values(trace: Trace, name: str, step: int = -1) -> np.ndarray:
    snap = trace.steps[step].names[name]
    assert isinstance(snap, TensorSnapshot)
    return snap.values


def test_seeded_values_repeat_and_depend_on_the_seed() -> None:
    src = "a = torch.rand(2, 3)\nb = torch.randn_like(a)\n"
    one, two, other = run(src, seed=3), run(src, seed=3), run(src, seed=4)
    assert np.array_equal(values(one, "b"), values(two, "b"))
    assert not np.array_equal(values(one, "a"), values(other, "a"))
    reseeded = run("torch.manual_seed(5)\na = torch.rand(4)\ntorch.manual_seed(5)\n"
                   "b = torch.rand(4)\n")
    assert np.array_equal(values(reseeded, "a"), values(reseeded, "b"))


def test_item_dtype_is_the_default_dtype() -> None:
    trace = run("a = torch.rand(2)\nb = torch.tensor([1.0])\nc = torch.tensor([1])\n",
                dtype="float64")
    dtypes = {n: s.dtype for n, s in trace.steps[-1].names.items()
              if isinstance(s, TensorSnapshot)}
    assert dtypes == {"a": "torch.float64", "b": "torch.float64", "c": "torch.int64"}
    # and it is restored afterwards
    assert str(TORCH.module.get_default_dtype()) == "torch.float32"


def test_linear_parameters_come_from_the_harness_generator() -> None:
    trace = run("lin = nn.Linear(3, 2)\n", seed=1)
    w = trace.steps[0].names["lin.weight"]
    assert isinstance(w, TensorSnapshot) and w.type == "Parameter" and w.is_leaf
    expected = np.random.default_rng(1).uniform(-1 / np.sqrt(3), 1 / np.sqrt(3), (2, 3))
    assert np.allclose(w.values, expected)


def test_raises_absorbs_the_expected_kind_only() -> None:
    ok = run("x = torch.ones(2, requires_grad=True)\nwith raises('leaf_inplace'):\n"
             "    x.add_(1)\n    y = 1\nz = 2\n")
    assert ok.failure is None
    assert [s.line for s in ok.steps] == [1, 3, 2, 5]  # the body stops at the error
    assert ok.steps[1].outcome.status == ERROR and ok.steps[1].outcome.kind == "leaf_inplace"
    wrong = run("x = torch.ones(2, requires_grad=True)\nwith raises('backward_twice'):\n"
                "    x.add_(1)\n")
    assert wrong.failure is not None and wrong.failure.outcome.status == ASSERTION
    assert "got RuntimeError [leaf_inplace]" in str(wrong.failure.outcome.text)
    silent = run("with raises('backward_twice'):\n    x = 1\n")
    assert silent.failure is not None and "ran without error" in str(
        silent.failure.outcome.text)


def test_warns_and_the_recorded_warning() -> None:
    trace = run("x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
                "with warns('nonleaf_grad_access'):\n    g = y.grad\n")
    assert trace.failure is None
    (w,) = trace.steps[2].warnings
    assert (w.kind, w.category) == ("nonleaf_grad_access", "UserWarning")
    assert "Triggered internally" not in w.text
    missing = run("x = torch.ones(2, requires_grad=True)\nwith warns('nonleaf_grad_access'):\n"
                  "    g = x.grad\n")
    assert missing.failure is not None and missing.failure.outcome.status == ASSERTION


def test_no_warnings_fails_on_any_warning_of_its_block() -> None:
    quiet = run("x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
                "with no_warnings():\n    g = x.grad\n    z = y + 1\n")
    assert quiet.failure is None
    loud = run("x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
               "with no_warnings():\n    z = y + 1\n    g = y.grad\n")
    assert loud.failure is not None and loud.failure.outcome.status == ASSERTION
    assert "expected no warning; saw ['nonleaf_grad_access']" in str(loud.failure.outcome.text)
    in_method = run("""\
class Loud(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with torch.enable_grad():
            with no_warnings():
                g = (x * 2).grad
        return x * 1
    @staticmethod
    def backward(ctx, g):
        return g
x = torch.ones(1, requires_grad=True)
y = Loud.apply(x)
""")
    assert in_method.failure is not None and in_method.failure.line == 12
    assert "expected no warning" in str(in_method.failure.outcome.text)


def test_warns_with_a_count_fails_on_more_or_other_warnings() -> None:
    # torch's tests' `len(w) == N`: exactly N warnings, each of the kind
    prefix = "x = torch.ones(2, requires_grad=True)\ny = x * 2\n"
    once = run(prefix + "with warns('nonleaf_grad_access', count=1):\n    g = y.grad\n")
    assert once.failure is None
    twice = run(prefix + "with warns('nonleaf_grad_access', count=1):\n    g = y.grad\n"
                "    h = y.grad\n")
    assert twice.failure is not None and twice.failure.outcome.status == ASSERTION
    assert "expected exactly 1 warning(s)" in str(twice.failure.outcome.text)
    assert run(prefix + "with warns('nonleaf_grad_access', count=2):\n    g = y.grad\n"
               "    h = y.grad\n").failure is None
    other = Expectation(True, "nonleaf_grad_access", None, 1)
    with pytest.raises(CaseFailure, match="expected exactly 1"):
        _check_warnings(other, ["nonleaf_grad_access", "mark_dirty_not_input"],
                        warn_always=True)


def test_warns_of_a_once_per_process_kind() -> None:
    # under warn-always (every run on torch) it is given, and checked, at every call
    program = ("b = torch.ones(2, requires_grad=True)\nc = b * b\n"
               "with warns('create_graph_reference_cycle'):\n"
               "    c.backward(torch.ones_like(c), create_graph=True)\n")
    assert run(program).failure is None and run(program).failure is None
    # an engine run without warn-always gives it once per process: not checked there
    once = Expectation(True, "create_graph_reference_cycle")
    _check_warnings(once, [], warn_always=False)
    with pytest.raises(CaseFailure, match="expected a warning of kind"):
        _check_warnings(once, [], warn_always=True)


def test_observation_does_not_warn_or_bump_versions() -> None:
    trace = run("x = torch.ones(2, requires_grad=True)\ny = x * 2\nz = y + 1\n")
    assert all(not s.warnings for s in trace.steps)
    y = trace.steps[-1].names["y"]
    assert isinstance(y, TensorSnapshot) and y.version == 0 and y.grad is None


def test_hook_and_function_events() -> None:
    trace = run("""\
class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g * 2
x = torch.ones(2, requires_grad=True)
y = Double.apply(x)
h = y.register_hook(lambda grad: grad + 1)
y.sum().backward()
""")
    assert trace.failure is None
    assert [e.source for e in trace.steps[2].events] == ["Double.forward"]
    backward = trace.steps[4].events
    assert [e.source for e in backward] == ["lambda@10:20", "Double.backward"]
    hook = backward[0]
    assert np.array_equal(hook.received["arg0"].values, [1.0, 1.0])  # type: ignore[union-attr]
    assert np.array_equal(hook.returned["return"].values, [2.0, 2.0])  # type: ignore[union-attr]
    assert np.array_equal(values(trace, "x").shape, (2,))
    x = trace.steps[4].names["x"]
    assert isinstance(x, TensorSnapshot) and x.grad is not None
    assert np.array_equal(x.grad.values, [4.0, 4.0])


def test_loops_record_each_iteration() -> None:
    trace = run("x = torch.zeros(3)\nfor i in range(3):\n    x[i] = i\n")
    assert [s.line for s in trace.steps] == [1, 3, 3, 3, 2]
    assert np.array_equal(values(trace, "x"), [0.0, 1.0, 2.0])
    x = trace.steps[-1].names["x"]
    assert isinstance(x, TensorSnapshot) and x.version == 3


def test_a_loop_over_a_written_tuple_takes_each_value_in_order() -> None:
    trace = run("x = torch.zeros(3)\nn = 0\nfor v in (2, n + 5, 1):\n    x[n] = v\n"
                "    n = n + 1\n")
    # the values are evaluated once, before the first iteration (n + 5 is 5)
    assert np.array_equal(values(trace, "x"), [2.0, 5.0, 1.0])
    assert [s.line for s in trace.steps] == [1, 2, 4, 5, 4, 5, 4, 5, 3]


def test_aliases_and_inplace_identity() -> None:
    trace = run("a = torch.ones(2)\nb = a\nc = a.add_(1)\nd = a.clone()\n")
    names = trace.steps[-1].names
    assert [names[n].alias for n in "abcd"] == [None, "a", "a", None]  # type: ignore[union-attr]


def test_program_errors_are_outcomes_not_crashes() -> None:
    trace = run("x = torch.ones(2)\ny = x.reshape(3)\nz = 1\n")
    assert trace.failure is not None and trace.failure.line == 2
    assert trace.failure.outcome.status == ERROR and trace.failure.outcome.kind == "shape_mismatch"
    assert len(trace.steps) == 2
    unbound = run("for i in range(0):\n    q = 1\nr = q\n")
    assert unbound.failure is not None and "before it is assigned" in str(
        unbound.failure.outcome.text)


def test_ok_outcome_for_grad_mode_contexts() -> None:
    trace = run("x = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n    y = x * 2\n"
                "z = x * 2\n")
    assert [s.outcome.status for s in trace.steps] == [OK] * 4
    y, z = trace.steps[-1].names["y"], trace.steps[-1].names["z"]
    assert isinstance(y, TensorSnapshot) and not y.requires_grad
    assert isinstance(z, TensorSnapshot) and z.requires_grad and z.grad_fn == "MulBackward0"


def test_graph_signature_shows_shared_nodes_constants_and_output_numbers() -> None:
    trace = run("a = torch.ones(2, requires_grad=True)\nc = torch.ones(2)\n"
                "b = (a * 2) + (a * c)\nu = b.unbind()\nv = u[1] * 1\n")
    names = trace.steps[-1].names
    b, v = names["b"], names["v"]
    assert isinstance(b, TensorSnapshot) and isinstance(v, TensorSnapshot)
    assert b.graph == "AddBackward0(MulBackward0(AccumulateGrad, None), MulBackward0(#2, None))"
    assert v.graph is not None and v.graph.startswith("MulBackward0(UnbindBackward0(")
    assert "@1" in v.graph


def test_efficient_zero_tensors_are_observed() -> None:
    # abs's double backward hands back torch's ZeroTensor, which plain .numpy() refuses
    trace = run("x = torch.tensor([1.0, -2.0], requires_grad=True)\n"
                "g, = torch.autograd.grad(x.abs().sum(), x, create_graph=True)\n"
                "gg, = torch.autograd.grad(g.sum(), x)\n")
    assert trace.failure is None
    assert np.array_equal(values(trace, "gg"), [0.0, 0.0])


def test_gradients_bound_to_names_are_engine_made() -> None:
    trace = run("x = torch.ones(2, requires_grad=True)\ny = (x * x).sum()\n"
                "g, = torch.autograd.grad(y, [x], retain_graph=True)\ny.backward()\n"
                "h = x.grad\nc = x * 1\n")
    names = trace.steps[-1].names
    made = {n: s.engine_made for n, s in names.items() if isinstance(s, TensorSnapshot)}
    assert made == {"g": True, "h": True, "x": False, "y": False, "c": False}


# A Function whose methods `return` from inside `with` and `for` blocks (issue 20: the
# return reached the statement handler as an exception, "Exception [unknown]: tensor([2.])").
RETURN_IN_BLOCKS = """\
class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with torch.no_grad():
            return x * 2
    @staticmethod
    def backward(ctx, g):
        for i in range(3):
            with torch.enable_grad():
                return g * 2
x = torch.ones(1, requires_grad=True)
y = Twice.apply(x)
y.sum().backward()
"""


def test_return_leaves_with_and_for_blocks_of_a_method() -> None:
    trace = run(RETURN_IN_BLOCKS)
    assert trace.failure is None, trace.failure
    # the methods' inner statements are not steps: one step per top-level statement
    assert [s.line for s in trace.steps] == [1, 11, 12, 13]
    x = trace.steps[-1].names["x"]
    assert isinstance(x, TensorSnapshot) and x.grad is not None
    assert np.array_equal(x.grad.values, [2.0])
    assert [e.source for e in trace.steps[3].events] == ["Twice.backward"]
    # the grad mode the `with` set inside forward was restored on the way out
    assert TORCH.module.is_grad_enabled()


SAVED_HOOKS_FUNCTION = """\
class Keep(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 10, lambda t: t):
            ctx.save_for_backward(x)
            {return_inside}
        {return_after}
    @staticmethod
    def backward(ctx, g):
        s, = ctx.saved_tensors
        h = (s * 3).sum()
        return g * s
x = torch.ones(1, requires_grad=True) * 2
y = Keep.apply(x)
y.sum().backward()
"""


def test_return_inside_saved_tensors_hooks_in_a_method() -> None:
    inside = run(SAVED_HOOKS_FUNCTION.format(return_inside="return x.clone()",
                                             return_after="pass"))
    after = run(SAVED_HOOKS_FUNCTION.format(return_inside="pass",
                                            return_after="return x.clone()"))
    assert inside.failure is None and after.failure is None, inside.failure
    assert not inside.state_changes  # leaving forward by `return` popped the hooks
    assert [s.line for s in inside.steps] == [1, 13, 14, 15]
    # returning from inside the block or after it is the same program to torch
    same = compare(after, inside, "float32")
    assert same.divergence is None and same.message is None, same


def test_raises_and_warns_inside_a_method() -> None:
    program = """\
class Checked(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with raises("{kind}"):
            x.reshape(3)
        with torch.enable_grad():
            with warns("nonleaf_grad_access"):
                g = (x * 2).grad
        return x * 1
    @staticmethod
    def backward(ctx, g):
        return g
x = torch.ones(1, requires_grad=True)
y = Checked.apply(x)
"""
    trace = run(program.format(kind="shape_mismatch"))
    assert trace.failure is None, trace.failure
    # the warning the method gave is its calling statement's
    assert [w.kind for w in trace.steps[2].warnings] == ["nonleaf_grad_access"]
    wrong = run(program.format(kind="backward_twice"))
    assert wrong.failure is not None and wrong.failure.line == 14
    assert wrong.failure.outcome.status == ASSERTION
    assert "expected an error of kind 'backward_twice'; got RuntimeError [shape_mismatch]" in \
        str(wrong.failure.outcome.text)


def test_raises_with_a_type_checks_the_error_class_and_its_bases() -> None:
    """`raises(kind, type="Name")`: the kind, and the error's class or a base named Name;
    torch's gradcheck failure is a GradcheckError, a RuntimeError."""
    program = """\
fn = lambda x: (lambda y: (y.register_hook(lambda g: g + 1e-2), y)[1])(x.clone())
x = torch.ones(2, 2, requires_grad=True)
with raises("gradcheck_jacobian_mismatch", type="{name}"):
    torch.autograd.gradcheck(fn, (x,), fast_mode=False)
class Checked(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with raises("shape_mismatch", type="{inner}"):
            x.reshape(3)
        return x * 1
    @staticmethod
    def backward(ctx, g):
        return g
y = Checked.apply(x)
"""
    for name in ("GradcheckError", "RuntimeError", "Exception"):
        trace = run(program.format(name=name, inner="RuntimeError"))
        assert trace.failure is None, trace.failure
    wrong = run(program.format(name="ValueError", inner="RuntimeError"))
    assert wrong.failure is not None and wrong.failure.line == 3
    assert wrong.failure.outcome.status == ASSERTION
    # (the outcome names the error by its builtin class, as the trace compares it)
    assert ("expected an error of kind 'gradcheck_jacobian_mismatch' of type ValueError; "
            "got RuntimeError [gradcheck_jacobian_mismatch]") in str(wrong.failure.outcome.text)
    in_method = run(program.format(name="GradcheckError", inner="GradcheckError"))
    assert in_method.failure is not None and in_method.failure.line == 14
    assert "of type GradcheckError; got RuntimeError [shape_mismatch]" in \
        str(in_method.failure.outcome.text)


def test_a_loop_beyond_its_bound_is_a_limit_at_run_time() -> None:
    for bound in ("10 ** 10", "10 ** 100"):
        trace = run(f"n = {bound}\nfor i in range(n):\n    x = 1\n")
        assert trace.failure is not None and trace.failure.line == 2
        assert trace.failure.outcome.status == LIMIT
        assert "the case language allows 64 per loop" in str(trace.failure.outcome.text)


def test_a_hook_handle_is_a_context_manager() -> None:
    """torch's RemovableHandle: leaving the block removes the hook."""
    trace = run("""\
x = torch.ones(2, requires_grad=True)
with x.register_hook(lambda g: g * 3):
    x.sum().backward()
x.sum().backward()
""")
    assert trace.failure is None, trace.failure
    x = trace.steps[-1].names["x"]
    assert isinstance(x, TensorSnapshot) and x.grad is not None
    assert np.array_equal(x.grad.values, [4.0, 4.0])  # 3 with the hook, then 1 without


def test_a_resource_warning_is_not_a_statements_warning() -> None:
    # The garbage collector warns of an unclosed file of anything in the process at whatever
    # statement it runs: recording it made a verdict depend on the items run before.
    program = parse("a = torch.tensor([1.0])\nb = torch.exp(a)\nc = torch.tensor([1.0]) * 2\n")
    leaky = run_program(load_engine("tests.conformance.engine_leaks_resource"), program)
    assert [s.warnings for s in leaky.steps] == [[], [], []]
    assert compare(run_program(TORCH, program), leaky, "float32").divergence is None


def test_a_def_binds_keyword_arguments_as_python_does() -> None:
    # torch's checkpoint passes its keyword arguments on to the function (test_autograd.py
    # test_checkpointing_without_reentrant: checkpoint(module, data=x, use_reentrant=False))
    trace = run("def f(a, b):\n  return a * 10 + b\nr = f(1, b=2)\ns = f(b=3, a=4)\n"
                "x = torch.ones(2, requires_grad=True)\n"
                "y = torch.utils.checkpoint.checkpoint(f, x, b=x, use_reentrant=False)\n"
                "with raises('python_type_error'):\n  f(1, a=2)\n"
                "with raises('python_type_error'):\n  f(b=2)\n")
    assert trace.failure is None
    assert values(trace, "y").tolist() == [11.0, 11.0]
    last = trace.steps[-1].names
    assert (last["r"].value, last["s"].value) == (12, 43)  # type: ignore[union-attr]
    texts = [s.outcome.text for s in trace.steps if s.outcome.status == ERROR]
    assert texts == ["f() got multiple values for argument 'a'",
                     "f() missing 1 required positional argument: 'a'"]


def test_a_dict_display_is_evaluated_and_observed_by_item() -> None:
    trace = run('inp = {"tensor": torch.ones(2), 2: [1]}\nt = inp["tensor"] * 2\n')
    names = trace.steps[-1].names
    assert names["inp"].kind == "dict" and names["inp"].value == 2  # type: ignore[union-attr]
    assert values(trace, "inp['tensor']").tolist() == [1.0, 1.0]
    assert values(trace, "t").tolist() == [2.0, 2.0]
    assert names["inp[2][0]"].value == 1  # type: ignore[union-attr]


def test_augmented_store_into_a_tuple_item_runs_the_op_then_raises_pythons_error() -> None:
    # as in Python: `t[0] += v` runs t[0].__iadd__(v) (which may raise first: an in-place
    # add on an output of unbind), then the tuple refuses the store
    trace = run("a = torch.zeros(2)\nt = (a,)\nt[0] += 1\n")
    outcome = trace.steps[-1].outcome
    assert (outcome.status, outcome.type) == (ERROR, "TypeError")
    assert outcome.text == "'tuple' object does not support item assignment"
    assert values(trace, "a").tolist() == [1.0, 1.0]
    trace = run("x = torch.zeros(2, 2)\nres = x.unbind(0)\n"
                "res[0] += torch.ones(2, requires_grad=True)\n")
    outcome = trace.steps[-1].outcome
    assert (outcome.status, outcome.kind) == (ERROR, "no_grad_view_inplace")
    assert "output of a function that returns multiple views" in (outcome.text or "")
