"""The one closed table of torch API a case program may reach.

A program reaches an engine only through these names. Anything else, every dunder
included, is rejected when the case file is loaded. Each engine under test is a module with
torch's shape; the interpreter resolves a dotted path here by attribute lookup on it.
"""

from __future__ import annotations

import ast
import difflib

from conformance.case import program as ir
from reference_engine import registry

# Names a program may use bare, and the dotted path each stands for.
ROOTS: dict[str, str] = {
    "torch": "torch",
    "nn": "torch.nn",
    "F": "torch.nn.functional",
    "Variable": "torch.autograd.Variable",
    "fwAD": "torch.autograd.forward_ad",   # as test_autograd.py imports it
}


def rooted(dotted: str | None) -> str | None:
    """The API path a dotted name spells from a root (`torch.nn.Parameter` for
    `nn.Parameter`), whether or not the table has it; None when it does not start at a root.
    The one rule for the parser (language, on Python's ast) and the interpreter (on the IR)."""
    if dotted is None:
        return None
    root, _, rest = dotted.partition(".")
    if root not in ROOTS:
        return None
    return ROOTS[root] + (f".{rest}" if rest else "")


def api_path(e: ir.Expr | ast.expr) -> str | None:
    """The API path an expression names from a root (`torch.nn.Linear` for `nn.Linear`),
    whether or not the table has it, or None: of a Program's expression (the interpreter)
    or of a syntax tree's (the parser)."""
    return rooted(ir.dotted(e))

# Dotted paths that are namespaces (attribute access continues through them).
NAMESPACES: frozenset[str] = frozenset(
    {"torch", "torch.autograd", "torch.autograd.function", "torch.autograd.graph", "torch.nn",
     "torch.nn.functional"}
    | {"torch.utils", "torch.utils.checkpoint"}   # anomaly, gradcheck, checkpoint
    | {"torch.ops", "torch.ops.aten"}   # the op objects a selective-checkpoint policy compares
    | {"torch.autograd.forward_ad"}
    | {"torch.autograd.functional"}
    | {"torch._C", "torch._C._autograd"}   # torch._C._autograd.SavedTensor, for isinstance
    | {"torch._VF"}   # unique_dim and unique_consecutive, as test_integer_outputs calls them
    # the registry's namespaces (`torch.special`, `torch.nn.functional`) and their parents
    | {"torch." + ns.rpartition(".")[0] for ns in registry.NAMESPACES if "." in ns}
    | {f"torch.{ns}" for ns in registry.NAMESPACES}
)

# The ops are the rows of the reference engine's op registry, read from it: a case must run
# on that engine (the executable specification), so its ops are the cases' vocabulary. The
# registry is pure data; only its names are read here.
#
# Every other callable or value a program reaches by a dotted path is a row below: a
# namespace, its names, and the flags they share.
# - PURE: makes new values (or views) and changes nothing a snapshot records, so a step that
#   only calls pure names reuses the snapshots before it (the incremental observation,
#   conformance/run/changes.py). A method is pure only on an engine tensor: a module's
#   `double()` converts its parameters in place.
# - SIZED: a factory whose arguments are the sizes of the tensor it makes (`torch.full`'s
#   first), a function or a tensor's new_* method (new_tensor: its data, as torch.tensor's):
#   its elements are counted against the run's budget before the call
#   (run/operation_limits.py).
# - SEEDED: served by the harness from its own seeded generator, so that every engine sees
#   identical random values (run/harness_builtins.py; nn.Linear is built by the engine, then
#   its parameters are refilled).
PURE, SIZED, SEEDED_FLAG = "pure", "sized", "seeded"
# torch.ops.aten's ops a program may name (`torch.ops.aten.sin` and its one overload,
# `torch.ops.aten.sin.default`, else as reference_engine/registry.py's ATEN_OVERLOADS
# says): the objects a selective checkpoint's policy is given and compares
ATEN_OPS = "sin cos exp mm view var_mean mul mul_ clone"
# ... and the registry's rows whose only API is their aten op, called through its overload
# (`torch.ops.aten.slice.Tensor(x, 1, 0, 2)`: torch has no torch.slice)
ATEN_OPS += "".join(f" {name}" for name in registry.ATEN_ONLY)
TENSOR = "Tensor"  # the rows of Tensor's methods (named without a namespace)

_ROWS: tuple[tuple[str, str, frozenset[str]], ...] = tuple(
    (namespace, names, frozenset(flags)) for namespace, names, flags in [
        ("torch", """tensor zeros_like ones_like arange is_tensor get_default_dtype
                     is_grad_enabled is_inference is_inference_mode_enabled is_neg
                     is_conj""", {PURE}),
        ("torch", "zeros ones full", {PURE, SIZED}),
        # torch.empty's memory is uninitialised, which traces would compare: a case fills it
        # in the statement that makes it (`torch.empty(5, 5).fill_(v)`, the tests' form), as
        # it does empty_strided's and empty_like's (h39cov: test_inplace, test_indexing)
        ("torch", "empty", {PURE, SIZED}),
        # its elements (steps) counted before the call by operation_limits.factory_elements
        ("torch", "linspace", {PURE}),
        # the ATen ops under torch.unique and torch.unique_consecutive (test_integer_outputs)
        ("torch", "_unique _unique2", {PURE}),
        ("torch._VF", "unique_dim unique_consecutive", {PURE}),
        # a leaf of chosen strides (test_strided_leaf_grad_layout); like torch.empty its
        # memory is uninitialised, so a case fills it (`.copy_(...)`) in the same statement
        ("torch", "empty_strided", {PURE, SIZED}),
        ("torch", "rand randn", {PURE, SIZED, SEEDED_FLAG}),
        ("torch", "rand_like randn_like", {PURE, SEEDED_FLAG}),
        ("torch", "manual_seed", {SEEDED_FLAG}),
        ("torch", """no_grad enable_grad set_grad_enabled inference_mode
                     float32 float64 float double float16 half bfloat16
                     int64 long int32 int int16 short int8 uint8 bool
                     complex64 complex128 cfloat cdouble
                     contiguous_format channels_last preserve_format strided""", ()),
        ("torch.autograd", "grad backward Function Variable", ()),
        ("torch.autograd.function", "once_differentiable InplaceFunction", ()),
        # gradient edges (accepted by autograd.grad and backward), context managers for
        # `with` (saved-tensor hooks), and hooks over several tensors
        ("torch.autograd.graph", """get_gradient_edge GradientEdge saved_tensors_hooks
                                    disable_saved_tensors_hooks save_on_cpu
                                    register_multi_grad_hook increment_version
                                    allow_mutation_on_saved_tensors""", ()),
        # forward-mode AD: dual levels (`with fwAD.dual_level():`), dual tensors, their parts
        ("torch.autograd.forward_ad", "dual_level enter_dual_level exit_dual_level", ()),
        # make_dual and unpack_dual make new aliases (a dual view of the primal; the primal's
        # view and the tangent) and change no existing tensor's snapshot (a tangent is no
        # field of one: it is read through unpack_dual's result)
        ("torch.autograd.forward_ad", "make_dual unpack_dual", {PURE}),
        # torch.autograd.functional: the functions given to them are the program's lambdas
        ("torch.autograd.functional", "vjp jvp jacobian hessian vhp hvp", ()),
        # the engine's handle, for final callbacks of the running backward
        ("torch.autograd.Variable", "_execution_engine", ()),
        ("torch.autograd.Variable._execution_engine", "queue_callback", ()),
        # the class of `grad_fn._raw_saved_*`'s items, for `isinstance` (h28cov)
        ("torch._C._autograd", "SavedTensor", ()),
        # the tensor class, for `isinstance(x, torch.Tensor)` (torch's tests' assertIsInstance)
        ("torch", "Tensor", ()),
        # the legacy tensor classes (h39fwd): `isinstance(x, torch.FloatTensor)`, their
        # legacy constructor (sizes, or data) and `x.type(torch.DoubleTensor)`, as
        # test_autograd's forward-mode and complex tests write them; sized as torch.zeros
        # (sizes) or torch.tensor (data) by operation_limits.factory_elements
        ("torch", """FloatTensor DoubleTensor HalfTensor BFloat16Tensor ByteTensor CharTensor
                     ShortTensor IntTensor LongTensor BoolTensor""", {PURE}),
        ("torch.nn", "Linear", {SEEDED_FLAG}),
        ("torch.nn", "Parameter Module MSELoss BatchNorm1d", ()),
        # containers and activations of test_checkpointing's network (h33cov)
        ("torch.nn", "Sequential ReLU", ()),
        # a distance for F.triplet_margin_with_distance_loss (h30ops)
        ("torch.nn", "PairwiseDistance", ()),
        # written in reference_engine/nn/functional.py (the registry's `nn.functional.*`
        # rows are read from it, with torch's other ops)
        ("torch.nn.functional", "cross_entropy softmax log_softmax", {PURE}),
        # anomaly mode, gradcheck and activation checkpointing (public autograd tooling)
        ("torch", "is_anomaly_enabled is_anomaly_check_nan_enabled", {PURE}),
        ("torch", "set_anomaly_enabled", ()),
        ("torch.autograd", "detect_anomaly set_detect_anomaly gradcheck gradgradcheck", ()),
        # autocast: a context manager, and its state's queries (h35cov)
        ("torch", "autocast", ()),
        ("torch", "is_autocast_enabled get_autocast_dtype", {PURE}),
        ("torch.utils.checkpoint",
         """checkpoint checkpoint_sequential set_checkpoint_early_stop GraphExecGroup
            set_checkpoint_debug_enabled
            create_selective_checkpoint_contexts CheckpointPolicy""", ()),
        ("torch.utils.checkpoint.CheckpointPolicy",
         "MUST_SAVE PREFER_SAVE MUST_RECOMPUTE PREFER_RECOMPUTE", ()),
        ("torch.ops.aten", ATEN_OPS, ()),
        *((f"torch.ops.aten.{op}", registry.ATEN_OVERLOADS.get(op, "default"), ())
          for op in ATEN_OPS.split()),
        # Tensor's methods besides the registry's op methods and in-place forms; `where`,
        # `reshape` and `permute` are function rows whose methods tensor.py adapts
        (TENSOR, """detach item tolist size dim numel is_contiguous stride where reshape view
                    view_as permute expand expand_as contiguous is_complex is_conj
                    numpy adjoint""", {PURE}),
        # `_is_view()` is a field of every tensor's snapshot (an engine has it anyway);
        # `storage()` is read for its length and address (`len(x.storage())`,
        # `x.storage().data_ptr()`, compared, as torch's tests do: an address itself differs
        # between any two runs)
        # `_neg_view()` makes a negative view (the neg bit, which torch.is_neg reads)
        (TENSOR, "_is_view storage _neg_view", {PURE}),
        (TENSOR, """backward retain_grad register_hook register_post_accumulate_grad_hook
                    requires_grad_ detach_ cpu cuda""", ()),
        # the in-place comparison (no registry row: `==` is the out-of-place form)
        (TENSOR, "eq_", ()),
        # h36eng: factories of a tensor's shape, or of its dtype and device
        ("torch", "full_like as_tensor", {PURE}),
        # h37fwd: empty_like, like torch.empty_strided, is uninitialised memory in torch: a
        # case fills it (`.zero_()`) or reads only its metadata in the same statement
        ("torch", "empty_like", {PURE}),
        # new_* of the sizes given (counted as torch.zeros' and torch.full's are; new_empty's
        # memory is filled in the same statement, as empty_like's); new_tensor's data is
        # counted as torch.tensor's (operation_limits.factory_elements)
        (TENSOR, "new_zeros new_ones new_full new_empty new_tensor", {PURE, SIZED}),
        # Tensor.type(): its type string, or a conversion as .to() makes (self unchanged)
        (TENSOR, "type", {PURE}),
        # h38fwd: Tensor.type_as(other), a conversion to other's dtype and device (.to's)
        (TENSOR, "type_as", {PURE}),
        # the integer conversions beside the registry's float() and double() (test_functional's
        # `a.long().float()` makes a tensor unconnected to `a`)
        (TENSOR, "long int", {PURE}),
    ]
)


# Ops that may write into an input although their name has no trailing `_`: ATen's cov of a
# single observation with only fweights or only aweights zeroes its input in place
# (cases/ops/cov_of_one_observation_zeroes_its_input.yaml); batch norm in training updates
# its running_mean and running_var in place (instance norm through it).
WRITES_AN_INPUT = frozenset({"cov", "native_batch_norm", "nn.functional.batch_norm",
                             "nn.functional.instance_norm"})


def _op_flags(name: str) -> frozenset[str]:
    # the registry's ops are pure, but for their in-place forms and those above
    pure = not name.endswith("_") and name not in WRITES_AN_INPUT
    return frozenset({PURE}) if pure else frozenset()


# Every path a program may call or read with its flags; Tensor's methods by their name.
FLAGS: dict[str, frozenset[str]] = {
    **{f"torch.{n}": _op_flags(n) for n in registry.FUNCTIONS},
    **{n: _op_flags(n) for n in registry.METHODS},
    **{name if namespace == TENSOR else f"{namespace}.{name}": flags
       for namespace, names, flags in _ROWS for name in names.split()},
}
_METHODS: frozenset[str] = frozenset(p for p in FLAGS if "." not in p)


def _flagged(flag: str, methods: bool = False) -> frozenset[str]:
    return frozenset(p for p, flags in FLAGS.items()
                     if flag in flags and (p in _METHODS) == methods)


# Every callable or value reachable by a dotted path from a root, and those flagged.
FUNCTIONS: frozenset[str] = frozenset(FLAGS) - _METHODS
PURE_FUNCTIONS: frozenset[str] = _flagged(PURE)
PURE_METHODS: frozenset[str] = _flagged(PURE, methods=True)
SIZED_FACTORIES: frozenset[str] = _flagged(SIZED)
SIZED_METHODS: frozenset[str] = _flagged(SIZED, methods=True)
SEEDED: frozenset[str] = _flagged(SEEDED_FLAG)

_TENSOR_ATTRIBUTES = """
grad grad_fn requires_grad is_leaf data shape dtype device is_cuda retains_grad _version
_base ndim T mT mH H is_inference output_nr volatile real imag grad_dtype layout
"""
# grad_fn's generated `_saved_*` properties that cases read (e.g. after the graph is freed).
_SAVED = "_saved_self _saved_other _saved_result _saved_exponent _saved_mat2"
# ... and non-tensor ones the engine keeps as node attributes (test_grad_fn_attr_bindings:
# stack's dim, mean's self_sym_sizes)
_SAVED_VALUES = "_saved_dim _saved_self_sym_sizes"
# ... the SavedTensor objects behind them (`_raw_saved_*`; none for a Scalar such as pow's
# exponent), and a custom Function's.
_RAW_SAVED = " ".join(n.replace("_saved_", "_raw_saved_") for n in _SAVED.split()
                      if n != "_saved_exponent")
_FUNCTION_SAVED = "saved_tensors _raw_saved_tensors"

# Attribute names allowed on values that are not namespaces, by what they belong to. The
# loader cannot know a value's type, so it checks membership in the union; the interpreter
# checks again at run time.
OBJECT_ATTRIBUTES: dict[str, frozenset[str]] = {
    "tensor method": _METHODS | frozenset(registry.INPLACE),
    "tensor attribute": frozenset(_TENSOR_ATTRIBUTES.split()),
    "grad_fn": frozenset({"name", "next_functions", "register_hook", "register_prehook",
                          "metadata", "variable", *_SAVED.split(), *_RAW_SAVED.split(),
                          *_SAVED_VALUES.split(),
                          *_FUNCTION_SAVED.split()}),   # variable: AccumulateGrad's
    "ctx": frozenset(
        {"save_for_backward", "save_for_forward", "saved_tensors", "needs_input_grad",
         "mark_dirty",
         "mark_non_differentiable", "set_materialize_grads", "saved_variables"}
    ),
    "module": frozenset({"weight", "bias", "parameters", "zero_grad", "in_features",
                         "out_features", "register_full_backward_hook", "eval", "train",
                         "double"}),
    "hook handle": frozenset({"remove"}),
    "max/min result": frozenset({"values", "indices"}),
    "Function class": frozenset({"apply"}),
    "gradient edge": frozenset({"node", "output_nr", "ownership_token"}),
    # torch._C._autograd.SavedTensor, from `grad_fn._raw_saved_*`
    "saved tensor": frozenset({"register_hooks", "data", "unpack_hook"}),
    # what `with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:` binds: the
    # clones made of saved tensors modified in place (`len(ctx.cloned)`), and the saved
    # tensors it tracks (`len(ctx.tid_to_weakhandle)`), as TestAllowMutationOnSaved counts
    "allow mutation context": frozenset({"cloned", "tid_to_weakhandle"}),
    # torch.utils.checkpoint.SelectiveCheckpointContext, a selective checkpoint's policy's
    # first argument
    "selective checkpoint context": frozenset({"is_recompute"}),
    # forward_ad.UnpackedDualTensor, from `fwAD.unpack_dual(x)`
    "unpacked dual": frozenset({"primal", "tangent"}),
    # torch.storage.TypedStorage, from `x.storage()`
    "storage": frozenset({"data_ptr"}),
    # torch.dtype (`out.dtype.is_floating_point`, as test_integer_outputs reads it)
    "dtype": frozenset({"is_floating_point"}),
    # the harness builtin `weakref`: `weakref.ref(x)` makes Python's weak reference to x,
    # which a program calls (`ref()`: x, or None once x is freed), as torch's tests watch a
    # graph, a tangent or a node's metadata go (test_forward_level_cleanup)
    "weakref module": frozenset({"ref"}),
}
ATTRIBUTES: frozenset[str] = frozenset().union(*OBJECT_ATTRIBUTES.values())

# Attributes a program may assign to (`x.grad = None`, `y.data = ...`).
SETTABLE: frozenset[str] = frozenset({"grad", "data", "requires_grad", "grad_dtype"})

# Isolation: a program sets attributes only on values it made (its tensors, its Functions'
# ctx, its modules), never on a class, a namespace or another engine object, whose change
# every later case in the process would see. These are the attributes through which an
# assignment still reaches the program's own tensors (`model.weight.requires_grad = False`).
# The attributes `del` takes (on a value the program made): torch resets `.grad` and
# refuses the others with a RuntimeError (test_attribute_deletion).
DELETABLE: tuple[str, ...] = ("grad", "data", "requires_grad", "_grad_fn", "_backward_hooks")
TENSOR_VALUED: frozenset[str] = frozenset(
    {"grad", "data", "T", "mT", "mH", "H", "_base", "weight", "bias", "values", "indices"})
# What an engine's ctx has of its own beyond the ctx table (which includes the deprecated
# `saved_variables`, read for its warning): in torch ctx is the backward node (grad_fn's
# members), with the class's `apply`. A program stores no state under these names; through
# its ctx parameter it reads only the ctx table and what it stored.
CTX_ENGINE_MEMBERS: frozenset[str] = (
    OBJECT_ATTRIBUTES["ctx"] | OBJECT_ATTRIBUTES["grad_fn"]
    | OBJECT_ATTRIBUTES["Function class"])

# Harness builtins (served by the interpreter, not by an engine), and those that are pure.
# `object()`: a plain non-tensor value (a Function's non-tensor output, as torch's tests
# return one); observed as an opaque value, it has no attribute a program may read.
# `str(x)`: a value's printed form, for what torch's tests look for in it (`"tangent=" in
# str(x)`); a tensor's full text is its engine's formatting, compared only where bound
PURE_BUILTINS: frozenset[str] = frozenset(
    {"len", "range", "float", "int", "assert_close", "object", "str", "repr", "isinstance",
     "slice"})   # slice(None), slice(a, b, c): literal ints or None only (expressions.call)
# `weakref` (only `weakref.ref`): calling a weak reference reads nothing a snapshot records,
# but the call is a value's, so a step holding one is observed in full (changes.py)
# The exception classes a program may raise (`raise RuntimeError("...")`) or derive its own
# from (`class Boom(Exception): pass`): Python's, all below Exception, so that no raise of a
# program is a BaseException that would end the run (SystemExit, KeyboardInterrupt).
EXCEPTIONS: frozenset[str] = frozenset(
    {"Exception", "RuntimeError", "ValueError", "TypeError", "IndexError", "AssertionError",
     "NotImplementedError", "AttributeError"})
BUILTINS: frozenset[str] = PURE_BUILTINS | EXCEPTIONS | {"raises", "warns", "no_warnings",
                                                         "weakref"}
# The exception classes `raises(kind, type="Name")` may require the error to be (the class or
# one of its bases has that name): Python's above, and torch's public
# torch.autograd.gradcheck.GradcheckError, which the case language cannot import (the path
# `torch.autograd.gradcheck` names the function, the module being shadowed by it).
RAISED_TYPES: frozenset[str] = EXCEPTIONS | {"GradcheckError"}
# Bound on `for _ in range(n)`: keeps every case program's run time small and finite.
MAX_RANGE = 64


def nearest(name: str, choices: frozenset[str] | set[str], n: int = 3) -> list[str]:
    """Up to `n` supported names closest to `name`, for error messages."""
    return difflib.get_close_matches(name, sorted(choices), n=n, cutoff=0.5)
