"""The ops, one family a file; each op's forward sits beside its OpSpec (its backward
formula, autograd_meta.py). A new op goes in its family's file, a new family in a new file
here (the layer drawing in reference_engine/__init__.py takes `ops.*` as it comes), and a
public op gets its row in registry.py.

    basic        the ops every derivative formula is written in (their own package,
                 layered; its docstring draws it): elementwise arithmetic and unary
                 functions, pow, comparisons, complex numbers' views and conj, clone and
                 to, sum, indexing, views and in-place writes
    creation_meta  torch's CreationMeta: how a view was made (below the basic ops)
    common       what every family uses: result tensors (new, wrap), dims, dtype
                 promotion, devices, broadcasting, the elementwise kernel,
                 torch's argument-parser refusal for the Tensor/Number overloads (parse),
                 and the flat-index plumbing (gather, scatter_add, index_put) views and
                 in-place writes are built on
    out_overloads  into_out, an op's out= overload (a write in place: kept out of common,
                 so that common imports nothing of the ops)
    kernels      numpy kernels where numpy's loop differs from torch's (complex products,
                 a complex zero's reciprocal, sigmoid's rounding, clamp's signed zeros)
    atan2        atan2 (real types only)
    division     torch.div: its rounding_mode overload (DivBackward2) and rounding kernels
    extremes     amax/amin, max/min, argmax/argmin, maximum/minimum
    moments      mean, var, var_mean
    complex_polar  abs, angle and sgn of complex tensors
    unary_math   issue 24's unary elementwise math: inverse and hyperbolic trigonometry,
                 logs and exps of other bases, logit, angle, frexp, nextafter, real
                 tensors' conj/real, and in-place forms
    erf_gamma    erf/erfc/erfinv, the gamma family (lgamma, digamma, polygamma, mvlgamma),
                 i0 and special.i1, and their in-place forms
    piecewise    sign/sgn, trunc/floor/ceil/round/frac, positive, nan_to_num,
                 clamp, clamp_min/clamp_max, clamp.Tensor
    binary_math  xlogy, copysign, fmod, remainder, fmax/fmin, hypot, logaddexp(2), ldexp,
                 float_power, true_divide, lerp, addcmul, addcdiv
    special_kernels  the special functions numpy lacks (digamma, polygamma, erfinv, i1, ...),
                 in numpy after ATen's Math.h (no scipy)
    conversions  Tensor.double(), Tensor.float()
    scans        cumsum, cummax/cummin, logcumsumexp
    prod_cumprod prod and cumprod (each one's backward formula calls the other)
    sorting      sort, msort, topk, kthvalue, median, nanmedian, mode
    searching    argsort, searchsorted, bucketize, count_nonzero (integer results)
    unique       unique, unique_consecutive and their ATen ops (_unique, _unique2,
                 unique_dim): a first output whose derivative is not implemented
    statistics   std/std_mean, logsumexp, nansum/nanmean, aminmax
    norms        norm (vector norm, with its backward and jvp), dist, renorm
    composites   torch's composites, in its ops: diff, trapz/trapezoid,
                 cumulative_trapezoid, cov, corrcoef
    quantiles    quantile, nanquantile (composite, with lerp_)
    linalg       mm, mv, dot, addmm, bmm, matmul
    products     addmv, addr, baddbmm, addbmm, vdot, outer, kron, cross (linalg.cross)
    decompositions  cholesky_inverse, cholesky_solve, cholesky, linalg.cholesky,
                 linalg.solve_triangular
    inverses     linalg.inv, linalg.pinv, pinverse
    linalg_ex    linalg.inv_ex, linalg.cholesky_ex (the result and LAPACK's info)
    linalg_functions  torch.linalg's functions by their names there (the linalg.* rows)
    complex_constructors  polar, complex (complex tensors from real ones)
    joining      cat, stack
    scatter      scatter_reduce, index_reduce, index_copy, index_put
    scatter_inplace  the in-place forms of the scatter family (scatter_, index_add_, put_,
                 masked_scatter_, ...)
    put_take     put/take, take_along_dim
    masked       masked_select, masked_scatter
    view_scatters  select/slice/diagonal_scatter
    triangular   tril, triu, diag, diag_embed, diagflat, fill, trace
    nn           softmax, log_softmax, mse_loss (behind nn.functional)
    shape        copies and joins of the shape family: flip, roll, rot90, repeat, tile,
                 repeat_interleave, narrow_copy, unsafe_split/chunk, constant_pad_nd,
                 block_diag, sum_to_size, h/v/dstack, column_stack, cartesian_prod
    shape_views  views of the shape family (broadcast_to, ravel, unflatten, movedim,
                 atleast_Nd, unfold, as_strided, tensor_split, meshgrid, ...) on views.py's
                 machinery, and the `*_copy` forms of view ops
    activations  nn.functional's activations (elu, gelu, softplus, silu, glu, ...), with
                 their backward ops (EluBackwardBackward0 ...)
    piecewise_activations  hardtanh, relu6, leaky_relu, hardswish, soft/hardshrink,
                 threshold
    losses       nn.functional's losses (l1, smooth_l1, huber, soft_margin, ...) and
                 softmin; PointwiseLoss, the loss with a node of its own
    binary_cross_entropy  binary_cross_entropy(_with_logits), PointwiseLosses
    layers       nn.functional's linear, pad (constant), pixel/channel shuffles
    padding      F.pad's modes 'reflect' and 'replicate' (reflection/replication_pad 1-3d)
    distance     cdist (with its p = 2 matrix-product path, _euclidean_dist), pdist
    gradient     torch.gradient (ATen's composite)
    pooling      F.avg_pool1d-3d, F.adaptive_avg_pool1d-3d (separable window sums)
    folding      F.unfold (im2col) and its backward col2im
    conv_windows the arithmetic of an N-d convolution (im2col windows) and its two adjoints
    convolution  ATen's convolution and convolution_backward (ConvolutionBackward0, its
                 BackwardBackward0: _convolution_double_backward in engine ops)
    conv_functional  F.conv1d-3d, F.conv_transpose1d-3d ('same'/'valid', unbatched, checks)
    max_pool     F.max_pool1d-3d (max_pool2d/3d_with_indices) and F.adaptive_max_pool1d-3d,
                 values and indices
    max_unpool   F.max_unpool1d-3d
    special      torch.special's (entr, erfcx, log_ndtr, ndtr, ndtri, xlog1py, i0e, i1,
                 i1e) and the erf and i0 ops their formulas use

The other view families (views_*.py: indexing, in-place views, multi-output views) and
in-place helpers (inplace_write.py) sit beside this package, in the same layer.
"""
