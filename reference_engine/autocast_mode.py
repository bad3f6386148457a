"""torch.autocast on a CPU engine: the per-device state, the context manager
(torch/amp/autocast_mode.py) and the CPU cast policy of aten/src/ATen/autocast_mode.cpp
(TORCH_LIBRARY_IMPL(aten, AutocastCPU, m)), applied where a public op is called.

While CPU autocast is enabled, an op of the CPU `lower_precision_fp` list casts each of its
floating tensor arguments that is not float64 to the autocast dtype (`cached_cast`: a
ToCopyBackward0 per cast) and runs on the casts. A float32 leaf that requires grad and is no
view is cast once per outermost autocast region: the cast is cached, keyed by the source
tensor alone (torch's key is its TensorImpl: a nested region with another dtype gets the
cached cast), and the cache is dropped when the outermost region exits. Every other op falls
through (runs as is). An op of the list runs with autocast excluded, so the ops it is
written on are not cast again (the wrapper's ExcludeDispatchKeyGuard).

Not modelled, refused where torch would behave otherwise: the `fp32` and `promote` lists
(their ops raise NotImplementedError while CPU autocast is enabled); device types other than
"cpu" and "cuda" ("cuda" warns that CUDA is not available and disables itself, as torch does
on a machine without CUDA). Left as a limit: the policy applies at the public call of an op
(torch.<op>, Tensor.<op>, nn.Linear), not to the ops an unlisted composite is written on, nor
to backward formulas run inside an autocast region; a selective-checkpoint mode does not see
the casts.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import Any

from . import dtypes, messages
from .ops.basic.to_copy import to
from .tensor import Tensor


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


# ATen's CPU lists (autocast_mode.cpp), by aten name; the lower_precision_fp ops are those
# the engine has (conv_tbc, mkldnn_rnn_layer, _convolution, _addmm_activation and
# _native_multi_head_attention are not ops of it).
LOWER_PRECISION_FP = _names(
    """conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm addbmm linear matmul
       conv_transpose1d conv_transpose2d conv_transpose3d prelu
       scaled_dot_product_attention""")
FP32 = _names(
    """avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile stft cdist
       grid_sampler_2d grid_sampler_3d trace view_as_complex cholesky cholesky_inverse
       cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d max_unpool2d
       max_unpool3d adaptive_avg_pool3d reflection_pad1d reflection_pad2d replication_pad1d
       replication_pad2d replication_pad3d mse_loss cosine_embedding_loss nll_loss nll_loss2d
       hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy_loss l1_loss
       huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss
       ctc_loss kl_div multilabel_margin_loss binary_cross_entropy_with_logits fft_fft
       fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2
       fft_rfftn fft_irfftn fft_hfft fft_ihfft linalg_cond linalg_matrix_rank linalg_solve
       linalg_cholesky linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv
       linalg_householder_product linalg_tensorinv linalg_tensorsolve geqrf qr svd
       triangular_solve fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d
       linalg_qr linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh linalg_lstsq
       linalg_inv_ex""")
PROMOTE = frozenset({"stack", "cat", "index_copy"})

# the thread-local state torch keeps per device type (autocast_mode.cpp): enabled (the
# Autocast key not excluded), the dtype (CPU: bfloat16, CUDA: float16 by default), whether
# casts are cached, and the nesting of autocast regions
_enabled: dict[str, bool] = {"cpu": False, "cuda": False}
_dtype: dict[str, dtypes.dtype] = {"cpu": dtypes.bfloat16, "cuda": dtypes.float16}
_state: dict[str, Any] = {"cache_enabled": True, "nesting": 0, "excluded": False}
# source tensor's id -> (a weak reference to it, its cast)
_cache: dict[int, tuple[weakref.ref[Tensor], Tensor]] = {}


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    return _enabled[_known(device_type)]


def get_autocast_dtype(device_type: str) -> dtypes.dtype:
    return _dtype[_known(device_type)]


def is_autocast_cache_enabled() -> bool:
    return bool(_state["cache_enabled"])


def _known(device_type: str) -> str:
    if device_type not in _enabled:
        raise RuntimeError(messages.autocast_unsupported_device(device_type))
    return device_type


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)."""

    def __init__(self, device_type: str, dtype: dtypes.dtype | None = None,
                 enabled: bool = True, cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(messages.autocast_device_type_not_str(type(device_type)))
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None \
            else cache_enabled
        if enabled:
            if device_type == "cuda":   # a CPU engine: CUDA is never available
                warnings.warn(messages.AUTOCAST_CUDA_NOT_AVAILABLE, stacklevel=2)
                enabled = False
            elif self.fast_dtype not in (dtypes.bfloat16, dtypes.float16):
                warnings.warn(messages.AUTOCAST_CPU_DTYPE_NOT_SUPPORTED, stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self) -> autocast:
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = _enabled[self.device]
        self.prev_fastdtype = _dtype[self.device]
        _enabled[self.device] = self._enabled
        _dtype[self.device] = self.fast_dtype
        _state["nesting"] += 1
        _state["cache_enabled"] = self._cache_enabled
        return self

    def __exit__(self, *exc: object) -> None:
        _state["nesting"] -= 1
        if _state["nesting"] == 0:   # outside every region: drop the cached casts
            _cache.clear()
        _enabled[self.device] = self.prev
        _dtype[self.device] = self.prev_fastdtype
        _state["cache_enabled"] = self.prev_cache_enabled


def _eligible(arg: object) -> bool:
    return isinstance(arg, Tensor) and arg.dtype.is_floating_point \
        and arg.dtype is not dtypes.float64


def _cached_cast(to_type: dtypes.dtype, arg: Any) -> Any:
    """ATen's cached_cast: `arg.to(to_type)`, cached for a float32 leaf that requires grad."""
    if not _eligible(arg) or arg.dtype is to_type:
        return arg
    if not (to_type is _dtype["cpu"] and arg.dtype is dtypes.float32 and arg.requires_grad
            and arg.is_leaf and not arg._is_view() and _state["cache_enabled"]):
        return to(arg, to_type)
    hit = _cache.get(id(arg))
    if hit is not None and hit[0]() is arg:
        return hit[1]
    cast = to(arg, to_type)
    _cache[id(arg)] = (weakref.ref(arg), cast)
    return cast


def run(aten_name: str, forward: Callable[..., Any], args: tuple[Any, ...],
        kwargs: dict[str, Any]) -> Any:
    """Call `forward` (the op `aten_name`) under CPU autocast's policy: as is where autocast
    is off, excluded, or the op is on no list."""
    if not _enabled["cpu"] or _state["excluded"]:
        return forward(*args, **kwargs)
    if aten_name in FP32 or aten_name in PROMOTE:
        raise NotImplementedError(messages.autocast_policy_not_modelled(aten_name))
    if aten_name not in LOWER_PRECISION_FP:
        return forward(*args, **kwargs)
    to_type = _dtype["cpu"]
    args = tuple(_cached_cast(to_type, a) for a in args)
    kwargs = {k: _cached_cast(to_type, v) for k, v in kwargs.items()}
    _state["excluded"] = True
    try:
        return forward(*args, **kwargs)
    finally:
        _state["excluded"] = False
