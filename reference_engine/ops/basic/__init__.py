"""The basic ops: the ones every derivative formula is written in, whose own formulas call
one another. One layer, on purpose.

A backward formula is written in differentiable ops, so that create_graph=True
differentiates it again (derivatives.yaml's formulas call at:: ops through the dispatcher
for the same reason). The formulas of these families call each other's ops: expand's
backward is sum_to and sum's is expand; mul's calls conj, and _neg_view's calls neg; to()'s
calls real(); maximum's calls masked_fill; a view's regenerated grad_fn (as_strided) and
CopySlices' formula copy with copy_, and sgn's formula calls masked_fill_. So these modules
import one another (at the foot of a module, or inside the function that needs the op):
the recursion is the ops', and the layout shows it here, in one folder, rather than hiding
it behind a lookup table. No other module of the engine is part of an import circle but
tensor and graph (a node holds tensor hooks; a tensor holds its grad_fn). An op whose
formula calls these but is called by none of them sits above (abs, tanh, sigmoid and relu,
whose formulas call the backward ops: ops/unary_via_backward.py over ops/backward.py).

Nothing in this package imports an op module above it (ops.* outside basic/, views_*.py,
inplace_*.py): those are written on these. What they share sits below, in ops.common,
ops.kernels, ops.zero_tensor, ops.out_overloads, views_fn and inplace_write; a helper this
package and the families above it both need goes there.
(tests/reference_engine/test_layout.py holds the imports to this.)

    elementwise      arithmetic (add, sub, mul, div.Tensor, pow), unary functions (exp,
                     log, sqrt, sin, cos, ...; abs, tanh, sigmoid, relu: above)
    comparisons      comparisons, logical_not/signbit/isnan, equal/allclose, where,
                     maximum/minimum
    complex_numbers  complex tensors (issue 22): real/imag and view_as_real/view_as_complex
                     views, lazy conj (conj, resolve_conj, conj_physical), abs/angle/sgn of
                     complex tensors; the other ops' formulas conjugate where
                     derivatives.yaml does
    copying          clone, contiguous, to (with memory formats)
    reductions       sum, mean (and sum_to), var/var_mean, trace
    indexing         gather, scatter, scatter_add, index_select, index_add, index_fill,
                     masked_fill
    views            the view ops and their machinery (a view's flat positions in its base,
                     creation meta)
    views_strided    as_strided views and AsStridedBackward0: a view's grad_fn regenerated
                     after its base changed in place
    inplace          the in-place machinery: version counters, rebasing history (CopySlices
                     on a view); and the two in-place ops the formulas above call, copy_
                     and masked_fill_ (the others: ops/inplace_ops.py, above)
"""
