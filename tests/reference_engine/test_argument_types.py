"""What torch's argument parser refuses for an op's tensor inputs, the engine refuses alike.

For every registry row with a sample, in its function and method forms, each tensor input
in turn is given a Python float, an int, None and a list: the engine must raise what torch
raises (type and text), or take it as torch does. Rows whose parser has several signatures
(`OpRow.overloads`: torch's text then lists them) only refuse None, with one parameter's
words; they are left out here and listed, so that the exception stays visible.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
import torch

import reference_engine as engine
from reference_engine import registry

VALUES = (2.0, 3, None, [1.0])
ROWS = [row for row in registry.OPS if row.sample is not None and not row.overloads]
CALLS = [(row, form, k) for row in ROWS for form in ("function", "method")
         if getattr(row, form) for k in range(len(row.sample.shapes))  # type: ignore[union-attr]
         if not (form == "method" and k == 0)]  # a method of a number is no call of the op's


def _outcome(module: Any, row: registry.OpRow, form: str, k: int, value: Any) -> str:
    assert row.sample is not None
    args: list[Any] = [module.ones(*s) for s in row.sample.shapes]
    args[k] = value
    extra = [module.tensor(a.values) if isinstance(a, registry.Const) else a
             for a in row.sample.args]
    call: Callable[..., Any] = functools.reduce(getattr, row.name.split("."), module) \
        if form == "function" else getattr(args.pop(0), row.name)
    try:
        call(*args, *extra)
    except Exception as e:  # what is compared: the kind of error and its words
        return f"{type(e).__name__}: {e}"
    return "ok"


@pytest.mark.parametrize(("row", "form", "k"), CALLS,
                         ids=[f"{r.name}-{f}-{k}" for r, f, k in CALLS])
def test_a_non_tensor_input_is_refused_as_torch_refuses_it(row: registry.OpRow, form: str,
                                                             k: int) -> None:
    for value in VALUES:
        expected = _outcome(torch, row, form, k, value)
        assert _outcome(engine, row, form, k, value) == expected, (row.name, form, k, value)


def test_the_rows_left_out_are_the_overloaded_ones() -> None:
    # (a known gap: their refusals differ from torch's, e.g. clamp(2.0, ...) computes)
    left_out = sorted(r.name for r in registry.OPS if r.sample is not None and r.overloads
                      and r.namespace != "masked")
    # torch.masked's functions are all Python code
    assert all(r.overloads for r in registry.OPS if r.namespace == "masked")
    # __rmatmul__: torch's Tensor.__rmatmul__(2.0) computes; linalg.pinv: torch lists its
    # overloads in "an invalid combination of arguments"; the others: their torch function
    # is Python code or parses several signatures
    assert left_out == ["__rmatmul__", "atleast_1d", "atleast_2d", "atleast_3d", "block_diag",
                        "broadcast_tensors", "cartesian_prod", "clamp", "clamp_max", "clamp_min",
                        "copysign", "cumulative_trapezoid", "dsplit", "fill", "float_power",
                        "fmod", "gradient", "hsplit", "index_fill", "lerp", "linalg.pinv",
                        "masked_fill", "median", "movedim", "nanmedian", "nanquantile", "narrow",
                        "nn.functional.adaptive_avg_pool2d", "nn.functional.adaptive_avg_pool3d",
                        "nn.functional.adaptive_max_pool1d", "nn.functional.adaptive_max_pool2d",
                        "nn.functional.adaptive_max_pool3d", "nn.functional.batch_norm",
                        "nn.functional.binary_cross_entropy_with_logits", "nn.functional.conv1d",
                        "nn.functional.conv2d", "nn.functional.conv3d",
                        "nn.functional.cosine_embedding_loss", "nn.functional.cross_entropy",
                        "nn.functional.gaussian_nll_loss", "nn.functional.glu",
                        "nn.functional.grid_sample", "nn.functional.group_norm",
                        "nn.functional.hinge_embedding_loss",
                        "nn.functional.huber_loss", "nn.functional.instance_norm",
                        "nn.functional.interpolate", "nn.functional.kl_div",
                        "nn.functional.l1_loss", "nn.functional.layer_norm",
                        "nn.functional.linear_cross_entropy",
                        "nn.functional.local_response_norm", "nn.functional.margin_ranking_loss",
                        "nn.functional.max_pool1d", "nn.functional.max_pool2d",
                        "nn.functional.max_pool3d", "nn.functional.mse_loss",
                        "nn.functional.multilabel_soft_margin_loss", "nn.functional.nll_loss",
                        "nn.functional.normalize", "nn.functional.poisson_nll_loss",
                        "nn.functional.rms_norm", "nn.functional.smooth_l1_loss",
                        "nn.functional.softmin", "nn.functional.softsign",
                        "nn.functional.tanhshrink",
                        "nn.functional.triplet_margin_with_distance_loss",
                        "nn.functional.upsample_bilinear",
                        "nn.functional.upsample_nearest", "norm", "pow", "quantile", "remainder",
                        "repeat_interleave", "rsub", "scatter", "sort", "special.xlog1py", "split",
                        "std", "std_mean", "tensor_split", "tensordot", "trapezoid", "trapz",
                        "true_divide", "var", "var_mean", "view_copy", "vsplit", "xlogy"]
