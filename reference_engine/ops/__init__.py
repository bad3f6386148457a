"""The ops, one family a file; each op's forward sits beside its OpSpec (its backward
formula, autograd_meta.py). A new op goes in its family's file, a new family in a new file
here (the layer drawing in reference_engine/__init__.py takes `ops.*` as it comes), and a
public op gets its row in registry.py.

    common       what every family uses: result tensors (new, wrap), dims, dtype
                 promotion, devices, broadcasting, the elementwise kernel, out= overloads,
                 and the flat-index plumbing (gather, scatter_add, index_put) views and
                 in-place writes are built on
    elementwise  arithmetic, pow, unary functions, comparisons, where, maximum/minimum,
                 atan2, clone/to
    reductions   sum, mean (and sum_to), prod, amax/amin, max/min, argmax/argmin,
                 var/var_mean, trace
    linalg       mm, mv, dot, addmm, bmm, matmul
    joining      cat, stack
    indexing     gather, scatter, scatter_add, index_select, index_add, index_fill,
                 masked_fill
    nn           softmax, log_softmax, nll_loss, mse_loss (behind nn.functional)
    activations  nn.functional's activations (elu ... threshold, glu), with their
                 backward ops (EluBackwardBackward0 ...)
    losses       nn.functional's losses (l1, smooth_l1, huber, soft_margin, binary
                 cross entropy, ...) and softmin
    layers       nn.functional's linear, pad (constant), pixel/channel shuffles
    special      torch.special's (entr, erfcx, log_ndtr, ndtr, ndtri, xlog1py, i0e, i1,
                 i1e) and the erf and i0 ops their formulas use
    backward     the differentiable backward ops derivatives.yaml formulas call
                 (threshold_backward, softmax_backward_data, ...), so double backward
                 builds torch's graph

Views (views.py) and in-place forms (inplace.py) sit beside this package, in the same layer:
each holds its op family and the machinery the family needs (view tracking, version
counters and history rebasing).
"""
