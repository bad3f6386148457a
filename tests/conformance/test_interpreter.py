"""The interpreter on real torch: steps, outcomes, events, seeded values (its expectation
blocks, raises/warns/no_warnings: test_interpreter_expectation_blocks.py)."""

from __future__ import annotations

import numpy as np

from conformance.case.language import parse
from conformance.run.compare import compare
from conformance.run.engine import load_engine
from conformance.run.interpreter import run_program
from conformance.run.trace import ERROR, LIMIT, OK, TensorSnapshot, Trace

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


def test_a_product_loop_runs_every_pair_in_products_order() -> None:
    trace = run("x = torch.zeros(4)\nn = 0\nfor a, b in product((10, 20), (1, 2)):\n"
                "    x[n] = a + b\n    n = n + 1\n")
    assert np.array_equal(values(trace, "x"), [11.0, 12.0, 21.0, 22.0])


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
