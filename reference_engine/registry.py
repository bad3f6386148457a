"""The op registry, in the spirit of PyTorch's OpInfo: one row per public op.

Made from these rows: the package's op exports and `__all__`, Tensor's methods that are an
op's forward and their in-place forms (reference_engine/__init__.py; tensor_operators.py
writes only the adapters), the op names a case program may call (conformance/case/api.py),
the feature family a generated program touches (conformance/gen/), and a central-difference
gradcheck of every row with a sample (tests/reference_engine/test_gradcheck.py). The
backward of each op is its OpSpec, next to its forward. Pure data: imports no engine code,
so the harness reads it without depending on the engine's behaviour (a case must run on
this engine, the executable specification, so its op vocabulary is the harness's).

Adding an op: its forward and OpSpec, one row here (with a sample), and one case.

A row's name is its path under `torch`: `add` is `torch.add` (and `Tensor.add`), and a
dotted name is a function of a namespace, `nn.functional.elu` for `torch.nn.functional.elu`,
`special.entr`, `linalg.det`. That one name is the export's place (the facade sets the
forward on the namespace's module), the case language's op path, and the OpInfo entry the
row covers (OpInfo names its entries the same way); the forward is the module's attribute
of the name's last part (`OpRow.attr`). A namespaced row has no method nor in-place form.
"""

from __future__ import annotations

from dataclasses import dataclass

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Const:
    """A constant tensor argument of a sample: an index, a mask."""
    values: object               # nested lists of ints or bools
    dtype: str = "int64"


@dataclass(frozen=True)
class Sample:
    """How gradcheck calls an op: `torch.<name>(*inputs, *args)`, or the method on the first
    input for a row with no function; an in-place form on a copy of the first input."""
    shapes: tuple[Shape, ...]    # the differentiable inputs, drawn uniformly in [-1, 1]
    args: tuple[object, ...] = ()   # what follows them: dims, numbers, Const(...)
    positive: bool = False       # the op's domain (log, sqrt, a divisor): inputs x*x + 0.5


@dataclass(frozen=True)
class OpRow:
    name: str                    # torch's name: `torch.<name>` and/or `Tensor.<name>`
    module: str                  # the engine module whose `<attr>` is the forward
    function: bool = True        # exported as `torch.<name>`
    # `Tensor.<name>` is the forward itself (self first, same parameters). False for an op
    # with no method, or whose method tensor_operators.py writes as an adapter (varargs
    # shapes, where's argument order), which is then kept as written.
    method: bool = True
    inplace: str | None = None   # the module whose `<name>_` is `Tensor.<name>_`
    differentiable: bool = True  # gradcheck must have a row for it (and its in-place form)
    feature: str = "ops"         # the feature family (conformance/vocabulary.py) it belongs to
    # None: the op needs a call gradcheck cannot make from data (a list of tensors, a
    # condition first); test_gradcheck.py then writes that row by hand.
    sample: Sample | None = None
    # What torch's argument parser takes for the sample's tensor inputs besides a Tensor:
    # the positions where a Python number also goes (add, mul, ...: a wrapped scalar);
    # elsewhere a number is "argument 'other' (position 2) must be Tensor, not float".
    # `overloads`: torch parses it against several signatures, and a wrong type is "an
    # invalid combination of arguments" (a text listing them), or its function is Python
    # code (split); neither is modelled: the forward meets what it is given, and only None
    # is refused.
    numbers: tuple[int, ...] = ()
    overloads: bool = False
    # the op's name in torch's argument-parser texts where it is not `attr`
    # (F.logsigmoid is ATen's log_sigmoid)
    parsed_as: str | None = None

    def __post_init__(self) -> None:
        if self.namespace and (self.method or self.inplace is not None or not self.function):
            raise AssertionError(f"{self.name}: a namespaced row is a function only")

    @property
    def namespace(self) -> str:
        """The namespace under `torch` (`nn.functional`), "" for torch's own functions."""
        return self.name.rpartition(".")[0]

    @property
    def attr(self) -> str:
        """The name in its namespace, and the forward's name in `module`."""
        return self.name.rpartition(".")[2]

    @property
    def parser_name(self) -> str:
        """The name torch's argument parser gives in its texts: ATen's, `special_entr` for
        torch.special.entr (linalg and fft alike), the name itself for torch's own and
        nn.functional's (torch._C._nn.elu), unless `parsed_as` says otherwise."""
        if self.parsed_as is not None:
            return self.parsed_as
        prefixed = self.namespace in ("special", "linalg", "fft")
        return f"{self.namespace}_{self.attr}" if prefixed else self.attr

    @property
    def inplace_name(self) -> str | None:
        return None if self.inplace is None else self.name + "_"


def _row(name: str, module: str, *shapes: Shape, args: tuple[object, ...] = (),
         positive: bool = False, function: bool = True, method: bool | None = None,
         inplace: str | None = None, differentiable: bool = True,
         feature: str = "ops", numbers: tuple[int, ...] = (), overloads: bool = False,
         parsed_as: str | None = None) -> OpRow:
    """One row; `shapes` (with `args` and `positive`) is its gradcheck sample, none if empty.
    `method` defaults to True for torch's own functions, False for a namespaced one."""
    sample = Sample(shapes, args, positive) if shapes else None
    has_method = "." not in name if method is None else method
    return OpRow(name, module, function, has_method, inplace, differentiable, feature, sample,
                 numbers, overloads, parsed_as)


V, M, S3 = (3,), (2, 3), (2, 3, 2)   # sample shapes: a vector, a matrix, a 3-d tensor
MASK = Const([[True, False, True], [False, True, False]], "bool")
SRC = Const([[0.5, -1.0, 2.0], [1.5, -0.25, 3.0]], "float64")   # a constant source, M
SRC2 = Const([[0.5, -1.0], [1.5, -0.25]], "float64")
TARGET = Const([1.0, -1.0], "float64")   # a loss's +-1 targets
SRC2POS = Const([[0.5, 1.0, 2.0], [1.5, 0.25, 3.0]], "float64")   # positive, M

OPS: tuple[OpRow, ...] = (
    # elementwise arithmetic and unary (ops/basic/elementwise.py; addmm: ops/linalg.py), with
    # in-place forms (inplace_ops.py)
    _row("add", "ops.basic.elementwise", M, V, inplace="ops.inplace_ops", numbers=(0, 1)),
    _row("sub", "ops.basic.elementwise", M, M, inplace="ops.inplace_ops", numbers=(0, 1)),
    _row("mul", "ops.basic.elementwise", M, (1, 3), inplace="ops.inplace_ops",
         numbers=(0, 1)),
    _row("div", "ops.division", M, M, positive=True, inplace="ops.inplace_ops",
         numbers=(0, 1)),
    _row("pow", "ops.basic.powers", V, V, positive=True, inplace="ops.inplace_ops",
         overloads=True),
    _row("neg", "ops.basic.elementwise", V, inplace="ops.inplace_ops"),
    _row("exp", "ops.basic.elementwise", V, inplace="ops.inplace_ops"),
    _row("log", "ops.basic.elementwise", V, positive=True, inplace="ops.inplace_ops"),
    _row("sqrt", "ops.basic.elementwise", V, positive=True, inplace="ops.inplace_ops"),
    _row("abs", "ops.unary_via_backward", (4,), inplace="ops.unary_via_backward"),
    _row("sin", "ops.basic.elementwise", V, inplace="ops.inplace_ops"),
    _row("cos", "ops.basic.elementwise", V, inplace="ops.inplace_ops"),
    _row("tanh", "ops.unary_via_backward", V, inplace="ops.unary_via_backward"),
    _row("sigmoid", "ops.unary_via_backward", V, inplace="ops.unary_via_backward"),
    _row("relu", "ops.unary_via_backward", (4,), inplace="ops.unary_via_backward"),
    _row("clamp", "ops.piecewise", (4,), args=(-0.5, 0.5), inplace="ops.piecewise",
         overloads=True),
    _row("reciprocal", "ops.basic.elementwise", V, positive=True),
    _row("maximum", "ops.extremes", (4,), (4,)),   # (elementwise: ops/extremes.py)
    _row("minimum", "ops.extremes", (4,), (4,)),
    _row("atan2", "ops.atan2", M, V),
    _row("clone", "ops.basic.copying", M),
    # the condition comes first; Tensor.where adapts
    _row("where", "ops.basic.comparisons", method=False),
    _row("rsub", "ops.basic.elementwise", V, V, method=False, overloads=True),
    _row("addmm", "ops.linalg", (2,), M, (3, 2), method=False),
    _row("signbit", "ops.basic.comparisons", differentiable=False),
    _row("isnan", "ops.basic.comparisons", differentiable=False),
    _row("equal", "ops.basic.comparisons", method=False, differentiable=False),
    _row("allclose", "ops.basic.comparisons", method=False, differentiable=False),
    _row("to", "ops.basic.to_copy", function=False, feature="devices"),
    # products (ops/linalg.py)
    _row("mm", "ops.linalg", M, (3, 2), feature="matmul"),
    _row("mv", "ops.linalg", M, V, feature="matmul"),
    _row("matmul", "ops.linalg", M, (3, 2), feature="matmul"),
    _row("dot", "ops.linalg", V, V, feature="matmul"),
    _row("bmm", "ops.linalg", (2, 2, 3), (2, 3, 2), feature="matmul"),
    # reductions (sum: ops/basic/reductions.py; mean, var, var_mean: ops/moments.py; trace:
    # ops/triangular.py; prod: ops/prod_cumprod.py; softmax and log_softmax: ops/nn.py)
    _row("sum", "ops.basic.reductions", M, feature="reductions"),
    _row("mean", "ops.moments", M, feature="reductions"),
    _row("prod", "ops.prod_cumprod", M, positive=True, feature="reductions"),
    _row("amax", "ops.extremes", M, feature="reductions"),
    _row("amin", "ops.extremes", M, feature="reductions"),
    _row("max", "ops.extremes", M, feature="reductions"),
    _row("min", "ops.extremes", M, feature="reductions"),
    _row("trace", "ops.triangular", (3, 2), feature="reductions"),
    _row("argmax", "ops.extremes", differentiable=False, feature="reductions"),
    _row("argmin", "ops.extremes", differentiable=False, feature="reductions"),
    _row("softmax", "ops.nn", M, args=(1,)),
    _row("log_softmax", "ops.nn", M, args=(0,)),
    _row("var", "ops.moments", M, feature="reductions", overloads=True),
    _row("var_mean", "ops.moments", M, method=False, feature="reductions",
         overloads=True),
    # joining and indexing (ops/joining.py, ops/basic/indexing.py)
    _row("cat", "ops.joining", method=False),       # take a list of tensors
    _row("stack", "ops.joining", method=False),
    _row("gather", "ops.basic.indexing", M, args=(1, Const([[0, 2], [1, 1]]))),
    _row("index_select", "ops.basic.indexing", M, args=(1, Const([2, 0, 2]))),
    _row("index_fill", "ops.basic.indexing", M, args=(1, Const([0, 2]), 0.5), overloads=True,
         inplace="ops.scatter_inplace"),
    _row("masked_fill", "ops.basic.indexing", M, args=(MASK, 0.5), inplace="ops.basic.inplace",
         overloads=True),
    # views (views.py; unbind, split, chunk: views_multi_output.py); the in-place forms of
    # t, transpose, squeeze and unsqueeze restride the tensor itself (views_inplace.py)
    _row("t", "ops.basic.views", M, inplace="views_inplace", feature="views"),
    _row("transpose", "ops.basic.views", M, args=(0, 1), inplace="views_inplace", feature="views"),
    _row("squeeze", "ops.basic.views", (2, 1, 3), inplace="views_inplace", feature="views"),
    _row("unsqueeze", "ops.basic.views", M, args=(1,), inplace="views_inplace", feature="views"),
    _row("flatten", "ops.basic.views", S3, feature="views"),
    _row("narrow", "ops.basic.views", M, args=(1, 1, 2), feature="views", overloads=True),
    _row("diagonal", "ops.basic.views", (3, 3), feature="views"),
    _row("unbind", "views_multi_output", M, feature="views"),
    _row("split", "views_multi_output", M, args=(2, 1), feature="views", overloads=True),
    _row("chunk", "views_multi_output", (3, 2), args=(2, 0), feature="views"),
    # Tensor.reshape and Tensor.permute take varargs shapes: adapters in tensor_operators.py
    _row("reshape", "ops.basic.views", M, args=((6,),), method=False, feature="views"),
    _row("permute", "ops.basic.views", S3, args=((2, 0, 1),), method=False, feature="views"),
    _row("select", "ops.basic.views", M, args=(1, 2), feature="views"),
    # in-place ops with no out-of-place form here (inplace_ops.py)
    _row("zero_", "ops.inplace_ops", V, feature="inplace"),
    _row("fill_", "ops.inplace_ops", V, args=(2.0,), function=False, feature="inplace"),
    _row("copy_", "ops.basic.inplace", V, V, function=False, feature="inplace", numbers=(1,)),
    # ---- products and linear algebra (issue 24) ----
    # products (ops/products.py)
    _row("addmv", "ops.products", (2,), M, V, feature="matmul"),
    _row("addr", "ops.products", M, (2,), V, feature="matmul"),
    _row("baddbmm", "ops.products", (2, 2, 2), (2, 2, 3), (2, 3, 2), feature="matmul"),
    _row("addbmm", "ops.products", (2, 2), (2, 2, 3), (2, 3, 2), feature="matmul"),
    _row("vdot", "ops.products", V, V, feature="matmul"),
    _row("outer", "ops.products", (2,), V, feature="matmul"),
    _row("kron", "ops.products", (2, 2), M, feature="matmul"),
    _row("cross", "ops.products", (2, 3), (2, 3), args=(1,), feature="matmul"),
    _row("__rmatmul__", "ops.products", (3, 2), M, function=False, feature="matmul",
         overloads=True),
    # factorisation-based (ops/decompositions.py): a factor is read from its triangle
    # only, so test_gradcheck.py writes their rows by hand with a triangular factor
    _row("cholesky_inverse", "ops.decompositions", feature="matmul"),
    _row("cholesky_solve", "ops.decompositions", feature="matmul"),
    _row("cholesky", "ops.decompositions", feature="matmul"),
    # torch.linalg (ops/linalg_functions.py names their forwards)
    _row("linalg.cross", "ops.linalg_functions", (2, 3), (2, 3), feature="matmul"),
    _row("linalg.diagonal", "ops.linalg_functions", (3, 3), feature="matmul"),
    _row("linalg.vecdot", "ops.linalg_functions", M, M, feature="matmul"),
    _row("linalg.inv", "ops.linalg_functions", (3, 3), feature="matmul"),
    _row("linalg.solve_triangular", "ops.linalg_functions", feature="matmul"),
    _row("linalg.cholesky", "ops.linalg_functions", feature="matmul"),
    _row("linalg.pinv", "ops.linalg_functions", M, feature="matmul", overloads=True),
    _row("linalg.inv_ex", "ops.linalg_functions", (3, 3), feature="matmul"),
    _row("linalg.cholesky_ex", "ops.linalg_functions", feature="matmul"),
    _row("linalg.matrix_power", "ops.linalg_functions", (2, 2), args=(3,), feature="matmul"),
    _row("linalg.multi_dot", "ops.linalg_functions", feature="matmul"),   # takes a list
    _row("pinverse", "ops.inverses", (3, 2), feature="matmul"),
    # ---- nn.functional and special (issue 24) ----
    _row("nn.functional.relu", "ops.activations", (4,)),
    _row("nn.functional.elu", "ops.activations", (4,)),
    _row("nn.functional.selu", "ops.activations", (4,)),
    _row("nn.functional.celu", "ops.activations", (4,)),
    _row("nn.functional.gelu", "ops.activations", (4,)),
    _row("nn.functional.silu", "ops.activations", (4,)),
    _row("nn.functional.mish", "ops.activations", (4,)),
    _row("nn.functional.softplus", "ops.activations", (4,)),
    # Python functions (input / (input.abs() + 1)): a number meets an AttributeError
    _row("nn.functional.softsign", "ops.activations", (4,), overloads=True),
    _row("nn.functional.hardtanh", "ops.piecewise_activations", (4,)),
    _row("nn.functional.relu6", "ops.piecewise_activations", (4,)),
    _row("nn.functional.leaky_relu", "ops.piecewise_activations", (4,)),
    _row("nn.functional.hardswish", "ops.piecewise_activations", (4,)),
    _row("nn.functional.logsigmoid", "ops.activations", (4,), parsed_as="log_sigmoid"),
    _row("nn.functional.tanhshrink", "ops.activations", (4,), overloads=True),
    _row("nn.functional.softshrink", "ops.piecewise_activations", (4,)),
    _row("nn.functional.hardshrink", "ops.piecewise_activations", (4,)),
    _row("nn.functional.threshold", "ops.piecewise_activations", (4,), args=(0.1, -0.5)),
    _row("nn.functional.glu", "ops.activations", (2, 4), args=(1,), overloads=True),
    _row("nn.functional.pad", "ops.layers", M, args=((1, 2, -1, 1),)),
    _row("nn.functional.pixel_shuffle", "ops.layers", (1, 4, 1, 2), args=(2,)),
    _row("nn.functional.pixel_unshuffle", "ops.layers", (1, 1, 2, 4), args=(2,)),
    _row("nn.functional.channel_shuffle", "ops.layers", (1, 4, 2), args=(2,)),
    # (the bias may be None: the sample leaves it out, test_gradcheck's linear rows pass it)
    _row("nn.functional.linear", "ops.layers", M, (4, 3)),
    # Python functions in torch: a number meets an AttributeError (overloads)
    _row("nn.functional.softmin", "ops.losses", M, args=(1,), overloads=True),
    _row("nn.functional.mse_loss", "ops.losses", M, M, overloads=True),
    _row("nn.functional.l1_loss", "ops.losses", M, M, overloads=True),
    _row("nn.functional.smooth_l1_loss", "ops.losses_with_backward_ops", M, M, overloads=True),
    _row("nn.functional.huber_loss", "ops.losses_with_backward_ops", M, M, overloads=True),
    _row("nn.functional.soft_margin_loss", "ops.losses_with_backward_ops", M,
         args=(Const([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]], "float64"),)),
    _row("nn.functional.binary_cross_entropy_with_logits", "ops.binary_cross_entropy", M, M,
         overloads=True),
    # probabilities in (0, 1): no sample (test_gradcheck.py writes its row)
    _row("nn.functional.binary_cross_entropy", "ops.binary_cross_entropy"),
    _row("special.entr", "ops.special", V, positive=True),
    _row("special.i0e", "ops.special", V),
    _row("special.i1", "ops.special", V),
    _row("special.i1e", "ops.special", V),
    _row("special.erfcx", "ops.special", V),
    _row("special.log_ndtr", "ops.special", V),
    _row("special.ndtr", "ops.special", V),
    # in (0, 1): no sample (test_gradcheck.py writes its row)
    _row("special.ndtri", "ops.special"),
    # Tensor or Number in either place (several signatures: overloads)
    _row("special.xlog1py", "ops.special", M, V, positive=True, overloads=True),
    # ---- elementwise math (issue 24) ----
    # unary (ops/unary_math.py; sign, rounding and clamping: ops/piecewise.py)
    _row("acos", "ops.unary_math", V, inplace="ops.unary_math"),
    _row("asin", "ops.unary_math", V, inplace="ops.unary_math"),
    _row("atan", "ops.unary_math", V, inplace="ops.unary_math"),
    _row("acosh", "ops.unary_math"),   # its domain (> 1): test_gradcheck.py writes the row
    _row("asinh", "ops.unary_math", V),
    _row("atanh", "ops.unary_math", V),
    _row("sinh", "ops.unary_math", V, inplace="ops.unary_math"),
    _row("cosh", "ops.unary_math", V, inplace="ops.unary_math"),
    _row("tan", "ops.unary_math", V, inplace="ops.unary_math"),
    _row("log1p", "ops.unary_math", V, positive=True, inplace="ops.unary_math"),
    _row("log2", "ops.unary_math", V, positive=True, inplace="ops.unary_math"),
    _row("log10", "ops.unary_math", V, positive=True, inplace="ops.unary_math"),
    _row("expm1", "ops.unary_math", V, inplace="ops.unary_math"),
    _row("exp2", "ops.unary_math", V, inplace="ops.unary_math"),
    _row("rsqrt", "ops.unary_math", V, positive=True, inplace="ops.unary_math"),
    _row("square", "ops.unary_math", V),
    _row("sinc", "ops.unary_math", V, inplace="ops.unary_math"),
    _row("deg2rad", "ops.unary_math", V, inplace="ops.unary_math"),
    _row("rad2deg", "ops.unary_math", V, inplace="ops.unary_math"),
    _row("erf", "ops.erf_gamma", V, inplace="ops.erf_gamma"),
    _row("erfc", "ops.erf_gamma", V, inplace="ops.erf_gamma"),
    _row("erfinv", "ops.erf_gamma", V, inplace="ops.erf_gamma"),
    _row("lgamma", "ops.erf_gamma", V, positive=True, inplace="ops.erf_gamma"),
    _row("digamma", "ops.erf_gamma", V, positive=True, inplace="ops.erf_gamma"),
    _row("polygamma", "ops.erf_gamma", method=False),   # n comes first: by hand
    _row("mvlgamma", "ops.erf_gamma", V, args=(2,), positive=True),
    _row("logit", "ops.unary_math", V, args=(0.1,)),
    _row("i0", "ops.erf_gamma", V, inplace="ops.erf_gamma"),
    _row("sign", "ops.piecewise", V, inplace="ops.piecewise"),
    _row("sgn", "ops.piecewise", V, inplace="ops.piecewise"),
    _row("trunc", "ops.piecewise", V, inplace="ops.piecewise"),
    _row("floor", "ops.piecewise", V, inplace="ops.piecewise"),
    _row("ceil", "ops.piecewise", V, inplace="ops.piecewise"),
    _row("frac", "ops.piecewise", V, inplace="ops.piecewise"),
    _row("round", "ops.piecewise", V),
    _row("positive", "ops.piecewise", V),
    _row("nan_to_num", "ops.piecewise", V),
    _row("clamp_min", "ops.piecewise", (4,), args=(0.1,), overloads=True),
    _row("clamp_max", "ops.piecewise", (4,), args=(0.1,), overloads=True),
    # binary and ternary (ops/binary_math.py)
    _row("xlogy", "ops.binary_math", V, V, positive=True, overloads=True),
    _row("copysign", "ops.binary_math", V, V, overloads=True),
    _row("fmod", "ops.binary_math", V, V, positive=True, overloads=True),
    _row("remainder", "ops.binary_math", V, V, positive=True, overloads=True),
    _row("fmax", "ops.binary_math", (4,), (4,)),
    _row("fmin", "ops.binary_math", (4,), (4,)),
    _row("hypot", "ops.binary_math", M, V),
    _row("logaddexp", "ops.binary_math", M, V),
    _row("logaddexp2", "ops.binary_math", M, V),
    _row("ldexp", "ops.binary_math", V, V),
    _row("float_power", "ops.binary_math", V, V, positive=True, overloads=True),
    _row("true_divide", "ops.binary_math", M, M, positive=True, overloads=True),
    _row("lerp", "ops.binary_math", M, V, M, overloads=True, inplace="ops.binary_math_inplace"),
    _row("addcmul", "ops.binary_math", M, V, M, inplace="ops.binary_math_inplace"),
    _row("addcdiv", "ops.binary_math", M, V, M, positive=True,
         inplace="ops.binary_math_inplace"),
    # real tensors' complex views, angle, frexp, nextafter (ops/unary_math.py)
    _row("real", "ops.unary_math", V, method=False),   # Tensor.real is a property
    _row("conj", "ops.unary_math", V),
    _row("resolve_conj", "ops.unary_math", V),
    _row("resolve_neg", "ops.unary_math", V),
    _row("conj_physical", "ops.unary_math", V),
    _row("angle", "ops.unary_math", V),
    _row("frexp", "ops.unary_math", V),
    _row("nextafter", "ops.unary_math", V, V),
    _row("double", "ops.conversions", function=False, feature="devices"),
    _row("float", "ops.conversions", function=False, feature="devices"),
    # ---- reductions, scans and sorting (issue 24) ----
    # scans (ops/scans.py; cumprod: ops/prod_cumprod.py)
    _row("cumsum", "ops.scans", M, args=(1,), feature="reductions"),
    _row("cumprod", "ops.prod_cumprod", M, args=(1,), feature="reductions"),
    _row("cummax", "ops.scans", M, args=(1,), feature="reductions"),
    _row("cummin", "ops.scans", M, args=(1,), feature="reductions"),
    _row("logcumsumexp", "ops.scans", M, args=(1,), feature="reductions"),
    # sorting and order statistics (ops/sorting.py)
    _row("sort", "ops.sorting", M, args=(1,), feature="reductions", overloads=True),
    _row("msort", "ops.sorting", M, feature="reductions"),
    _row("topk", "ops.sorting", M, args=(2,), feature="reductions"),
    _row("kthvalue", "ops.sorting", M, args=(2,), feature="reductions"),
    _row("median", "ops.sorting", M, args=(1,), feature="reductions", overloads=True),
    _row("nanmedian", "ops.sorting", M, args=(1,), feature="reductions", overloads=True),
    _row("mode", "ops.sorting", M, args=(1,), feature="reductions"),
    # statistics (ops/statistics.py)
    _row("std", "ops.statistics", M, feature="reductions", overloads=True),
    _row("std_mean", "ops.statistics", M, method=False, feature="reductions", overloads=True),
    _row("logsumexp", "ops.statistics", M, args=(1,), feature="reductions"),
    _row("nansum", "ops.statistics", M, feature="reductions"),
    _row("nanmean", "ops.statistics", M, feature="reductions"),
    _row("aminmax", "ops.statistics", M, feature="reductions"),
    _row("norm", "ops.torch_norm", M, feature="reductions", overloads=True),
    _row("dist", "ops.norms", M, M, feature="reductions"),
    _row("renorm", "ops.norms", (3, 2), args=(2, 0, 0.5), feature="reductions"),
    # torch's composites, in its ops (ops/composites.py)
    _row("diff", "ops.composites", M, feature="reductions"),
    _row("trapz", "ops.composites", M, method=False, feature="reductions", overloads=True),
    _row("trapezoid", "ops.composites", M, method=False, feature="reductions",
         overloads=True),
    _row("cumulative_trapezoid", "ops.composites", M, method=False, feature="reductions",
         overloads=True),
    _row("cov", "ops.composites", M, feature="reductions"),
    _row("corrcoef", "ops.composites", M, feature="reductions"),
    _row("quantile", "ops.quantiles", M, args=(0.3, 1), feature="reductions", overloads=True),
    _row("nanquantile", "ops.quantiles", M, args=(0.3, 1), feature="reductions",
         overloads=True),
    # ---- shape, views, joining and splitting (issue 24) ----
    # views (ops/shape_views.py; view and expand: views.py, Tensor's varargs adapters in
    # tensor_operators.py); rows without a sample take a list or need a second tensor's shape only:
    # test_gradcheck.py writes them by hand
    _row("view", "ops.basic.views", function=False, method=False, feature="views"),
    _row("expand", "ops.basic.reductions", function=False, method=False, feature="views"),
    _row("view_as", "ops.shape_views", function=False, method=False, feature="views"),
    _row("expand_as", "ops.shape_views", function=False, feature="views"),
    _row("reshape_as", "ops.shape_views", function=False, feature="views"),
    _row("contiguous", "ops.shape_views", M, function=False, feature="views"),
    _row("broadcast_to", "ops.shape_views", (3, 1), args=((2, 3, 2),), feature="views"),
    _row("broadcast_tensors", "ops.shape_views", M, (3,), method=False, feature="views",
         overloads=True),
    _row("ravel", "ops.shape_views", M, feature="views"),
    _row("unflatten", "ops.shape_views", (2, 6), args=(1, (2, -1)), feature="views"),
    _row("movedim", "ops.shape_views", S3, args=(0, 2), feature="views", overloads=True),
    _row("atleast_1d", "ops.shape_views", (), method=False, feature="views",
         overloads=True),
    _row("atleast_2d", "ops.shape_views", V, method=False, feature="views",
         overloads=True),
    _row("atleast_3d", "ops.shape_views", V, method=False, feature="views",
         overloads=True),
    _row("unfold", "ops.shape_views", (5,), args=(0, 2, 1), function=False, feature="views"),
    _row("split_with_sizes", "ops.shape_views", (5, 2), args=((2, 3),), feature="views"),
    _row("tensor_split", "ops.shape_views", (5, 2), args=(2,), feature="views",
         overloads=True),
    _row("hsplit", "ops.shape_views", (2, 4), args=(2,), feature="views", overloads=True),
    _row("vsplit", "ops.shape_views", (4, 2), args=(2,), feature="views", overloads=True),
    _row("dsplit", "ops.shape_views", (2, 2, 4), args=(2,), feature="views", overloads=True),
    _row("meshgrid", "ops.shape_views", method=False, feature="views"),
    _row("as_strided", "ops.shape_views", (3, 3), args=((2, 2), (1, 2), 1), feature="views"),
    # Tensor's properties (tensor.py); the rows' functions read them
    _row("T", "ops.shape_views", function=False, method=False, feature="views"),
    _row("mT", "ops.shape_views", function=False, method=False, feature="views"),
    _row("H", "ops.shape_views", function=False, method=False, feature="views"),
    _row("mH", "ops.shape_views", function=False, method=False, feature="views"),
    # the *_copy forms of view ops: copies with the view's formula (ops/shape_views.py)
    _row("expand_copy", "ops.shape_views", (3, 1), args=((2, 3, 2),), method=False),
    _row("view_copy", "ops.shape_views", M, args=((3, 2),), method=False, overloads=True),
    _row("permute_copy", "ops.shape_views", S3, args=((2, 0, 1),), method=False),
    _row("squeeze_copy", "ops.shape_views", (2, 1, 3), method=False),
    _row("unsqueeze_copy", "ops.shape_views", M, args=(1,), method=False),
    _row("transpose_copy", "ops.shape_views", M, args=(0, 1), method=False),
    _row("t_copy", "ops.shape_views", M, method=False),
    _row("unbind_copy", "ops.shape_views", M, method=False),
    _row("diagonal_copy", "ops.shape_views", (3, 3), method=False),
    _row("alias_copy", "ops.shape_views", V, method=False),
    _row("unfold_copy", "ops.shape_views", (5,), args=(0, 2, 1), method=False),
    _row("split_with_sizes_copy", "ops.shape_views", (5, 2), args=((2, 3),), method=False),
    _row("as_strided_copy", "ops.shape_views", (3, 3), args=((2, 2), (1, 2), 1),
         method=False),
    # copies and joins (ops/shape.py)
    _row("flip", "ops.shape", M, args=((0, 1),)),
    _row("fliplr", "ops.shape", M),
    _row("flipud", "ops.shape", M),
    _row("roll", "ops.shape", M, args=(1, 1)),
    _row("rot90", "ops.shape", M, args=(1, (0, 1))),
    _row("repeat", "ops.shape", M, args=((2, 1, 2),), function=False),
    _row("tile", "ops.shape", M, args=((2,),)),
    _row("repeat_interleave", "ops.shape", M, args=(2, 1), overloads=True),
    _row("narrow_copy", "ops.shape", M, args=(1, 1, 2)),
    _row("unsafe_split", "ops.shape", (4, 2), args=(2,)),
    _row("unsafe_chunk", "ops.shape", (4, 2), args=(2,)),
    _row("unsafe_split_with_sizes", "ops.shape", (4, 2), args=((1, 3),)),
    _row("constant_pad_nd", "ops.shape", M, args=((1, -1, 2, 0),), method=False),
    _row("block_diag", "ops.shape", M, V, method=False, overloads=True),
    _row("sum_to_size", "ops.shape", (2, 3), args=((1, 3),), function=False,
         feature="reductions"),
    _row("hstack", "ops.shape", method=False),
    _row("vstack", "ops.shape", method=False),
    _row("dstack", "ops.shape", method=False),
    _row("column_stack", "ops.shape", method=False),
    _row("cartesian_prod", "ops.shape", V, (2,), method=False, overloads=True),
    # ---- indexing, scatter, masked, triangular/diagonal (issue 24) ----
    # (ops/scatter.py, ops/triangular.py; scatter, scatter_add, index_add: ops/basic/indexing.py)
    # a second tensor input that is not the second parameter (src after dim and index)
    # comes as a constant: the OpInfo check differentiates it
    _row("scatter", "ops.basic.indexing", M, args=(1, Const([[0, 2, 1], [2, 1, 0]]), SRC),
         inplace="ops.scatter_inplace", overloads=True),   # src a tensor or a number
    _row("scatter_add", "ops.basic.indexing", M, args=(1, Const([[0, 2, 2], [1, 1, 0]]), SRC),
         inplace="ops.scatter_inplace"),
    _row("scatter_reduce", "ops.scatter", M,
         args=(1, Const([[0, 2, 2], [1, 1, 0]]), SRC, "mean")),
    _row("index_add", "ops.basic.indexing", M, args=(1, Const([2, 0]), SRC2),
         inplace="ops.scatter_inplace"),
    _row("index_copy", "ops.scatter", M, args=(1, Const([2, 0]), SRC2),
         inplace="ops.scatter_inplace"),
    _row("index_reduce", "ops.scatter", M, args=(1, Const([2, 0]), SRC2, "amax")),
    _row("index_put", "ops.scatter"),   # takes a list of index tensors: no sample
    _row("put", "ops.put_take", M, args=(Const([4, 1]), Const([0.5, -2.0], "float64")),
         inplace="ops.scatter_inplace"),
    _row("take", "ops.put_take", M, args=(Const([4, 1, 4]),)),
    _row("take_along_dim", "ops.put_take", M, args=(Const([[0, 2], [1, 1]]), 1)),
    _row("masked_select", "ops.masked", M, args=(MASK,)),
    _row("masked_scatter", "ops.masked", M, args=(MASK, SRC), inplace="ops.scatter_inplace"),
    _row("select_scatter", "ops.view_scatters", M, V, args=(0, 1)),
    _row("slice_scatter", "ops.view_scatters", M, (2, 2), args=(1, 0, 3, 2)),
    _row("diagonal_scatter", "ops.view_scatters", (3, 3), (2,), args=(1,)),
    _row("tril", "ops.triangular", (3, 3), inplace="ops.triangular"),
    _row("triu", "ops.triangular", (3, 3), args=(-1,), inplace="ops.triangular"),
    _row("diag", "ops.triangular", (3, 3), args=(1,)),
    _row("diag_embed", "ops.triangular", M),
    _row("diagflat", "ops.triangular", M),
    _row("fill", "ops.triangular", M, args=(2.0,), method=False, overloads=True),
    # ---- h22cx (issue 22): complex numbers (ops/basic/complex_numbers.py) ----
    # no samples: gradcheck draws real inputs and sums real outputs; test_gradcheck.py
    # writes their rows by hand, each a real function through the complex op
    _row("imag", "ops.basic.complex_imag", method=False, feature="complex"),  # Tensor.imag too
    _row("view_as_real", "ops.basic.complex_numbers", method=False, feature="complex"),
    _row("view_as_complex", "ops.basic.complex_numbers", method=False, feature="complex"),
    _row("polar", "ops.complex_constructors", method=False, feature="complex"),
    _row("complex", "ops.complex_constructors", method=False, feature="complex"),
    # ---- h24ops2 (issue 24): norms, products, masked, losses ----
    _row("linalg.vector_norm", "ops.norms", M, feature="reductions"),
    # contractions (ops/contractions.py)
    _row("inner", "ops.contractions", M, (2, 3), feature="matmul"),
    _row("tensordot", "ops.contractions", S3, (3, 2), args=(([1, 2], [0, 1]),),
         method=False, feature="matmul", overloads=True),   # Python code in torch
    # losses and distances torch composes of other ops (ops/loss_composites.py); F.*'s
    # Python functions take any argument (overloads), cosine_similarity and
    # pairwise_distance are torch's parsed functions
    _row("nn.functional.margin_ranking_loss", "ops.loss_composites", (2,), (2,),
         args=(TARGET,), overloads=True),
    _row("nn.functional.hinge_embedding_loss", "ops.loss_composites", (2,), args=(TARGET,),
         overloads=True),
    _row("nn.functional.cosine_embedding_loss", "ops.loss_composites", (2, 3), (2, 3),
         args=(TARGET,), overloads=True),
    _row("nn.functional.kl_div", "ops.loss_composites", M, M, positive=True, overloads=True),
    _row("nn.functional.poisson_nll_loss", "ops.loss_composites", M, M, positive=True,
         overloads=True),
    _row("nn.functional.gaussian_nll_loss", "ops.loss_composites", M, M, args=(SRC2POS,),
         overloads=True),
    _row("nn.functional.multilabel_soft_margin_loss", "ops.loss_composites", M,
         args=(Const([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]], "float64"),), overloads=True),
    _row("nn.functional.normalize", "ops.loss_composites", M, overloads=True),
    _row("nn.functional.cosine_similarity", "ops.loss_composites", M, M),
    _row("nn.functional.pairwise_distance", "ops.loss_composites", M, M),
    # embeddings (ops/embeddings.py); F.embedding is Python (overloads), one_hot has no grad
    _row("nn.functional.embedding", "ops.embeddings", overloads=True),   # indices first
    _row("nn.functional.one_hot", "ops.embeddings", differentiable=False),
    _row("nn.functional.hardsigmoid", "ops.hard_activations", (4,)),
    _row("fft.fftshift", "ops.fft_shifts", M),
    _row("fft.ifftshift", "ops.fft_shifts", M),
    # Tensor's reflected operators (tensor_operators.py, bound in tensor.py: no export)
    _row("__radd__", "tensor_operators", V, args=(2.0,), function=False, method=False),
    _row("__rsub__", "tensor_operators", V, args=(2.0,), function=False, method=False),
    _row("__rmul__", "tensor_operators", V, args=(2.0,), function=False, method=False),
    _row("__rdiv__", "tensor_operators", V, args=(2.0,), positive=True, function=False,
         method=False),
    _row("__rpow__", "tensor_operators", V, args=(2.0,), function=False, method=False),
    _row("__rmod__", "tensor_operators", V, args=(2.5,), positive=True, function=False,
         method=False),
    # torch.masked's reductions and normalizations (ops/masked_reductions.py): Python
    # functions in torch (a number meets an AttributeError: overloads)
    _row("masked.sum", "ops.masked_reductions", M, feature="reductions",
         overloads=True),
    _row("masked.prod", "ops.masked_reductions", M, feature="reductions",
         overloads=True),
    _row("masked.cumsum", "ops.masked_reductions", M, args=(1,), feature="reductions",
         overloads=True),
    _row("masked.cumprod", "ops.masked_reductions", M, args=(1,), feature="reductions",
         overloads=True),
    _row("masked.amax", "ops.masked_reductions", M, feature="reductions",
         overloads=True),
    _row("masked.amin", "ops.masked_reductions", M, feature="reductions",
         overloads=True),
    _row("masked.mean", "ops.masked_reductions", M, feature="reductions",
         overloads=True),
    _row("masked.median", "ops.masked_reductions", M, feature="reductions",
         overloads=True),
    _row("masked.logsumexp", "ops.masked_reductions", M, feature="reductions",
         overloads=True),
    _row("masked.logaddexp", "ops.masked_reductions", M, M, feature="reductions",
         overloads=True),
    _row("masked.norm", "ops.masked_reductions", M, feature="reductions",
         overloads=True),
    _row("masked.var", "ops.masked_reductions", M, feature="reductions",
         overloads=True),
    _row("masked.std", "ops.masked_reductions", M, feature="reductions",
         overloads=True),
    _row("masked.softmax", "ops.masked_reductions", M, args=(1,), feature="reductions",
         overloads=True),
    _row("masked.log_softmax", "ops.masked_reductions", M, args=(1,), feature="reductions",
         overloads=True),
    _row("masked.softmin", "ops.masked_reductions", M, args=(1,), feature="reductions",
         overloads=True),
    _row("masked.normalize", "ops.masked_reductions", M, args=(2.0, 1), feature="reductions",
         overloads=True),
    # ---- h23cov (issue 23): ops test_autograd.py's tests call ----
    _row("isin", "ops.membership", method=False, differentiable=False, overloads=True),
    # integer results of float inputs, never requiring grad (test_integer_outputs; h31cov):
    # ops/searching.py; unique's first output has a node whose derivative is not implemented
    # (ops/unique.py: torch._unique, torch._unique2 and torch._VF.unique_dim are written in
    # the package facade, as torch keeps them out of its public names)
    _row("argsort", "ops.searching", differentiable=False, feature="reductions"),
    _row("searchsorted", "ops.searching", method=False, differentiable=False),
    _row("bucketize", "ops.searching", method=False, differentiable=False),
    _row("count_nonzero", "ops.searching", differentiable=False, feature="reductions"),
    _row("unique", "ops.unique", differentiable=False),
    _row("unique_consecutive", "ops.unique", differentiable=False),
    # in-place changes of a tensor's size or storage, never differentiable (ops/storage.py)
    _row("resize_", "ops.storage", function=False, differentiable=False, feature="inplace"),
    _row("resize_as_", "ops.storage", function=False, differentiable=False, feature="inplace"),
    _row("set_", "ops.storage", function=False, differentiable=False, feature="inplace"),
    # transpose's aliases and as_strided_ (ops/inplace_views.py); as_strided_'s row is by
    # hand in test_gradcheck.py (it restrides a tensor that is its whole storage)
    _row("swapdims", "ops.inplace_views", M, args=(0, 1), inplace="ops.inplace_views",
         feature="views"),
    _row("swapaxes", "ops.inplace_views", M, args=(0, 1), inplace="ops.inplace_views",
         feature="views"),
    _row("as_strided_", "ops.inplace_views", function=False, feature="views"),
    # ---- h24ops3 (issue 24): determinants, nll/cross entropy, normalisations ----
    # determinants (ops/determinants.py; the linalg rows' forwards are named in
    # ops/linalg_functions.py)
    _row("linalg.det", "ops.linalg_functions", (3, 3), feature="matmul"),
    _row("det", "ops.determinants", (3, 3), feature="matmul"),
    _row("linalg.slogdet", "ops.linalg_functions", (3, 3), feature="matmul"),
    _row("slogdet", "ops.determinants", (3, 3), feature="matmul"),
    _row("logdet", "ops.determinants", feature="matmul"),   # needs det > 0: by hand
    _row("linalg.solve", "ops.linalg_functions", (3, 3), (3, 2), feature="matmul"),
    _row("linalg.solve_ex", "ops.linalg_functions", (3, 3), (3,), feature="matmul"),
    # the negative log-likelihood and cross entropy (ops/nll.py): F's Python functions
    # (overloads); the target a constant of class indices
    _row("nn.functional.nll_loss", "ops.nll", M, args=(Const([0, 2]),), overloads=True),
    _row("nn.functional.cross_entropy", "ops.nll", M, args=(Const([1, 2]),), overloads=True),
    # normalisations (ops/normalisation.py); F.layer_norm, F.group_norm and F.rms_norm are
    # Python functions (overloads); the native ops have no method
    # (its mean and rstd outputs are not differentiable: test_gradcheck.py writes its row)
    _row("native_layer_norm", "ops.normalisation", method=False),
    _row("nn.functional.layer_norm", "ops.normalisation", M, args=((3,),), overloads=True),
    _row("nn.functional.rms_norm", "ops.normalisation", M, args=((3,),), overloads=True),
    _row("native_group_norm", "ops.normalisation", (2, 4, 3), args=(None, None, 2, 4, 3, 2,
                                                                    1e-5), method=False),
    _row("nn.functional.group_norm", "ops.normalisation", (2, 4, 3), args=(2,),
         overloads=True),
    # ---- h27fwd (issue 22): an op with no forward formula, as test_not_implemented_fwad
    # calls it; no sample: its input's derivative is not implemented (gradcheck would stop
    # there), so the generator does not draw it
    _row("igamma", "ops.erf_gamma"),
    # ---- linear algebra: decompositions, matrix functions (h27ops, issue 24) ----
    # (ops/decompositions_qr.py, ops/matrix_functions.py; linalg rows: ops/linalg_named.py)
    _row("linalg.qr", "ops.linalg_named", (3, 2), feature="matmul"),
    _row("qr", "ops.decompositions_qr", (3, 2), feature="matmul"),
    _row("matrix_exp", "ops.matrix_functions", (3, 3), feature="matmul"),
    _row("linalg.matrix_exp", "ops.linalg_named", (3, 3), feature="matmul"),
    # reads one triangle of A (its jvp, as torch's, all of A's tangent): by hand
    _row("triangular_solve", "ops.solve_legacy", feature="matmul"),
    _row("linalg.vander", "ops.linalg_named", V, feature="matmul"),
    # einsum (ops/einsum.py): ATen's composite; takes the equation, then tensors
    _row("einsum", "ops.einsum", method=False, feature="matmul"),
    # LU (ops/decompositions_lu.py): lu_unpack reads a factorisation, its row by hand
    _row("linalg.lu_factor", "ops.linalg_named", (3, 3), feature="matmul"),
    _row("linalg.lu_factor_ex", "ops.linalg_named", (3, 2), feature="matmul"),
    _row("linalg.lu", "ops.linalg_named", (2, 3), feature="matmul"),
    _row("lu", "ops.decompositions_lu", (3, 3), feature="matmul", parsed_as="_lu_with_info"),
    _row("lu_unpack", "ops.decompositions_lu", method=False, feature="matmul"),
    # (ops/lu_solve.py: of a factorisation, by hand)
    _row("linalg.lu_solve", "ops.linalg_named", feature="matmul"),
    _row("lu_solve", "ops.lu_solve", feature="matmul"),
    # (ops/tensor_solve.py)
    _row("linalg.tensorinv", "ops.linalg_named", (2, 3, 6), args=(2,), feature="matmul"),
    _row("linalg.tensorsolve", "ops.linalg_named", (2, 3, 6), (2, 3), feature="matmul"),
    # (ops/combinations.py)
    _row("combinations", "ops.combinations", (4,), method=False, feature="matmul"),
    # matrix norms (ops/matrix_norms.py): vector_norm, amax, amin composites
    _row("linalg.matrix_norm", "ops.linalg_named", (3, 3), feature="reductions"),
    _row("linalg.norm", "ops.linalg_named", M, feature="reductions"),
    # ---- h28ops (issue 24): spectral decompositions ----
    # (ops/spectral.py; linalg rows: ops/linalg_spectral.py). eigh reads one triangle of A
    # (its grad, as torch's, is symmetric): its rows by hand, on A + A^T
    # (full_matrices's extra columns are not differentiable: the sample's are reduced)
    _row("linalg.svd", "ops.linalg_spectral", (3, 2), args=(False,), feature="matmul"),
    _row("svd", "ops.spectral", (2, 3), feature="matmul"),
    _row("linalg.svdvals", "ops.linalg_spectral", (3, 2), feature="matmul"),
    _row("linalg.eigh", "ops.linalg_spectral", feature="matmul"),
    _row("linalg.eigvalsh", "ops.linalg_spectral", feature="matmul"),
    _row("linalg.cond", "ops.linalg_spectral", (3, 3), feature="matmul"),
    # (ops/least_squares.py: its residuals need a driver and a tall A, its rows by hand)
    _row("linalg.lstsq", "ops.least_squares", feature="matmul"),
    # ---- h28nnf (issue 24): nn.functional's pad modes, distances ----
    # (ops/distance.py)
    _row("cdist", "ops.distance", M, (4, 3), method=False),
    _row("nn.functional.pdist", "ops.distance", (4, 3)),
    # (ops/gradient.py: ATen's composite; spacing, dim and edge_order are keyword-only)
    _row("gradient", "ops.gradient", M, method=False, overloads=True),
    # (F's Python composite over avg_pool2d/3d: a number meets input.dim())
    _row("nn.functional.local_response_norm", "ops.pooling", (1, 4, 3), args=(2,),
         overloads=True),
    # adaptive max pooling (ops/max_pool.py): F's Python functions (return_indices)
    _row("nn.functional.adaptive_max_pool1d", "ops.max_pool", (1, 2, 5), args=(3,),
         overloads=True),
    _row("nn.functional.adaptive_max_pool2d", "ops.max_pool", (1, 2, 3, 5),
         args=((2, 3),), overloads=True),
    _row("nn.functional.adaptive_max_pool3d", "ops.max_pool", (1, 1, 2, 3, 4),
         args=((1, 2, 3),), overloads=True),
    # sliding blocks (ops/folding.py): F.unfold is im2col in torch's argument parser
    _row("nn.functional.unfold", "ops.folding", (1, 2, 3, 4), args=(2,), parsed_as="im2col"),
    # average pooling (ops/pooling.py)
    _row("nn.functional.avg_pool1d", "ops.pooling", (1, 2, 5), args=(2,)),
    _row("nn.functional.avg_pool2d", "ops.pooling", (1, 2, 4, 4), args=(2,)),
    _row("nn.functional.avg_pool3d", "ops.pooling", (1, 1, 2, 2, 4), args=(2,)),
    _row("nn.functional.adaptive_avg_pool1d", "ops.pooling", (1, 2, 5), args=(3,)),
    # (F.adaptive_avg_pool2d/3d are Python code: a number meets input.size())
    _row("nn.functional.adaptive_avg_pool2d", "ops.pooling", (1, 2, 3, 5), args=((2, 3),),
         overloads=True),
    _row("nn.functional.adaptive_avg_pool3d", "ops.pooling", (1, 1, 2, 3, 4),
         args=((1, 2, 3),), overloads=True),

    # ---- h29ops2 (issue 24): operator breadth, the remaining losses, indexing, special ----
    # (ops/erf_gamma.py: torch.polygamma's forward; n comes first: by hand)
    _row("special.polygamma", "ops.erf_gamma"),
    # (nn/dropout.py: its noise is a draw of the engine's generator; OpInfo's samples that
    # draw it are left out by the map, the others are the input itself or input * 0)
    _row("nn.functional.feature_alpha_dropout", "nn.dropout", (2, 3, 2),
         args=(1.0, True)),
    # margin losses (ops/margin_losses.py; the targets are class indices: by hand)
    _row("nn.functional.multi_margin_loss", "ops.margin_losses"),
    _row("nn.functional.multilabel_margin_loss", "ops.margin_losses"),
    _row("nn.functional.triplet_margin_loss", "ops.margin_losses", M, M, M),
    # Tensor.__getitem__ (tensor_operators.py, bound in tensor.py: x[index]; views_indexing.py),
    # OpInfo's entry of indexing: basic items are views, advanced ones IndexBackward0
    _row("__getitem__", "tensor_operators", M, args=(Const([1, 0, 1]),), function=False,
         method=False, feature="views"),
    # ---- h29ops (issue 24): interpolation, normalisations, sampling ----
    # F.interpolate and its deprecated spellings (ops/interpolate.py over ops/upsampling.py):
    # F's Python functions; a sample's mode is the default, nearest
    _row("nn.functional.interpolate", "ops.interpolate", (1, 2, 3, 4), args=((5, 3),),
         overloads=True),
    _row("nn.functional.upsample_nearest", "ops.interpolate", (1, 2, 3), args=(5,),
         overloads=True),
    _row("nn.functional.upsample_bilinear", "ops.interpolate", (1, 2, 3, 4), args=((5, 3),),
         overloads=True),
    # batch and instance norm (ops/batch_norm.py): F's Python functions; native_batch_norm's
    # mean and invstd outputs are not differentiable (test_gradcheck.py writes its row)
    _row("native_batch_norm", "ops.batch_norm", method=False),
    _row("nn.functional.batch_norm", "ops.batch_norm", (3, 2, 2),
         args=(None, None, None, None, True), overloads=True),
    _row("nn.functional.instance_norm", "ops.batch_norm", (2, 3, 4), overloads=True),
    # (ops/prelu.py: a weight per channel; ops/trilinear.py: F.bilinear over _trilinear)
    _row("nn.functional.prelu", "ops.prelu", (2, 3, 2), (3,)),
    _row("nn.functional.bilinear", "ops.trilinear", (2, 3), (2, 4), (5, 3, 4)),
    # ---- h29conv (issue 24): convolution, max pooling ----
    # (ops/conv_functional.py over ATen's convolution, ops/convolution.py; a padding is
    # ints or 'same'/'valid': torch parses two signatures. The samples leave out the bias, an
    # optional tensor the sample's positions would make required: gradcheck_rows.py's
    # h29conv rows pass one)
    _row("nn.functional.conv1d", "ops.conv_functional", (1, 2, 5), (3, 2, 2), overloads=True),
    _row("nn.functional.conv2d", "ops.conv_functional", (1, 2, 4, 3), (3, 2, 2, 2),
         overloads=True),
    _row("nn.functional.conv3d", "ops.conv_functional", (1, 2, 3, 3, 2), (2, 2, 2, 2, 1),
         overloads=True),
    _row("nn.functional.conv_transpose1d", "ops.conv_functional", (1, 2, 3), (2, 3, 2)),
    _row("nn.functional.conv_transpose2d", "ops.conv_functional", (1, 2, 3, 2), (2, 3, 2, 2)),
    _row("nn.functional.conv_transpose3d", "ops.conv_functional", (1, 2, 2, 2, 2),
         (2, 2, 2, 1, 2)),
    # (ops/max_pool.py: F's Python functions, return_indices)
    _row("nn.functional.max_pool1d", "ops.max_pool", (1, 2, 5), args=(2,), overloads=True),
    _row("nn.functional.max_pool2d", "ops.max_pool", (1, 2, 4, 4), args=(2,),
         overloads=True),
    _row("nn.functional.max_pool3d", "ops.max_pool", (1, 1, 2, 2, 4), args=(2,),
         overloads=True),
    # (ops/max_unpool.py: F's Python functions; the indices a gradcheck sample cannot draw)
    _row("nn.functional.max_unpool1d", "ops.max_unpool", overloads=True),
    _row("nn.functional.max_unpool2d", "ops.max_unpool", overloads=True),
    _row("nn.functional.max_unpool3d", "ops.max_unpool", overloads=True),
    # ---- h30ops (issue 24): aten's slice, grid sampling, embedding_bag, Householder ----
    # (ops/slicing.py: torch.ops.aten.slice.Tensor, its only API: ATEN_ONLY below; its
    # gradcheck row by hand)
    _row("slice", "ops.slicing", function=False, method=False, feature="views"),
    # (ops/margin_losses.py: F's Python function; its distance a callable, a keyword)
    _row("nn.functional.triplet_margin_with_distance_loss", "ops.margin_losses", M, M, M,
         overloads=True),
    # (ops/linear_cross_entropy.py: F's Python function, its reference path; the chunked
    # path, options=..., is not modelled)
    _row("nn.functional.linear_cross_entropy", "ops.linear_cross_entropy", M, (4, 3),
         args=(Const([1, 2]),), overloads=True),
    # (ops/embedding_bag.py: F's Python function; the indices come first: by hand)
    _row("nn.functional.embedding_bag", "ops.embedding_bag", overloads=True),
    # ---- h31ops (issue 24): grid sampling ----
    # (ops/grid_sampling.py: F's Python function over ATen's grid_sampler, and the ATen ops
    # themselves, functions only)
    _row("nn.functional.grid_sample", "ops.grid_sampling", (1, 2, 3, 3), (1, 2, 2, 2),
         args=("bilinear", "zeros", False), overloads=True),
    _row("grid_sampler_2d", "ops.grid_sampling", (1, 2, 3, 3), (1, 2, 2, 2), args=(0, 0, False),
         method=False),
    _row("grid_sampler_3d", "ops.grid_sampling", (1, 2, 2, 2, 3), (1, 1, 2, 2, 3),
         args=(0, 0, True), method=False),
    # ---- h32ops (issue 24): as_strided_scatter, ... ----
    # (ops/view_scatters.py)
    _row("as_strided_scatter", "ops.view_scatters", (3, 3), (2, 2), args=((2, 2), (1, 2), 1)),
    # (ops/ctc_loss.py: F's function over torch.ctc_loss; its backward is the gradient through
    # log_softmax, not in log_probs: its gradcheck row by hand, through log_softmax)
    _row("nn.functional.ctc_loss", "ops.ctc_loss", overloads=True),
    # ---- h33ops (issue 24): Householder products (ops/householder.py) ----
    # the reflectors in the strictly lower triangle, tau their scalars (gradcheck rows by
    # hand: the formula assumes every H(tau_i) invertible)
    _row("linalg.householder_product", "ops.householder", feature="matmul"),
    _row("ormqr", "ops.householder", feature="matmul"),
    # (ops/attention.py: the fused CPU kernel's calls only; gradcheck row by hand)
    _row("nn.functional.scaled_dot_product_attention", "ops.attention", overloads=True),
)

# The overload of torch.ops.aten that torch dispatches a registry op's usual call to, where
# it is not `default` (ops/aten.py's objects, which selective activation checkpointing's
# policies compare)
ATEN_OVERLOADS: dict[str, str] = {
    **{n: "Tensor" for n in ("add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_")},
    **{n: "correction" for n in ("var", "std", "var_mean", "std_mean")},
}

FUNCTIONS: tuple[str, ...] = tuple(r.name for r in OPS if r.function)   # dotted: namespaced
METHODS: tuple[str, ...] = tuple(r.name for r in OPS if r.method)
INPLACE: tuple[str, ...] = tuple(r.inplace_name for r in OPS if r.inplace_name)
# The namespaces under `torch` that rows are exported to (`nn.functional`, `special`).
NAMESPACES: tuple[str, ...] = tuple(sorted({r.namespace for r in OPS if r.namespace}))

# Differentiable rows the program generator (conformance/gen/op_table.py) does not call, each
# with the reason; it calls every other differentiable row, in each of its forms. A test
# (tests/conformance/test_strategies.py) holds the two lists together.
NO_SAMPLE = ("no sample: its call is not made from data (a list of tensors, a condition, a "
             "domain or a leading argument gradcheck cannot draw, a property or a varargs "
             "shape); test_gradcheck.py writes its row by hand")
# Rows other helpers add list themselves so, in a block of their own at the end, until a
# probe of the default profile with them (benchmarks/generator_probe.py) is clean; they then
# join it (the block is removed).
GENERATOR_PENDING = ("issue 24: new row, not yet drawn by the generator (a probe of the "
                     "default profile with it is to be run first)")
NOT_GENERATED: dict[str, str] = {
    **{r.name: NO_SAMPLE for r in OPS if r.differentiable and r.sample is None},
    "where": "no sample: the condition is a bool tensor computed from data, drawn first",
    "cat": "no sample: takes a list of tensors",
    "stack": "no sample: takes a list of tensors",
    "to": "no sample: a dtype/device conversion; the generator draws dtypes at the leaves",
    "__rmatmul__": "a dunder: programs call it only as the `@` operator, with a left operand "
                   "that is not a tensor (the generator's matmul action draws `@`)",
    **dict.fromkeys(("imag", "view_as_real", "view_as_complex", "polar", "complex"),
                    "complex: the generator draws real dtypes only"),
    "as_strided": "the engine models as_strided only of a tensor that is the whole of its "
                  "contiguous storage (NotImplementedError otherwise); drawn inputs are often "
                  "views or transposed results (linalg.inv's): 2 of 500 probe programs",
    "linalg.inv_ex": "the engine refuses a singular matrix (NotImplementedError): the inverse "
                     "torch returns there is LAPACK's partial result, not modelled; drawn "
                     "leaves and results are often singular (3 of 500 probe programs)",
    "sgn": "its gradient on a real tensor is torch's efficient ZeroTensor, which the engine "
           "models as a plain zeros tensor (ops/backward.py, SGN): a ZeroTensor is immutable "
           "(accumulating into a .grad that holds it raises 'ZeroTensors are immutable') and "
           "absorbs what it multiplies (0 times asin's nan derivative is 0): 4 of the default "
           "profile's 250 programs diverged so",
    "corrcoef": "rounding amplified: its diagonal is 1 up to rounding (cov / stddev / "
                "stddev, clipped to [-1, 1]), which torch and the engine round apart by an "
                "ULP in float32, and an op drawn after it with a pole at 1 (erfinv, asin, "
                "atanh) turns that into inf against a finite value or NaN: 3 of 500 probe "
                "programs with every row",
    "mode": "the engine counts the NaNs of a line as one value (np.unique), torch's kernel "
            "sorts the line with std::sort's `<` (under which a NaN is unordered) and counts "
            "each NaN apart: a line with two NaNs raised IndexError in the engine (1 of the "
            "probe's first 160 programs with every row)",
    "std_mean": "its mean is Welford's running mean in torch, NaN once an infinity meets a "
                "later element (inf - inf); the engine's is NumPy's mean, inf: 1 of the "
                "probe's first 160 programs (mvlgamma's pole)",
    "linalg.solve_ex": "as linalg.inv_ex: the engine refuses a singular A "
                       "(NotImplementedError), where torch returns LAPACK's partial result "
                       "and a nonzero info: 2 of 500 probe programs with every row",
    **dict.fromkeys(("native_layer_norm", "nn.functional.layer_norm"),
                    "its forward-mode tangent: torch's layer_norm_jvp writes it in place (at "
                    "_version 2 without a weight, 4 with one), the engine's is at 0 (that "
                    "formula's in-place steps are not modelled): the ci profile's test with "
                    "the row drawn, stop 45 (its create_graph node is torch's since then)"),
    "nn.functional.hardsigmoid": "torch gives hardsigmoid_backward no derivative: a "
                                 "create_graph gradient through it is a NotImplemented node, "
                                 "which the engine does not model (it builds "
                                 "HardsigmoidBackwardBackward0): 2 of 500 probe programs",
    **dict.fromkeys(("linalg.qr", "qr"),
                    "drawn matrices are often rank-deficient (a zero or -0.0 column), where Q "
                    "is not unique: the engine's Householder reflections and LAPACK's differ "
                    "in sign there, and so do the backward's NaN and inf (2 of the default "
                    "probe's programs 250-499, and the ci profile's first failure with them "
                    "drawn, h28gen)"),
    **dict.fromkeys(("svd", "linalg.svd", "linalg.eigh"),
                    "its singular vectors or eigenvectors are defined up to each column's "
                    "sign, and numpy's LAPACK (OpenBLAS) picks other signs than torch's "
                    "(MKL); ops/spectral.py finds no rule that reproduces MKL's, so programs "
                    "compare them raw (the OpInfo check compares them up to that gauge): "
                    "the default profile's run with every row drawn failed first on "
                    "x.svd()[2] of a 3x2 float64 matrix, V's columns negated (h29gen)"),
    **dict.fromkeys(("native_group_norm", "nn.functional.group_norm"),
                    "a create_graph gradient through it has another graph than torch's "
                    "(x.grad.graph under NativeGroupNormBackward0's formula, not analysed): "
                    "1 of the default profile's 250 programs with every row (h29gen)"),
    "nn.functional.glu": "its create_graph gradient is torch's GluBackwardBackward0 node (glu_"
                         "backward has a derivative of its own), which the engine builds from "
                         "the ops of its formula (CatBackward0 of products): 1 of the default "
                         "profile's 250 programs with every row (h29gen)",
    **dict.fromkeys(("pinverse", "linalg.pinv"),
                    "float64 rounding amplified: its values are torch's up to an ULP (the "
                    "engine's SVD is numpy's LAPACK, not torch's), and an entry that is 0 or "
                    "an integer up to rounding lands on the other side of it (2.78e-17 "
                    "against -3.23e-17; 2.0 against 1.9999999999999998), which abs's gradient "
                    "(+1 against -1) or frac (0 against 1) makes an O(1) difference: 2 of the "
                    "default profile's 250 programs with every row (h29gen)"),
    "linalg.cond": ("float64 rounding amplified at a singular matrix: its smallest singular "
                    "value is 0 up to rounding, which torch's LAPACK (MKL) gives as 0.0 and "
                    "numpy's (OpenBLAS) as 1.5e-17, so cond (s_max / s_min) is inf against "
                    "1.04e17 (the ci profile's test with 317 rows, a 3x3 matrix with two "
                    "opposite columns, h32gen); linalg.svdvals gives those two smallest "
                    "values, which only an op after it amplifies"),
    "nn.functional.cosine_similarity": ("rounding amplified, as corrcoef: a row's "
                                        "similarity with itself is 1 up to rounding, which "
                                        "torch gives as 1 + 1 ULP where the engine gives 1, "
                                        "and atanh after it (a pole at 1) turns that into NaN "
                                        "against 18.37 (the default probe with 316 rows, "
                                        "program 168, h32gen)"),
    **dict.fromkeys(("matrix_exp", "linalg.matrix_exp"),
                    "float64 rounding amplified: the engine's exponential is Higham's Pade "
                    "13 with a solve, torch's (LinearAlgebra.cpp mexp) Bader et al.'s Taylor "
                    "polynomials, equal up to an ULP; exp(0) of a row and column of zeros is "
                    "1.0 in torch and 0.9999999999999999 in the engine, which erfinv after it "
                    "(a pole at 1) turns into inf against 5.456 (the ci profile's test with "
                    "315 rows, program ~203, h34gen); modelling mexp's polynomials would fix "
                    "it"),
    **dict.fromkeys(("nn.functional.avg_pool3d", "nn.functional.adaptive_avg_pool3d",
                     "nn.functional.adaptive_max_pool3d"),
                    "its input is rank 5 (N, C, D, H, W), beyond GenSettings' rank 4: the "
                    "default settings cannot draw it"),
    # torch's CPU kernels run each contiguous block of 2 x Vectorized<T>::size() elements
    # (16 float32, 8 float64 with AVX2) through SIMD code and the rest through scalar code,
    # and these backward kernels compare the input so that a NaN takes one branch in each
    # (aten/src/ATen/native/cpu/Activation.cpp): the gradient at a NaN input depends on the
    # element's position in its tensor, which the engine does not model (its gradient is the
    # scalar code's); measured with torch 2.13 on 83 float32 and 43 float64 NaNs (h32gen)
    **dict.fromkeys(("nn.functional.elu", "nn.functional.selu", "nn.functional.celu"),
                    "its gradient at a NaN input depends on the element's position: "
                    "elu_backward's scalar code `x <= 0 ? negative branch : g * scale` gives "
                    "g * scale, its SIMD code blendv(negative branch, g * scale, x > 0) the "
                    "negative branch, NaN (exp(NaN)); the engine gives g * scale (1 of the "
                    "default profile's 250 programs with 326 rows, selu, h29gen)"),
    **dict.fromkeys(("nn.functional.hardtanh", "nn.functional.relu6"),
                    "its gradient at a NaN input depends on the element's position: "
                    "hardtanh_backward's scalar code `(x <= min || x >= max) ? 0 : g` gives "
                    "g, its SIMD code `((x > min) & (x < max)) & g` gives 0; the engine "
                    "gives g (test_cli_run's workers-0 test with 326 rows, relu6, h31gen)"),
    **dict.fromkeys(("nn.functional.hardshrink", "nn.functional.softshrink"),
                    "its gradient at a NaN input depends on the element's position: "
                    "shrink_backward's scalar code `(x >= -l && x <= l) ? 0 : g` gives g, "
                    "its SIMD code `((x < -l) | (x > l)) & g` gives 0; the engine gives g"),
    "nn.functional.hardswish": ("its gradient at a NaN input depends on the element's "
                                "position: hardswish_backward's scalar code (x < -3: 0; "
                                "x <= 3: g * (x / 3 + 0.5); else g) gives g, its SIMD code "
                                "(blendv on x >= 3, then on x < -3) g * (x / 3 + 0.5), NaN; "
                                "the engine gives g"),
    # measured with torch 2.13 (h37ops): float32 gelu(inf, approximate='none') is NaN in a
    # contiguous tensor of 2 or more elements (the vectorized kernel, whose erf gives
    # 0 * inf there) and inf in a 1-element or strided one (the scalar kernel, 0.5 x (1 +
    # erf(x / sqrt 2))); float64 and approximate='tanh' give inf in both
    "nn.functional.gelu": ("its float32 value at +inf depends on the layout: NaN from "
                           "torch's vectorized kernel (a contiguous tensor of 2 or more "
                           "elements), inf from its scalar one (1 element, strided) and "
                           "from the engine: the default probe with 311 rows, program 36, "
                           "gelu(i0(...)) of a 6-element float32 tensor (h37ops)"),
    "logit": ("with eps, its gradient at a NaN input depends on the element's position: "
              "logit_backward's scalar code `(x < lo || x > hi) ? 0 : g / (x * (1 - x))` "
              "gives NaN, its SIMD code blendv(0, g / (x * (1 - x)), (x >= lo) & (x <= "
              "hi)) gives 0 (BinaryOpsKernel.cpp); the engine gives 0"),
    # torch's CPU median kernel (median_with_indices_impl, 2.13 and 2.14.1) reads the reduced
    # dimension as if its stride were 1 when it is 0: the storage's next elements, or memory
    # never written, different from run to run (docs/findings/torch_median.md); an expanded
    # tensor (expand, broadcast_to, the gradient of a sum or mean) is common in programs and
    # the generator does not know strides
    **dict.fromkeys(("median", "nanmedian", "masked.median"),
                    "torch bug: its CPU kernel with a dim reads unwritten memory where the "
                    "reduced dimension has stride 0 (an expanded tensor): "
                    "ones(()).expand(2, 3).median(1) gives [6.9e-310, 6.9e-310], another "
                    "value each run; the ci profile's test with 313 rows ended in a "
                    "FlakyFailure on g.median(1) of a sum's gradient (torch 3.178, then "
                    "3.1699, where 3.198 is right; h34gen, analysed by h35gen)"),
    "as_strided_copy": "as as_strided: the engine models it only of a tensor that is the "
                       "whole of its contiguous storage (NotImplementedError otherwise): 1 of "
                       "500 probe programs with every row drew a view or transposed result",
}
# The reflected operators (h24ops2's module tensor_operators): a program reaches them only
# through the operator form of their forward row with a number on the left (`2.0 - x`); a
# program calling x.__rsub__(...) fails to parse ('dunder attribute not allowed'), as for
# __rmatmul__ above.
NOT_GENERATED.update({
    r.name: "a dunder: programs call it only as an operator with a number on the left, "
            "which the case language writes as the forward row's operator (`2.0 - x`)"
    for r in OPS if r.module == "tensor_operators"})

# ---- h29ops2 (issue 24): its new rows, not drawn by the generator yet ----
H29OPS2_ROWS = frozenset({"nn.functional.feature_alpha_dropout",
                          "nn.functional.triplet_margin_loss"})
NOT_GENERATED.update({
    r.name: GENERATOR_PENDING for r in OPS
    if r.differentiable and r.sample is not None and r.name in H29OPS2_ROWS})

# ---- h29ops (issue 24): its new rows, not drawn by the generator yet ----
# (ops.prelu's row joined the probe's rows, PROBE_PENDING below: with every row drawn, 16
# of the default probe's 250 programs and 13 of --seed 1's 150 called it, none diverged)
H29OPS_MODULES = frozenset({"ops.interpolate", "ops.batch_norm", "ops.trilinear"})
NOT_GENERATED.update({
    r.name: GENERATOR_PENDING for r in OPS
    if r.differentiable and r.sample is not None and r.module in H29OPS_MODULES})

# ---- h29conv (issue 24): its new rows, not drawn by the generator yet ----
# (ops.max_pool holds the adaptive max poolings too, h28nnf's rows, which are drawn)
H29CONV_MODULES = frozenset({"ops.conv_functional", "ops.max_pool", "ops.max_unpool"})
NOT_GENERATED.update({
    r.name: GENERATOR_PENDING for r in OPS
    if r.differentiable and r.sample is not None and r.module in H29CONV_MODULES
    and not r.name.startswith("nn.functional.adaptive_max_pool")})

# ---- h30ops (issue 24): its new rows, not drawn by the generator yet ----
H30OPS_ROWS = frozenset({"nn.functional.triplet_margin_with_distance_loss",
                         "nn.functional.linear_cross_entropy"})
NOT_GENERATED.update({
    r.name: GENERATOR_PENDING for r in OPS
    if r.differentiable and r.sample is not None and r.name in H30OPS_ROWS})

# ---- h31ops (issue 24): its new rows, not drawn by the generator yet ----
H31OPS_MODULES = frozenset({"ops.grid_sampling"})
NOT_GENERATED.update({
    r.name: GENERATOR_PENDING for r in OPS
    if r.differentiable and r.sample is not None and r.module in H31OPS_MODULES})

# ---- h32ops (issue 24): its new rows, not drawn by the generator yet ----
H32OPS_ROWS = frozenset({"as_strided_scatter", "nn.functional.ctc_loss"})
NOT_GENERATED.update({
    r.name: GENERATOR_PENDING for r in OPS
    if r.differentiable and r.sample is not None and r.name in H32OPS_ROWS})

# ---- h33ops (issue 24): its new rows, not drawn by the generator yet ----
H33OPS_ROWS = frozenset({"linalg.householder_product", "ormqr",
                         "nn.functional.scaled_dot_product_attention"})
NOT_GENERATED.update({
    r.name: GENERATOR_PENDING for r in OPS
    if r.differentiable and r.sample is not None and r.name in H33OPS_ROWS})

# The default profile draws the rows it drew before issue 24's op breadth (these 60). The
# generator draws every other row with a sample alike, but with them the default probe and
# the ci profile's test still meet engine gaps (benchmarks/README.md, "The generator's row
# set": stops 33 to 41), and every change of the row set draws other programs that meet others.
# They join the default profile when a probe and the ci profile with them are clean. Listed,
# not hidden: each is in NOT_GENERATED with this reason (or a measured reason of its own
# above, which stays when the rows join).
DRAWN_BEFORE_ISSUE_24 = frozenset({
    "abs", "add", "addmm", "amax", "amin", "atan2", "bmm", "chunk", "clamp", "clone",
    "copy_", "cos", "diagonal", "div", "dot", "exp", "fill_", "flatten", "gather",
    "index_fill", "index_select", "log", "log_softmax", "masked_fill", "matmul", "max",
    "maximum", "mean", "min", "minimum", "mm", "mul", "mv", "narrow", "neg", "permute",
    "pow", "prod", "reciprocal", "relu", "reshape", "rsub", "select", "sigmoid", "sin",
    "softmax", "split", "sqrt", "squeeze", "sub", "sum", "t", "tanh", "trace", "transpose",
    "unbind", "unsqueeze", "var", "var_mean", "zero_"
})
PROBE_PENDING = ("issue 24: a row the generator can draw, kept out of the default profile "
                 "until its programs with every row drawn agree with torch (they do not yet: "
                 "README, 'Generated programs')")
NOT_GENERATED.update({
    r.name: PROBE_PENDING for r in OPS
    if r.differentiable and r.sample is not None and r.name not in NOT_GENERATED
    and r.name not in DRAWN_BEFORE_ISSUE_24})

# ---- h30ops (issue 24): rows whose only API is their aten op, its overload ----
# torch has no `torch.slice`: OpInfo's entry `slice` calls torch.ops.aten.slice.Tensor, which
# the facade binds to the row's forward (ops/aten.py) and a case program may call
ATEN_ONLY = ("slice",)
ATEN_OVERLOADS["slice"] = "Tensor"
