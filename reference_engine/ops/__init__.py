"""The ops, one family a file; each op's forward sits beside its OpSpec (its backward
formula, autograd_meta.py). A new op goes in its family's file, a new family in a new file
here (the layer drawing in reference_engine/__init__.py takes `ops.*` as it comes), and a
public op gets its row in registry.py.

    elementwise  arithmetic, pow, unary functions, comparisons, where, atan2, clone/to; and
                 still here: the argument handling every op uses (new, wrap, wrap_dim,
                 broadcasting), mm/mv/dot/addmm/matmul, sum/mean/sum_to, cat/stack, the flat
                 index plumbing of views and in-place writes, mse_loss
    reductions   prod, amax/amin, max/min, argmax/argmin, softmax, log_softmax, nll_loss,
                 var/var_mean, trace
    linalg       bmm, and matmul composed as ATen's _matmul_impl composes it
    indexing     gather, scatter, scatter_add, index_select, index_add, index_fill,
                 masked_fill
    backward     the differentiable backward ops derivatives.yaml formulas call
                 (threshold_backward, softmax_backward_data, ...), so double backward
                 builds torch's graph

Views (views.py) and in-place forms (inplace.py) sit beside this package, in the same layer:
each holds its op family and the machinery the family needs (view tracking, version
counters and history rebasing).
"""
