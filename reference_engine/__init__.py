"""reference_engine: a NumPy model of PyTorch 2.13 autograd with a torch-shaped API.

Read in this order: tensor.py (state), autograd_meta.py (how ops join the graph),
ops.py / views.py / inplace.py (the op table), engine.py (backward), saved.py,
function.py (custom Functions). All texts users can see are in messages.py.
"""

from __future__ import annotations

from . import autograd, nn
from . import dtypes as _dtypes
from .dtypes import (
    device,
    dtype,
    get_default_device,
    get_default_dtype,
    set_default_device,
    set_default_dtype,
)
from .factories import (
    arange,
    empty,
    full,
    manual_seed,
    ones,
    ones_like,
    rand,
    rand_like,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .ops import (
    abs,
    add,
    addmm,
    allclose,
    cat,
    clamp,
    clone,
    cos,
    div,
    dot,
    equal,
    exp,
    log,
    matmul,
    mean,
    mm,
    mul,
    mv,
    neg,
    pow,
    reciprocal,
    relu,
    rsub,
    sigmoid,
    signbit,
    sin,
    sqrt,
    stack,
    sub,
    sum,
    tanh,
    where,
)
from .tensor import Size, Tensor, is_tensor
from .views import permute, reshape, squeeze, t, transpose, unsqueeze

float32 = float = _dtypes.float32
float64 = double = _dtypes.float64
int64 = long = _dtypes.int64
int32 = int = _dtypes.int32
bool = _dtypes.bool_

__all__ = [
    "Size", "Tensor", "abs", "add", "addmm", "allclose", "arange", "autograd", "bool", "cat",
    "clamp", "clone", "cos", "device", "div", "dot", "double", "dtype", "empty", "enable_grad",
    "equal", "exp", "float", "float32", "float64", "full", "get_default_device",
    "get_default_dtype", "int", "int32", "int64", "is_grad_enabled", "is_tensor", "log", "long",
    "manual_seed", "matmul", "mean", "mm", "mul", "mv", "neg", "nn", "no_grad", "ones",
    "ones_like", "permute", "pow", "rand", "rand_like", "randn", "randn_like", "reciprocal",
    "relu", "reshape", "rsub", "set_default_device", "set_default_dtype", "set_grad_enabled",
    "sigmoid", "signbit", "sin", "sqrt", "squeeze", "stack", "sub", "sum", "t", "tanh",
    "tensor", "transpose", "unsqueeze", "where", "zeros", "zeros_like",
]
