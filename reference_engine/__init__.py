"""reference_engine: a NumPy model of PyTorch 2.13 autograd with a torch-shaped API.

Layers, top to bottom; a module imports from its own layer and the layers below it:

    facade    __init__ (this module: the torch namespace, op exports made from the registry)
    library   nn.*, special, linalg, masked, fft, autograd_functional, gradcheck*, utils.*
    autograd  autograd, autograd_graph, function, function_forward, factories, _C
    ops       ops.* (one op family a file), views, views_*, inplace, inplace_ops
    core      tensor, tensor_*, graph, autograd_meta, saved, engine, forward_ad
    base      messages, warn, dtypes, grad_mode, anomaly_mode, registry (data only)

The core holds the state and the backward pass: a Tensor (tensor.py; in tensor_*.py its
methods that only read metadata, keep hooks or adapt a call to an op), the graph of nodes
it hangs in (tensor and graph need each other), how an op joins the graph (autograd_meta:
OpSpec, the op definition holding its backward formula and its forward-mode one), saved
values, the engine, and forward mode's levels and tangents (forward_ad). The ops are
written on the core; their backward formulas are written in ops, so an op family may call
any other at call time. Calls up a layer, each made at call time (an import at the foot of
the module or inside a function), are these and no others:

    tensor -> autograd, inplace, ops.complex_numbers, ops.linalg, views, views_strided
    tensor_hooks -> ops.copying, ops.elementwise
    tensor_operators -> inplace_ops, ops.binary_math, ops.comparisons, ops.copying
    tensor_operators -> ops.elementwise, views, views_indexing
    engine -> inplace_ops, ops.complex_numbers, ops.copying, ops.reductions
    forward_ad -> inplace_ops, ops.common, ops.complex_numbers, ops.copying, views, views_strided

(Tensor's hand-written methods delegate to the ops (.real and .imag to complex_numbers) and
Tensor.backward to autograd; the engine casts a grad (a real input takes a complex grad's real
part) and sums it to its input's shape, and accumulates .grad, with ops;
forward_ad makes tangents, their views and in-place updates with ops, and conjugates a
complex tangent for an element-wise formula.)
tests/reference_engine/test_layout.py holds the imports to this drawing.

Read in this order: tensor.py (state), autograd_meta.py (how ops join the graph), ops/,
views*.py and inplace*.py (the ops; registry.py lists the public ones, from which this
module's op exports and Tensor's op methods are made), engine.py (backward), saved.py,
function.py (custom Functions). All texts users can see are in messages.py.
"""

from __future__ import annotations

import builtins as _builtins
import functools
import inspect
import sys
from typing import Any

# inplace, views* and the ops below are imported for _MODULES, which finds the modules
# registry rows name among the imported ones.
from . import (  # noqa: F401
    _C,
    autograd,
    autograd_functional,
    fft,
    gradcheck,
    inplace,
    inplace_ops,
    linalg,
    masked,
    nn,
    special,
    utils,
    views,
    views_indexing,
    views_inplace,
    views_multi_output,
    views_strided,
)
from . import dtypes as _dtypes
from . import messages as _messages
from . import registry as _registry
from .anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .dtypes import (
    channels_last,
    contiguous_format,
    device,
    dtype,
    get_default_device,
    get_default_dtype,
    memory_format,
    preserve_format,
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
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .ops import (  # noqa: F401
    activations,
    binary_math,
    combinations,
    comparisons,
    complex_numbers,
    composites,
    contractions,
    conversions,
    copying,
    decompositions,
    decompositions_lu,
    decompositions_qr,
    determinants,
    einsum,
    elementwise,
    embeddings,
    erf_gamma,
    extremes,
    fft_shifts,
    hard_activations,
    indexing,
    inplace_views,
    inverses,
    joining,
    layers,
    linalg_functions,
    linalg_named,
    loss_composites,
    losses,
    lu_solve,
    masked_reductions,
    matrix_functions,
    matrix_norms,
    nll,
    normalisation,
    norms,
    piecewise,
    piecewise_activations,
    products,
    put_take,
    quantiles,
    reductions,
    scans,
    shape,
    shape_views,
    solve,
    solve_legacy,
    sorting,
    statistics,
    storage,
    tensor_solve,
    unary_math,
    view_scatters,
)

# (aliased: `linalg` is torch.linalg's namespace, ops.linalg holds the products)
from .ops import linalg as _linalg_ops  # noqa: F401
from .ops import masked as _masked_ops  # noqa: F401
from .ops import membership as _membership_ops  # noqa: F401
from .ops import nn as _nn_ops  # noqa: F401
from .ops import scatter as _scatter_ops  # noqa: F401
from .ops import special as _special_ops  # noqa: F401
from .ops import triangular as _triangular_ops  # noqa: F401
from .ops.complex_numbers import is_neg
from .registry import FUNCTIONS as _FUNCTIONS
from .registry import OPS as _OPS
from .tensor import Size, Tensor, is_tensor
from .warn import is_warn_always_enabled, set_warn_always

# torch.autograd.functional is built on autograd.grad, so it sits a layer above autograd
# (library) and is attached here rather than imported by autograd (which would be a circle).
autograd.functional = autograd_functional  # type: ignore[attr-defined]

# The registry names a row's module (`module`, and `inplace` for its in-place form); each is
# imported statically above (the engine imports nothing by name at run time, see
# tests/test_reference_engine_is_independent.py) and found here by the name the row gives.
def _module(name: str) -> Any:
    module = sys.modules.get(f"{__name__}.{name}")
    if module is None:
        raise ImportError(_messages.registry_module_not_imported(name))
    return module


_MODULES = {name: _module(name) for name in sorted(
    {r.module for r in _OPS} | {r.inplace for r in _OPS if r.inplace is not None})}

def _attach(name: str, forward: object) -> None:
    if name in vars(Tensor):
        raise AssertionError(f"Tensor.{name} is written in tensor.py and is a registry "
                             f"method: keep one")
    setattr(Tensor, name, forward)


# torch.<op> is the forward of each function row; Tensor.<op> that of each method row (the
# function itself, so method and function cannot drift apart), Tensor.<op>_ its in-place form.
def _tensors_required(row: _registry.OpRow, n: _builtins.int, forward: Any,
                      method: _builtins.bool) -> Any:
    """`forward`, refusing what torch's argument parser refuses for its first `n`
    parameters (the op's tensor inputs) with its TypeError: None always, where the forward
    would take it as a number or fail inside (found by the generator: `torch.atan2(x, g)`
    with a `g` that autograd.grad(allow_unused=True) gave as None), and any other
    non-Tensor where the row takes no number (`OpRow.numbers`, `OpRow.overloads`), where
    the forward would compute with it or fail with an AttributeError. A method counts
    positions after self."""
    if n == 0:
        return forward
    name = row.parser_name
    params = [("input" if p == "self" else p)
              for p in list(inspect.signature(forward).parameters)[:n]]
    # per parameter: the types taken besides a Tensor (anything but None, numbers, none)
    # (torch's Scalar: a complex number too, `torch.sub(z, 2 - 1j)`)
    takes = [object if row.overloads else (_builtins.int, _builtins.float, _builtins.complex)
             if i in row.numbers else () for i in range(n)]

    @functools.wraps(forward)
    def checked(*args: Any, **kwargs: Any) -> Any:
        for i, (param, arg) in enumerate(zip(params, args, strict=False)):
            if arg is None or not isinstance(arg, (Tensor, takes[i])):
                raise TypeError(_messages.argument_must_be_tensor(
                    name, param, i + 1 - method, type(arg).__name__))
        return forward(*args, **kwargs)

    return checked


def _namespace(dotted: str) -> Any:
    """The module of a row's namespace: `nn.functional` is nn.functional, found from this
    package's attributes (a new namespace is a module imported above)."""
    return functools.reduce(getattr, dotted.split("."), sys.modules[__name__])


for _row in _OPS:
    _forward = getattr(_MODULES[_row.module], _row.attr)
    _inputs = 0 if _row.sample is None else len(_row.sample.shapes)
    if _row.function:
        setattr(_namespace(_row.namespace) if _row.namespace else sys.modules[__name__],
                _row.attr, _tensors_required(_row, _inputs, _forward, False))
    if _row.method:
        _attach(_row.name, _tensors_required(_row, _inputs, _forward, True))
    if _row.inplace is not None and _row.inplace_name is not None:
        _attach(_row.inplace_name, getattr(_MODULES[_row.inplace], _row.inplace_name))
del _row, _forward, _inputs

# torch.autograd.gradcheck lives in torch.autograd's namespace; here it is written above
# autograd (it calls autograd.grad), so the facade puts it there.
autograd.gradcheck = gradcheck.gradcheck  # type: ignore[attr-defined]
autograd.gradgradcheck = gradcheck.gradgradcheck  # type: ignore[attr-defined]
autograd.GradcheckError = gradcheck.GradcheckError  # type: ignore[attr-defined]

float32 = float = _dtypes.float32
float64 = double = _dtypes.float64
int64 = long = _dtypes.int64
int32 = int = _dtypes.int32
bool = _dtypes.bool_
complex64 = cfloat = _dtypes.complex64
complex128 = cdouble = _dtypes.complex128

# The names that are not registry ops; the ops are added from the registry.
__all__ = [
    "_C",
    "Size",
    "Tensor",
    "arange",
    "autograd",
    "bool",
    "cdouble",
    "cfloat",
    "channels_last",
    "complex64",
    "complex128",
    "contiguous_format",
    "device",
    "double",
    "dtype",
    "empty",
    "enable_grad",
    "fft",
    "float",
    "float32",
    "float64",
    "full",
    "get_default_device",
    "get_default_dtype",
    "inference_mode",
    "int",
    "int32",
    "int64",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "is_neg",
    "is_tensor",
    "is_warn_always_enabled",
    "linalg",
    "long",
    "manual_seed",
    "masked",
    "memory_format",
    "nn",
    "no_grad",
    "ones",
    "ones_like",
    "preserve_format",
    "rand",
    "rand_like",
    "randn",
    "randn_like",
    "set_anomaly_enabled",
    "set_default_device",
    "set_default_dtype",
    "set_grad_enabled",
    "set_warn_always",
    "special",
    "tensor",
    "utils",
    "zeros",
    "zeros_like",
]
__all__.extend(n for n in _FUNCTIONS if "." not in n)   # a namespaced row is its namespace's
__all__.sort()
