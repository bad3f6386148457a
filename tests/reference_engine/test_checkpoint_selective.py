"""Selective activation checkpointing's op-level view: the ops a policy is asked about, in
order and by name, are torch's aten ops (reference_engine/utils/checkpoint_selective.py,
ops/aten.py); the op objects and their errors read as torch's."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import reference_engine

FUNCTIONS = {
    "unary chain": lambda x: x.sin().cos().exp(),
    "operators": lambda x: -(x * x + x) / x - x,
    "in place": lambda x: x.sin().mul_(2).cos(),
    "two outputs": lambda x: torch_like(x).var_mean(x)[0],
    "view": lambda x: x.view(-1).expand(2, 3).permute(1, 0).sum(),
}


def torch_like(x: Any) -> Any:
    """The module of x's engine (the functions above name it once for both)."""
    return torch if isinstance(x, torch.Tensor) else reference_engine


def asked(module: Any, fn: Any) -> list[str]:
    """The ops the policy is asked about in fn's checkpointed forward, as str(op)."""
    ops: list[str] = []

    def policy(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> bool:
        ops.append(str(op))
        return False

    C = module.utils.checkpoint
    x = module.tensor([0.5, 1.0, 1.5], requires_grad=True)
    out = C.checkpoint(fn, x, use_reentrant=False,
                       context_fn=lambda: C.create_selective_checkpoint_contexts(policy))
    out.sum().backward()
    return ops


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_the_policy_is_asked_about_torchs_aten_ops(name: str) -> None:
    fn = FUNCTIONS[name]
    assert asked(reference_engine, fn) == asked(torch, fn)


def test_op_objects_read_as_torchs() -> None:
    for module in (torch, reference_engine):
        aten = module.ops.aten
        assert aten.sin.default is aten.sin.default
    for path in ("sin.default", "sin", "var_mean.correction", "mul.Tensor"):
        objects = []
        for module in (torch, reference_engine):
            obj: Any = module.ops.aten
            for part in path.split("."):
                obj = getattr(obj, part)
            objects.append(obj)
        assert str(objects[0]) == str(objects[1])
        assert repr(objects[0]) == repr(objects[1])


@pytest.mark.parametrize("path", ["sin.nosuch", "nosuchop"])
def test_a_missing_op_or_overload_is_torchs_attribute_error(path: str) -> None:
    texts = []
    for module in (torch, reference_engine):
        with pytest.raises(AttributeError) as error:
            obj: Any = module.ops.aten
            for part in path.split("."):
                obj = getattr(obj, part)
        texts.append(str(error.value))
    assert texts[0] == texts[1]
