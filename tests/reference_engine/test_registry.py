"""The op registry agrees with what is made from it and with the tables checked against it.

Made from it by reference_engine/__init__.py: `torch.<op>`, `__all__`,
Tensor's delegating methods and in-place forms; by conformance/case/api.py, the ops a case may
call (so each row must be torch's too); the generator's op table (conformance/gen/strategies.py,
tested in tests/conformance/test_strategies.py). Checked against it: that every
differentiable op and in-place form has a gradcheck row (test_gradcheck.OPS).
"""

from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any

import pytest

import reference_engine as torch
from conformance.case import api
from reference_engine import registry
from reference_engine.registry import OPS, OpRow
from tests.reference_engine.gradcheck_rows import OPS as GRADCHECK

ROW_IDS = [r.name for r in OPS]


def _forward(row: OpRow) -> object:
    return getattr(importlib.import_module(f"reference_engine.{row.module}"), row.attr)


def _at(module: Any, path: str) -> Any:
    """The object at a row's dotted name under `module` (`nn.functional.relu`)."""
    return functools.reduce(getattr, path.split("."), module)


def test_names_are_unique() -> None:
    names = [r.name for r in OPS] + [n for r in OPS if (n := r.inplace_name)]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("row", OPS, ids=ROW_IDS)
def test_a_function_row_is_the_package_export(row: OpRow) -> None:
    forward = _forward(row)
    assert callable(forward)
    if row.function:
        # the export is the forward, behind the check that refuses None for a tensor input;
        # a namespaced row's is in its namespace (`torch.nn.functional.relu`), not __all__
        assert inspect.unwrap(_at(torch, row.name)) is forward
        assert (row.name in torch.__all__) == (row.namespace == "")
    else:   # (torch.float and torch.double are dtypes; Tensor.float/double conversions)
        assert row.name not in torch.__all__ or isinstance(getattr(torch, row.name),
                                                           torch.dtype)


def test_a_namespaced_row_is_its_namespaces_function_only() -> None:
    """`nn.functional.relu` is torch.nn.functional.relu: no `torch.relu` made from it, no
    method; the namespaces the case language opens are the registry's."""
    namespaced = [r for r in OPS if r.namespace]
    assert namespaced, "no namespaced row to check"
    for row in namespaced:
        assert row.function and not row.method and row.inplace is None
        assert row.namespace in registry.NAMESPACES
        assert f"torch.{row.namespace}" in api.NAMESPACES
        assert f"torch.{row.name}" in api.FUNCTIONS
        # Pure unless it writes an input (F.batch_norm's running stats in training).
        pure = f"torch.{row.name}" in api.PURE_FUNCTIONS
        assert pure == (row.name not in api.WRITES_AN_INPUT), row.name
    with pytest.raises(AssertionError, match="a namespaced row is a function only"):
        registry._row("special.entr", "ops.special", method=True)


@pytest.mark.parametrize("row", OPS, ids=ROW_IDS)
def test_a_method_row_is_the_tensor_method(row: OpRow) -> None:
    if row.method:
        assert inspect.unwrap(getattr(torch.Tensor, row.name)) is _forward(row)
        first = next(iter(inspect.signature(_forward(row)).parameters))
        assert first == "self", "a method's forward takes the tensor first"
    if row.inplace is not None:
        name = row.inplace_name
        assert name is not None
        module = importlib.import_module(f"reference_engine.{row.inplace}")
        assert inspect.unwrap(getattr(torch.Tensor, name)) is getattr(module, name)


def test_the_exports_are_the_rows_and_the_rest() -> None:
    """__all__ holds each function row of torch's own once, and nothing it lists is missing."""
    assert sorted(torch.__all__) == torch.__all__
    assert len(set(torch.__all__)) == len(torch.__all__)
    assert {n for n in registry.FUNCTIONS if "." not in n} <= set(torch.__all__)
    assert all(hasattr(torch, n) for n in torch.__all__)


def _has_gradcheck_row(name: str) -> bool:
    """A row named for the op, or for one of its variants (`sum_dim`, `matmul_1d_2d`)."""
    return any(key == name or key.startswith(name + "_") for key in GRADCHECK)


@pytest.mark.parametrize("row", [r for r in OPS if r.differentiable],
                         ids=[r.name for r in OPS if r.differentiable])
def test_every_differentiable_op_has_a_gradcheck_row(row: OpRow) -> None:
    assert _has_gradcheck_row(row.name), f"add a row for {row.name} to test_gradcheck.OPS"
    if row.inplace_name is not None:
        assert row.inplace_name in GRADCHECK, f"add a row for {row.inplace_name}"


def _api(prefix: str) -> set[str]:
    return {p[len(prefix):] for p in api.FUNCTIONS
            if p.startswith(prefix) and "." not in p[len(prefix):]}


@pytest.mark.parametrize("row", OPS, ids=ROW_IDS)
def test_every_row_is_torch_api(row: OpRow) -> None:
    """Case programs may call every row (conformance/case/api.py reads them), so each is torch's:
    `torch.<name>` for a function row, `Tensor.<name>` and `<name>_` for its methods."""
    import torch as real_torch
    if row.function:
        assert callable(_at(real_torch, row.name))
    if row.method:
        assert callable(getattr(real_torch.Tensor, row.name))
    if row.inplace_name is not None:
        assert callable(getattr(real_torch.Tensor, row.inplace_name))


def test_every_api_name_exists_on_the_reference_engine() -> None:
    """The harness's table names nothing the engine lacks (torch.X and Tensor.X)."""
    assert {n for n in _api("torch.") if not hasattr(torch, n)} == set()
    missing = set()
    for path in api.FUNCTIONS:   # dotted paths too: the registry's namespaced rows
        try:
            _at(torch, path.removeprefix("torch."))
        except AttributeError:
            missing.add(path)
    assert missing == set()
    methods = api.OBJECT_ATTRIBUTES["tensor method"]
    assert {n for n in methods if not hasattr(torch.Tensor, n)} == set()


def test_every_feature_is_in_the_vocabulary() -> None:
    from conformance.case.vocabulary import FEATURES
    assert {r.feature for r in OPS} <= set(FEATURES)
