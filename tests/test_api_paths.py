"""Every API path of the closed table (conformance/case/api.py) resolves on both engines, torch and
reference_engine: each function path through Engine.resolve, and each attribute on an object
of the kind the table names it for (a tensor, a grad_fn node, a Function's ctx, ...). A path
that one engine lacks would make every case using it `unsupported` there."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from conformance.case import api
from conformance.run.engine import load_engine
from conformance.run.sandbox import WEAKREF

ENGINES = ("torch", "reference_engine")

# The grad_fn node carrying each attribute only some nodes have: the generated `_saved_*`
# properties, AccumulateGrad's `variable`.
_SAVED_BY = {
    "variable": lambda t, x: (x * 2).grad_fn.next_functions[0][0],
    "_saved_self": lambda t, x: (x * x).grad_fn,
    "_saved_other": lambda t, x: (x * x).grad_fn,
    "_saved_result": lambda t, x: t.exp(x).grad_fn,
    "_saved_exponent": lambda t, x: (x ** 2.0).grad_fn,
    "_saved_mat2": lambda t, x: t.mm(x, x.reshape(2, 1)).grad_fn,
    # non-tensor saved values: stack's dim, mean's input sizes (MulBackward0 has neither)
    "_saved_dim": lambda t, x: t.stack([x, x], 1).grad_fn,
    "_saved_self_sym_sizes": lambda t, x: x.mean().grad_fn,
}


def _node_with(attr: str, t: Any, x: Any, probe: Any, y: Any) -> Any:
    """A grad_fn node that has `attr`: a custom Function's for its saved_tensors."""
    if attr in ("saved_tensors", "_raw_saved_tensors"):
        return probe.grad_fn
    saved = attr.replace("_raw_saved_", "_saved_")
    return _SAVED_BY[saved](t, x) if saved in _SAVED_BY else y.grad_fn


def _samples(t: Any) -> dict[str, list[tuple[str, Any]]]:
    """For each attribute category of the table, (attribute, object) pairs to look up on
    engine `t`'s own objects."""
    x = t.tensor([[1.0, 2.0]], requires_grad=True)  # 2-d: `.T` is no deprecated use
    y = x * 2
    seen: dict[str, Any] = {}

    class Probe(t.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            seen["ctx"] = ctx
            return a * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    probe = Probe.apply(x)
    linear = t.nn.Linear(2, 1)
    handle = y.register_hook(lambda g: None)
    handle.remove()
    with t.autograd.graph.allow_mutation_on_saved_tensors() as mutation:
        pass
    sac_contexts: list[Any] = []
    C = t.utils.checkpoint
    t.utils.checkpoint.checkpoint(
        lambda a: a.sin(), x, use_reentrant=False,
        context_fn=lambda: C.create_selective_checkpoint_contexts(
            lambda ctx, op, *args, **kwargs: sac_contexts.append(ctx)))
    attrs = api.OBJECT_ATTRIBUTES
    return {
        "tensor method": [(a, y) for a in attrs["tensor method"]],
        # a real tensor has no imaginary part to read (torch raises): a complex one has;
        # grad_dtype is read on a leaf (a non-leaf raises)
        "tensor attribute": [(a, y * 1j if a == "imag" else
                              t.ones(1, requires_grad=True) if a == "grad_dtype" else y)
                             for a in attrs["tensor attribute"]],
        "grad_fn": [(a, _node_with(a, t, x, probe, y)) for a in attrs["grad_fn"]],
        "ctx": [(a, seen["ctx"]) for a in attrs["ctx"]],
        "module": [(a, linear) for a in attrs["module"]],
        "hook handle": [(a, handle) for a in attrs["hook handle"]],
        "max/min result": [(a, t.max(y.detach(), 1)) for a in attrs["max/min result"]],
        "Function class": [(a, Probe) for a in attrs["Function class"]],
        "gradient edge": [(a, t.autograd.graph.get_gradient_edge(y))
                          for a in attrs["gradient edge"]],
        "saved tensor": [(a, (x * x).grad_fn._raw_saved_self) for a in attrs["saved tensor"]],
        "unpacked dual": [(a, t.autograd.forward_ad.unpack_dual(y))
                          for a in attrs["unpacked dual"]],
        "allow mutation context": [(a, mutation) for a in attrs["allow mutation context"]],
        "storage": [(a, y.detach().storage()) for a in attrs["storage"]],
        "dtype": [(a, y.dtype) for a in attrs["dtype"]],
        "selective checkpoint context": [(a, sac_contexts[0])
                                         for a in attrs["selective checkpoint context"]],
        # the harness's own builtin, the same for every engine
        "weakref module": [(a, WEAKREF) for a in attrs["weakref module"]],
    }


def test_every_attribute_category_is_sampled() -> None:
    assert set(_samples(load_engine("torch").module)) == set(api.OBJECT_ATTRIBUTES)


@pytest.mark.parametrize("engine_name", ENGINES)
def test_every_function_path_resolves(engine_name: str) -> None:
    engine = load_engine(engine_name)
    lacking = []
    for path in sorted(api.FUNCTIONS | api.NAMESPACES):
        try:
            engine.resolve(path)
        except AttributeError:
            lacking.append(path)
    assert lacking == [], f"{engine_name} lacks {lacking}"


@pytest.mark.parametrize("engine_name", ENGINES)
def test_every_object_attribute_resolves(engine_name: str) -> None:
    samples = _samples(load_engine(engine_name).module)
    lacking = []
    for category, pairs in sorted(samples.items()):
        for attr, obj in sorted(pairs, key=lambda p: p[0]):
            try:
                with warnings.catch_warnings():  # `.grad` of a non-leaf warns; present
                    warnings.simplefilter("ignore")
                    getattr(obj, attr)
            except AttributeError:
                lacking.append(f"{category}: {attr} on {type(obj).__name__}")
    assert lacking == [], f"{engine_name} lacks {lacking}"


def test_the_flagged_rows_are_rows_of_the_table() -> None:
    # the interpreter's sized factories and seeded paths are flags of the table's rows
    assert api.SIZED_FACTORIES <= api.PURE_FUNCTIONS
    assert api.SEEDED <= api.FUNCTIONS


def test_the_harness_serves_every_seeded_path() -> None:
    from conformance.run.harness_builtins import HarnessBuiltins

    served = HarnessBuiltins(load_engine("reference_engine"), 0).seeded
    assert set(served) == api.SEEDED
    assert all(callable(f) for f in served.values())
