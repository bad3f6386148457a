"""Deliberately wrong engines: real torch with one behaviour changed.

They let the comparator's tests inject a known divergence without depending on the
reference engine's state.
"""

from __future__ import annotations

import types
from typing import Any

import torch

from conformance.run.engine import Engine


class _Patched(types.ModuleType):
    def __init__(self, overrides: dict[str, Any]) -> None:
        super().__init__("torch")
        self._overrides = overrides

    def __getattr__(self, name: str) -> Any:
        if name in self._overrides:
            return self._overrides[name]
        return getattr(torch, name)


def patched(name: str, **overrides: Any) -> Engine:
    return Engine(name, _Patched(overrides))


def _exp_off_by_one_percent(x: Any) -> Any:
    out = torch.exp(x)
    out.data.mul_(1.01)  # through .data: same graph, same version, other values
    return out


def _mean_as_sum_over_numel(x: Any) -> Any:
    return x.sum() / x.numel()


def _exp_raises(x: Any) -> Any:
    raise RuntimeError("exp is not implemented in this engine")


def _exp_detached(x: Any) -> Any:
    return torch.exp(x).detach()


def _exp_bumps_version(x: Any) -> Any:
    out = torch.exp(x)
    with torch.no_grad():
        out.add_(0)
    return out


def _exp_warns(x: Any) -> Any:
    import warnings

    warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being "
                  "accessed. (paraphrased)", UserWarning, stacklevel=2)
    return torch.exp(x)


WRONG_EXP = patched("wrong-exp", exp=_exp_off_by_one_percent)
WRONG_MEAN = patched("wrong-mean", mean=_mean_as_sum_over_numel)
RAISING_EXP = patched("raising-exp", exp=_exp_raises)
DETACHED_EXP = patched("detached-exp", exp=_exp_detached)
VERSION_EXP = patched("version-exp", exp=_exp_bumps_version)
WARNING_EXP = patched("warning-exp", exp=_exp_warns)
