"""reference_engine: a NumPy model of PyTorch 2.13 autograd with a torch-shaped API.

Layers, top to bottom; a module imports from its own layer and the layers below it:

    facade    __init__ (this module: the torch namespace), _exports (the registry's ops)
    library   nn.*, special, linalg, masked, fft, autograd_functional*, gradcheck*, utils.*
    autograd  autograd, autograd_graph, function*, factories*, legacy_*, _C, autocast_mode
    ops       ops.* (one op family a file; ops.basic.*: see below), views_*, inplace_*
    core      tensor, tensor_*, graph, autograd_meta, saved, engine, forward_ad, tangent_layout
    base      messages, warn, dtypes, python_scalars, grad_mode, anomaly_mode, registry, dispatch

The core holds the state and the backward pass: a Tensor (tensor.py; in tensor_*.py its
methods that only read metadata, keep hooks or adapt a call to an op), the graph of nodes
it hangs in (tensor and graph need each other: the one import circle of the core), how an
op joins the graph (autograd_meta: OpSpec, the op definition holding its backward formula
and its forward-mode one), saved values, the engine, and forward mode's levels and
tangents (forward_ad; tangent_layout: the layout a tangent shares with its primal). The
ops are written on the core. Their backward formulas are written in ops (so that
create_graph differentiates them again): the ops every formula is written in are one
package, ops/basic/, layered inside (its docstring draws it), with the ops' one import
circle, where formulas recurse as ATen's do (CopySlices replays as_strided, whose backward
writes with copy_; expand's backward is sum_to and sum's is expand, one module holding both).
Every other op module sits above it (written on the basic ops) or apart from it, and the
helpers both share sit below it:

    above       every other op family (ops.*), views_indexing, views_inplace,
                views_multi_output
    basic       (ops/basic/) inplace, views_strided, indexing, powers, complex_imag,
                comparisons, elementwise, to_copy, complex_numbers, reductions, views,
                copying, view_making
    below       ops.common, ops.kernels, ops.zero_tensor, ops.out_overloads,
                ops.creation_meta, views_fn, inplace_write

No module imports a layer above its own. The core calls the ops it needs (Tensor's
methods and operators, the engine's sum of a grad to its input's shape, forward mode's
tangent views) through one table, dispatch.py, which this module fills once every module
is imported:

    tensor*, engine, forward_ad  ->  dispatch (base)  <-  provide(...) here (facade)

tests/reference_engine/test_layout.py holds the imports to this drawing.

Two import circles are left, each judged one that must be mutually recursive (issue 21):
tensor <-> graph, and in ops.basic inplace <-> views_strided. The second is ATen's own
recursion, not layout: CopySlices replays a view's as_strided, whose AsStridedBackward0
writes in place (copy_), and copy_ rebases history onto a CopySlices. ATen shows no import
circle only because every at:: call goes through the dispatcher's table; routing these calls
through dispatch.py would do the same here, hiding the recursion rather than removing it,
and one module holding both would pass 400 lines. sum and expand, which recurse alike
(derivatives.yaml gives expand `at::sum_to(grad, self.sym_sizes())` and sum
`grad.expand_symint(...)`), share ops/basic/reductions.py and no circle.

Read in this order: tensor.py (state), autograd_meta.py (how ops join the graph),
ops/basic/ (elementwise.py, view_making.py, views.py, inplace.py first), the other ops/
families, views_*.py and inplace_*.py (registry.py lists the public ops, from which this
module's op exports and Tensor's op methods are made), engine.py (backward), saved.py,
function.py (custom Functions). All texts users can see are in messages.py.
"""

from __future__ import annotations

import sys
import types

# The library, views_* and the op modules below are imported for _exports.install, which finds
# the modules registry rows name among the imported ones.
from . import (  # noqa: F401
    _C,
    _exports,
    autograd,
    autograd_functional,
    fft,
    gradcheck,
    linalg,
    masked,
    nn,
    special,
    utils,
    views_indexing,
    views_inplace,
    views_multi_output,
)
from . import dispatch as _dispatch
from . import dtypes as _dtypes
from .anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled
from .dtypes import (
    channels_last,
    contiguous_format,
    device,
    dtype,
    get_default_device,
    get_default_dtype,
    layout,
    memory_format,
    preserve_format,
    set_default_device,
    set_default_dtype,
    strided,
)
from .factories import (
    arange,
    as_tensor,
    empty,
    empty_strided,
    full,
    full_like,
    linspace,
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
from .factories_of_self import empty_like  # (binds Tensor.new_tensor, new_empty, type)
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .legacy_tensor_types import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from .nn import dropout as _dropout_ops  # noqa: F401   (h29ops2: F.feature_alpha_dropout)
from .ops import (  # noqa: F401
    activations,
    atan2,
    binary_cross_entropy,
    binary_math,
    binary_math_inplace,
    complex_constructors,
    composites,
    contractions,
    conversions,
    decompositions,
    decompositions_lu,
    decompositions_qr,
    determinants,
    embeddings,
    erf_gamma,
    extremes,
    fft_shifts,
    hard_activations,
    inplace_ops,
    inplace_views,
    inverses,
    joining,
    layers,
    linalg_ex,
    linalg_functions,
    linalg_named,
    loss_composites,
    losses,
    losses_with_backward_ops,
    masked_reductions,
    matrix_functions,
    matrix_norms,
    moments,
    nll,
    normalisation,
    norms,
    piecewise,
    piecewise_activations,
    products,
    put_take,
    quantiles,
    scans,
    scatter_inplace,
    shape,
    shape_views,
    solve,
    solve_legacy,
    sorting,
    statistics,
    storage,
    tensor_solve,
    unary_math,
    unary_via_backward,
    view_scatters,
)

# (aliased: `linalg` is torch.linalg's namespace, ops.linalg holds the products; combinations,
# einsum and lu_solve are named for the torch functions the facade sets in their place)
from .ops import attention as _attention_ops  # noqa: F401   (h33ops)
from .ops import batch_norm as _batch_norm_ops  # noqa: F401   (h29ops: batch norm)
from .ops import combinations as _combinations_ops  # noqa: F401
from .ops import common as _common_ops
from .ops import conv_functional as _conv_functional_ops  # noqa: F401   (h29conv)
from .ops import ctc_loss as _ctc_loss_ops  # noqa: F401   (h32ops)
from .ops import distance as _distance_ops  # noqa: F401   (h28nnf: cdist, pdist)
from .ops import einsum as _einsum_ops  # noqa: F401
from .ops import embedding_bag as _embedding_bag_ops  # noqa: F401   (h30ops)
from .ops import folding as _folding_ops  # noqa: F401   (h28nnf: F.unfold)
from .ops import gradient as _gradient_ops  # noqa: F401   (h28nnf: torch.gradient)
from .ops import grid_sampling as _grid_sampling_ops  # noqa: F401   (h31ops)
from .ops import householder as _householder_ops  # noqa: F401   (h33ops)
from .ops import interpolate as _interpolate_ops  # noqa: F401   (h29ops: F.interpolate)
from .ops import least_squares as _least_squares_ops  # noqa: F401  (h28ops)
from .ops import linalg as _linalg_ops
from .ops import linalg_spectral as _linalg_spectral_ops  # noqa: F401  (h28ops)
from .ops import linear_cross_entropy as _linear_cross_entropy_ops  # noqa: F401   (h30ops)
from .ops import lu_solve as _lu_solve_ops  # noqa: F401
from .ops import margin_losses as _margin_losses_ops  # noqa: F401   (h29ops2)
from .ops import masked as _masked_ops  # noqa: F401
from .ops import max_pool as _max_pool_ops  # noqa: F401   (h28nnf, h29conv)
from .ops import max_unpool as _max_unpool_ops  # noqa: F401   (h29conv)
from .ops import membership as _membership_ops  # noqa: F401
from .ops import nn as _nn_ops  # noqa: F401
from .ops import pooling as _pooling_ops  # noqa: F401   (h28nnf: average pooling)
from .ops import prelu as _prelu_ops  # noqa: F401   (h29ops: F.prelu)
from .ops import prod_cumprod as _prod_cumprod_ops  # noqa: F401
from .ops import scatter as _scatter_ops  # noqa: F401
from .ops import searching as _searching_ops  # noqa: F401   (h31cov)
from .ops import slicing as _slicing_ops  # noqa: F401   (h30ops: aten's slice)
from .ops import special as _special_ops  # noqa: F401
from .ops import spectral as _spectral_ops  # noqa: F401  (h28ops)
from .ops import torch_norm as _torch_norm_ops  # noqa: F401  (h28ops)
from .ops import triangular as _triangular_ops  # noqa: F401
from .ops import trilinear as _trilinear_ops  # noqa: F401   (h29ops: F.bilinear)
from .ops import unique as _unique_ops  # (h31cov: unique and its ATen ops)
from .ops.basic import (  # noqa: F401
    comparisons,
    complex_imag,
    complex_numbers,
    copying,
    elementwise,
    indexing,
    inplace,
    powers,
    reductions,
    to_copy,
    views,
    views_strided,
)
from .ops.basic.complex_numbers import is_conj, is_neg
from .registry import FUNCTIONS as _FUNCTIONS
from .tensor import Size, Tensor, is_inference, is_tensor
from .warn import is_warn_always_enabled, set_warn_always

# torch.autograd.functional is built on autograd.grad, so it sits a layer above autograd
# (library) and is attached here rather than imported by autograd (which would be a circle).
autograd.functional = autograd_functional  # type: ignore[attr-defined]

# What the core (tensor*.py, engine.py, forward_ad.py) calls in the layers above it, by the
# names it calls them: provided here, once every module is imported (dispatch.py).
_dispatch.provide(
    # Tensor's methods and operators (tensor.py, tensor_operators.py, tensor_hooks.py)
    add=elementwise.add, sub=elementwise.sub, rsub=elementwise.rsub, mul=elementwise.mul,
    div=elementwise.div, pow=powers.pow, neg=elementwise.neg, abs=unary_via_backward.abs,
    remainder=binary_math.remainder, matmul=_linalg_ops.matmul,
    compare=comparisons.compare, logical_not=comparisons.logical_not,
    where=comparisons.where, equal=comparisons.equal, allclose=comparisons.allclose,
    add_=inplace_ops.add_, sub_=inplace_ops.sub_, mul_=inplace_ops.mul_, div_=inplace_ops.div_,
    setitem=views_indexing.setitem, getitem=views_indexing.getitem,
    permute=views.permute, transpose=views.transpose, view=views.view, reshape=views.reshape,
    expand=reductions.expand, real=complex_numbers.real, imag=complex_imag.imag,
    clone=copying.clone, to=to_copy.to, backward=autograd.backward,
    handle_view_on_rebase=inplace.handle_view_on_rebase,
    regenerate_view_grad_fn=views_strided.regenerate_view_grad_fn,
    # the engine: a grad summed to its input's shape, cast, accumulated into .grad
    sum_to=reductions.sum_to, copy_=inplace.copy_,
    # forward mode: tangents, their views and in-place updates (forward_ad.py)
    new=_common_ops.new, zeros_like=_common_ops.zeros_like, gather=_common_ops.gather,
    as_strided_view=views_strided.as_strided_view, make_dual_view=views.make_dual_view,
    conj=complex_numbers.conj, _neg_view=complex_imag._neg_view,
    eq_=inplace_ops.eq_,
)

# torch.<op>, Tensor.<op> and Tensor.<op>_ of every registry row, each a call of its aten op
# (_exports.py), once every module the rows name is imported (above).
_exports.install(sys.modules[__name__])

# torch.autograd.gradcheck lives in torch.autograd's namespace; here it is written above
# autograd (it calls autograd.grad), so the facade puts it there.
autograd.gradcheck = gradcheck.gradcheck  # type: ignore[attr-defined]
autograd.gradgradcheck = gradcheck.gradgradcheck  # type: ignore[attr-defined]
autograd.GradcheckError = gradcheck.GradcheckError  # type: ignore[attr-defined]

# The ATen ops under torch.unique and torch.unique_consecutive that torch keeps out of its
# public names (torch/functional.py calls them; test_integer_outputs calls them too):
# torch._unique, torch._unique2, and torch._VF's unique_dim and unique_consecutive.
_unique = _unique_ops._unique
_unique2 = _unique_ops._unique2
_VF = types.SimpleNamespace(unique_dim=_unique_ops.unique_dim,
                            unique_consecutive=_unique_ops.vf_unique_consecutive)

float32 = float = _dtypes.float32
float64 = double = _dtypes.float64
float16 = half = _dtypes.float16
bfloat16 = _dtypes.bfloat16
int64 = long = _dtypes.int64
int32 = int = _dtypes.int32
int16 = short = _dtypes.int16
int8 = _dtypes.int8
uint8 = _dtypes.uint8
bool = _dtypes.bool_
complex64 = cfloat = _dtypes.complex64
complex128 = cdouble = _dtypes.complex128

# The names that are not registry ops; the ops are added from the registry.
__all__ = [
    "_C",
    "_VF",
    "BFloat16Tensor",
    "BoolTensor",
    "ByteTensor",
    "CharTensor",
    "DoubleTensor",
    "FloatTensor",
    "HalfTensor",
    "IntTensor",
    "LongTensor",
    "ShortTensor",
    "Size",
    "Tensor",
    "_unique",
    "_unique2",
    "arange",
    "as_tensor",
    "autocast",
    "autograd",
    "bfloat16",
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
    "empty_like",
    "empty_strided",
    "enable_grad",
    "fft",
    "float",
    "float16",
    "float32",
    "float64",
    "full",
    "full_like",
    "get_autocast_dtype",
    "get_default_device",
    "get_default_dtype",
    "half",
    "inference_mode",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_autocast_enabled",
    "is_conj",
    "is_grad_enabled",
    "is_inference",
    "is_inference_mode_enabled",
    "is_neg",
    "is_tensor",
    "is_warn_always_enabled",
    "layout",
    "linalg",
    "linspace",
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
    "short",
    "special",
    "strided",
    "tensor",
    "uint8",
    "utils",
    "zeros",
    "zeros_like",
]
__all__.extend(n for n in _FUNCTIONS if "." not in n)   # a namespaced row is its namespace's
__all__.sort()
