"""The op registry, in the spirit of PyTorch's OpInfo: one row per public op.

Made from these rows: the package's op exports and `__all__`, Tensor's methods that are an
op's forward and their in-place forms (reference_engine/__init__.py; tensor.py writes only
the adapters), the op names a case program may call (conformance/api.py), the feature family
a generated program touches (conformance/generated.py), and a central-difference gradcheck
of every row with a sample (tests/reference_engine/test_gradcheck.py). The backward of each
op is its OpSpec, next to its forward. Pure data: imports no engine code, so the harness
reads it without depending on the engine's behaviour (a case must run on this engine, the
executable specification, so its op vocabulary is the harness's).

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
    # with no method, or whose method tensor.py writes as an adapter (varargs shapes, where's
    # argument order), which is then kept as written.
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
    def inplace_name(self) -> str | None:
        return None if self.inplace is None else self.name + "_"


def _row(name: str, module: str, *shapes: Shape, args: tuple[object, ...] = (),
         positive: bool = False, function: bool = True, method: bool | None = None,
         inplace: str | None = None, differentiable: bool = True,
         feature: str = "ops", numbers: tuple[int, ...] = (), overloads: bool = False
         ) -> OpRow:
    """One row; `shapes` (with `args` and `positive`) is its gradcheck sample, none if empty.
    `method` defaults to True for torch's own functions, False for a namespaced one."""
    sample = Sample(shapes, args, positive) if shapes else None
    has_method = "." not in name if method is None else method
    return OpRow(name, module, function, has_method, inplace, differentiable, feature, sample,
                 numbers, overloads)


V, M, S3 = (3,), (2, 3), (2, 3, 2)   # sample shapes: a vector, a matrix, a 3-d tensor
MASK = Const([[True, False, True], [False, True, False]], "bool")

OPS: tuple[OpRow, ...] = (
    # elementwise arithmetic and unary (ops/elementwise.py; addmm: ops/linalg.py), with
    # in-place forms (inplace.py)
    _row("add", "ops.elementwise", M, V, inplace="inplace", numbers=(0, 1)),
    _row("sub", "ops.elementwise", M, M, inplace="inplace", numbers=(0, 1)),
    _row("mul", "ops.elementwise", M, (1, 3), inplace="inplace", numbers=(0, 1)),
    _row("div", "ops.elementwise", M, M, positive=True, inplace="inplace", numbers=(0, 1)),
    _row("pow", "ops.elementwise", V, V, positive=True, inplace="inplace", overloads=True),
    _row("neg", "ops.elementwise", V, inplace="inplace"),
    _row("exp", "ops.elementwise", V, inplace="inplace"),
    _row("log", "ops.elementwise", V, positive=True, inplace="inplace"),
    _row("sqrt", "ops.elementwise", V, positive=True, inplace="inplace"),
    _row("abs", "ops.elementwise", (4,), inplace="inplace"),
    _row("sin", "ops.elementwise", V, inplace="inplace"),
    _row("cos", "ops.elementwise", V, inplace="inplace"),
    _row("tanh", "ops.elementwise", V, inplace="inplace"),
    _row("sigmoid", "ops.elementwise", V, inplace="inplace"),
    _row("relu", "ops.elementwise", (4,), inplace="inplace"),
    _row("clamp", "ops.elementwise", (4,), args=(-0.5, 0.5), inplace="inplace", overloads=True),
    _row("reciprocal", "ops.elementwise", V, positive=True),
    _row("maximum", "ops.elementwise", (4,), (4,)),
    _row("minimum", "ops.elementwise", (4,), (4,)),
    _row("atan2", "ops.elementwise", M, V),
    _row("clone", "ops.elementwise", M),
    # the condition comes first; Tensor.where adapts
    _row("where", "ops.elementwise", method=False),
    _row("rsub", "ops.elementwise", V, V, method=False, overloads=True),
    _row("addmm", "ops.linalg", (2,), M, (3, 2), method=False),
    _row("signbit", "ops.elementwise", differentiable=False),
    _row("isnan", "ops.elementwise", differentiable=False),
    _row("equal", "ops.elementwise", method=False, differentiable=False),
    _row("allclose", "ops.elementwise", method=False, differentiable=False),
    _row("to", "ops.elementwise", function=False, feature="devices"),
    # products (ops/linalg.py)
    _row("mm", "ops.linalg", M, (3, 2), feature="matmul"),
    _row("mv", "ops.linalg", M, V, feature="matmul"),
    _row("matmul", "ops.linalg", M, (3, 2), feature="matmul"),
    _row("dot", "ops.linalg", V, V, feature="matmul"),
    _row("bmm", "ops.linalg", (2, 2, 3), (2, 3, 2), feature="matmul"),
    # reductions (ops/reductions.py; softmax and log_softmax: ops/nn.py)
    _row("sum", "ops.reductions", M, feature="reductions"),
    _row("mean", "ops.reductions", M, feature="reductions"),
    _row("prod", "ops.reductions", M, positive=True, feature="reductions"),
    _row("amax", "ops.reductions", M, feature="reductions"),
    _row("amin", "ops.reductions", M, feature="reductions"),
    _row("max", "ops.reductions", M, feature="reductions"),
    _row("min", "ops.reductions", M, feature="reductions"),
    _row("trace", "ops.reductions", (3, 2), feature="reductions"),
    _row("argmax", "ops.reductions", differentiable=False, feature="reductions"),
    _row("argmin", "ops.reductions", differentiable=False, feature="reductions"),
    _row("softmax", "ops.nn", M, args=(1,)),
    _row("log_softmax", "ops.nn", M, args=(0,)),
    _row("var", "ops.reductions", M, feature="reductions", overloads=True),
    _row("var_mean", "ops.reductions", M, method=False, feature="reductions",
         overloads=True),
    # joining and indexing (ops/joining.py, ops/indexing.py)
    _row("cat", "ops.joining", method=False),       # take a list of tensors
    _row("stack", "ops.joining", method=False),
    _row("gather", "ops.indexing", M, args=(1, Const([[0, 2], [1, 1]]))),
    _row("index_select", "ops.indexing", M, args=(1, Const([2, 0, 2]))),
    _row("index_fill", "ops.indexing", M, args=(1, Const([0, 2]), 0.5), overloads=True),
    _row("masked_fill", "ops.indexing", M, args=(MASK, 0.5), inplace="inplace",
         overloads=True),
    # views (views.py); their in-place forms restride the tensor itself
    _row("t", "views", M, inplace="views", feature="views"),
    _row("transpose", "views", M, args=(0, 1), inplace="views", feature="views"),
    _row("squeeze", "views", (2, 1, 3), inplace="views", feature="views"),
    _row("unsqueeze", "views", M, args=(1,), inplace="views", feature="views"),
    _row("flatten", "views", S3, feature="views"),
    _row("narrow", "views", M, args=(1, 1, 2), feature="views", overloads=True),
    _row("diagonal", "views", (3, 3), feature="views"),
    _row("unbind", "views", M, feature="views"),
    _row("split", "views", M, args=(2, 1), feature="views", overloads=True),
    _row("chunk", "views", (3, 2), args=(2, 0), feature="views"),
    # Tensor.reshape and Tensor.permute take varargs shapes: adapters in tensor.py
    _row("reshape", "views", M, args=((6,),), method=False, feature="views"),
    _row("permute", "views", S3, args=((2, 0, 1),), method=False, feature="views"),
    _row("select", "views", M, args=(1, 2), function=False, feature="views"),
    # in-place ops with no out-of-place form here (inplace.py)
    _row("zero_", "inplace", V, function=False, feature="inplace"),
    _row("fill_", "inplace", V, args=(2.0,), function=False, feature="inplace"),
    _row("copy_", "inplace", V, V, function=False, feature="inplace", numbers=(1,)),
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
    _row("pinverse", "ops.decompositions", (3, 2), feature="matmul"),
    # ---- nn.functional and special (issue 24) ----
    _row("nn.functional.relu", "ops.activations", (4,)),
)

FUNCTIONS: tuple[str, ...] = tuple(r.name for r in OPS if r.function)   # dotted: namespaced
METHODS: tuple[str, ...] = tuple(r.name for r in OPS if r.method)
INPLACE: tuple[str, ...] = tuple(r.inplace_name for r in OPS if r.inplace_name)
# The namespaces under `torch` that rows are exported to (`nn.functional`, `special`).
NAMESPACES: tuple[str, ...] = tuple(sorted({r.namespace for r in OPS if r.namespace}))

# Differentiable rows the program generator (conformance/strategies.py) does not call, each
# with the reason; it calls every other differentiable row, in each of its forms. A test
# (tests/conformance/test_strategies.py) holds the two lists together.
GENERATOR_PENDING = ("issue 24: new row, not yet drawn by the generator (its floors are "
                     "redesigned for the grown registry)")
NOT_GENERATED: dict[str, str] = {
    "where": "no sample: the condition is a bool tensor computed from data, drawn first",
    "cat": "no sample: takes a list of tensors",
    "stack": "no sample: takes a list of tensors",
    "to": "no sample: a dtype/device conversion; the generator draws dtypes at the leaves",
    # ---- products and linear algebra (issue 24) ----
    **dict.fromkeys(("__rmatmul__", "addmv", "addr", "baddbmm", "addbmm", "vdot", "outer",
                     "kron", "cross",
                     "cholesky_inverse", "cholesky_solve", "cholesky", "linalg.cross",
                     "linalg.diagonal", "linalg.vecdot", "linalg.inv",
                     "linalg.solve_triangular", "linalg.cholesky", "linalg.pinv", "pinverse",
                     "linalg.inv_ex", "linalg.cholesky_ex", "linalg.matrix_power",
                     "linalg.multi_dot"),
                    GENERATOR_PENDING),
    # ---- nn.functional and special (issue 24) ----
    **dict.fromkeys(("nn.functional.relu",), GENERATOR_PENDING),
}
