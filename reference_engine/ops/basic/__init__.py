"""The basic ops: the ones every derivative formula is written in. Layered, with one small
import circle where the formulas really recurse.

A backward formula is written in differentiable ops, so that create_graph=True
differentiates it again (derivatives.yaml's formulas call at:: ops through the dispatcher
for the same reason). Two pairs of ops call each other's ops, as ATen's formulas do:

- sum and expand: expand's backward is sum_to and sum's is expand. They share one module,
  reductions.py (expand is a view, made by view_making; its neighbours in views.py call
  neither), so they hold no import circle;
- in-place and as_strided: CopySlices (inplace.py) replays a view's as_strided function
  and regenerates its grad_fn (views_strided.py), whose formula writes with copy_. inplace
  imports views_strided at its foot: the one circle here. One module would hold them only
  past 400 lines (inplace.py 293, views_strided.py 129).

No other module of the engine is part of an import circle but tensor and graph (a node holds
tensor hooks; a tensor holds its grad_fn). Every other module here imports only modules
below it:

    inplace, views_strided   the in-place machinery (version counters, rebasing history,
                             CopySlices) with copy_ and masked_fill_, the two in-place ops
                             formulas call (the others: ops/inplace_ops.py, above); as_strided
                             views and AsStridedBackward0
    indexing, powers         gather, scatter, scatter_add, index_select, index_add,
                             index_fill, masked_fill; pow (its exponent's formula compares
                             and reads the parts)
    complex_imag,            imag and ATen's _neg_view (its formula is neg); comparisons,
    comparisons              logical_not/signbit/isnan, equal/allclose, where
    elementwise, to_copy     arithmetic and unary functions (formulas conjugate); to(), whose
                             formula takes a complex grad's real part
    complex_numbers          complex tensors' views (real, view_as_real, view_as_complex)
                             and lazy conjugation (conj, resolve_conj, conj_physical)
    reductions               sum, sum_to and expand (a view; each the other's backward)
    views                    the other view ops
    copying, view_making     clone, contiguous; how a view is made (its flat positions in
                             its base, creation meta, forward view and graph record)

What sits above (written on these, called by none of their formulas): abs, angle and sgn of
complex tensors (ops/complex_polar.py, sgn's formula writes in place), maximum/minimum
(ops/extremes.py), mean and var (ops/moments.py), trace (ops/triangular.py), and abs, tanh,
sigmoid, relu, whose formulas call the backward ops (ops/unary_via_backward.py over
ops/backward.py). Nothing in this package imports an op module above it (ops.* outside
basic/, views_*.py, inplace_*.py). What they share sits below, in ops.common, ops.kernels,
ops.zero_tensor, ops.out_overloads, ops.creation_meta (how a view was made), views_fn and
inplace_write; a helper this package and the families above it both need goes there.
(tests/reference_engine/test_layout.py holds the imports to this.)
"""
