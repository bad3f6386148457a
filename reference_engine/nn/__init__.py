"""A sliver of torch.nn: Parameter, Module (with full backward hooks), Linear, ReLU,
Sequential, MSELoss and BatchNorm1d (eval mode)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .. import autocast_mode, dtypes, messages
from ..factories import empty, ones, uniform_, zeros
from ..grad_mode import no_grad
from ..graph import RemovableHandle
from ..ops import activations, inplace_ops, layers, loss_composites, losses
from ..ops.basic import to_copy
from ..tensor import Tensor
from . import backward_hook, batchnorm, functional

__all__ = ["BatchNorm1d", "Linear", "MSELoss", "Module", "PairwiseDistance", "Parameter",
           "ReLU", "Sequential", "functional"]


class Parameter(Tensor):
    """A leaf tensor that requires grad by default and that Modules register."""

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        source = data if data is not None else empty(0)
        super().__init__(source._data, source.dtype, source.device)
        self._version_counter = source._version_counter  # shares storage, like torch
        self.requires_grad_(requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Module:
    _parameters: dict[str, Parameter | None]
    _modules: dict[str, Module]
    _backward_hooks: dict[int, Callable[..., Any]]
    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_backward_hooks", {})

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # torch's _call_impl, for the full backward hooks (nn/backward_hook.py)
        hooks = list(self._backward_hooks.values())
        if not hooks:
            return self.forward(*args, **kwargs)
        bw_hook = backward_hook.BackwardHook(self, hooks)
        result = self.forward(*bw_hook.setup_input_hook(args), **kwargs)
        if not isinstance(result, Tensor | tuple):
            warnings.warn(messages.BACKWARD_HOOK_OUTPUT_TYPE.format(type(result)), UserWarning,
                          stacklevel=2)
        return bw_hook.setup_output_hook(result)

    def _buffers(self) -> dict[str, Tensor]:
        return {}

    def train(self, mode: bool = True) -> Module:
        object.__setattr__(self, "training", mode)
        for m in self._modules.values():
            m.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def double(self) -> Module:
        """Floating parameters and buffers to float64, as torch's _apply: a parameter keeps
        its identity (its data replaced, no version bump), a buffer is a new tensor."""
        for p in self.parameters():
            if p.dtype.is_floating_point:
                p._data, p._dtype = p._data.astype(np.float64), dtypes.float64
        for name, b in self._buffers().items():
            if b.dtype.is_floating_point:
                object.__setattr__(self, name, to_copy.to(b, dtypes.float64))
        for m in self._modules.values():
            m.double()
        return self

    def register_full_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """hook(module, grad_input, grad_output), called when the grads of the module's
        inputs are computed; it may return new grad_input."""
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def parameters(self) -> Iterator[Parameter]:
        yield from (p for p in self._parameters.values() if p is not None)
        for m in self._modules.values():
            yield from m.parameters()

    def named_parameters(self) -> Iterator[tuple[str, Parameter]]:
        yield from ((n, p) for n, p in self._parameters.items() if p is not None)
        for prefix, m in self._modules.items():
            for name, p in m.named_parameters():
                yield f"{prefix}.{name}", p

    def zero_grad(self, set_to_none: bool = True) -> None:
        """torch's Module.zero_grad: drop each grad, or zero it in place (the same tensor,
        its version bumped), first detached from any graph it was built with."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
                continue
            if p.grad.grad_fn is not None:
                p.grad.detach_()
            else:
                p.grad.requires_grad_(False)
            inplace_ops.zero_(p.grad)


class Linear(Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: dtypes.dtype | None = None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(empty(out_features, in_features, dtype=dtype, device=device))
        self.bias = Parameter(empty(out_features, dtype=dtype, device=device)) if bias else None
        # kaiming_uniform_(a=sqrt(5)) reduces to U(-1/sqrt(fan_in), 1/sqrt(fan_in)); both
        # inits write in place, so each parameter ends at _version 1 like torch's.
        bound = 1 / math.sqrt(in_features) if in_features > 0 else 0.0
        uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        # F.linear's call, so under CPU autocast's policy (aten linear is on its list)
        return autocast_mode.run("linear", layers.linear, (input, self.weight, self.bias), {})


class ReLU(Module):
    """torch.nn.ReLU: F.relu, in place when asked."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return activations.relu(input, inplace=self.inplace)


class Sequential(Module):
    """torch.nn.Sequential of modules given in order: registered as submodules "0", "1",
    ... (so their parameters are the container's), each called on the previous output."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        for i, module in enumerate(modules):
            setattr(self, str(i), module)

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            input = module(input)
        return input


class MSELoss(Module):
    """torch.nn.MSELoss: F.mse_loss with the reduction given (a module without
    parameters, here for its hooks)."""

    def __init__(self, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return losses.mse_loss(input, target, reduction=self.reduction)


class PairwiseDistance(Module):
    """torch.nn.PairwiseDistance: F.pairwise_distance with its p (kept as `norm`, as
    torch's), eps and keepdim (h30ops: OpInfo's triplet_margin_with_distance_loss samples
    pass one as the distance)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return loss_composites.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class BatchNorm1d(Module):
    """torch.nn.BatchNorm1d in eval mode (nn/batchnorm.py); training mode raises."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: dtypes.dtype | None = None) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        # reset_parameters fills them in place (init.ones_, init.zeros_): each at _version 1
        self.weight = self.bias = None
        if affine:
            self.weight = Parameter(empty(num_features, dtype=dtype))
            self.bias = Parameter(empty(num_features, dtype=dtype))
            with no_grad():
                inplace_ops.fill_(self.weight, 1)
                inplace_ops.zero_(self.bias)
        self.running_mean = zeros(num_features, dtype=dtype)
        self.running_var = ones(num_features, dtype=dtype)

    def _buffers(self) -> dict[str, Tensor]:
        return {"running_mean": self.running_mean, "running_var": self.running_var}

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (2, 3):
            raise ValueError(messages.batch_norm_1d_dims(input.ndim))
        if self.training or not self.track_running_stats:
            raise NotImplementedError(messages.BATCH_NORM_TRAINING_NOT_MODELLED)
        return batchnorm.batch_norm_eval(input, self.running_mean, self.running_var,
                                         self.weight, self.bias, self.eps)
