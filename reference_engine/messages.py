"""Every error and warning text the engine emits, worded as torch 2.13 words them.

Kept in one place so that a reader can audit wording against torch without
hunting through the engine, and so the engine never improvises a message.
Texts marked "cuda" could not be observed here (no GPU build); they are
copied out of torch's sources.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# --- requires_grad / leaves -------------------------------------------------
ONLY_FLOAT_REQUIRE_GRAD = "Only Tensors of floating point and complex dtype can require gradients"
# The attribute setter and requires_grad_() word the same rule differently in torch.
ONLY_FLOAT_REQUIRE_GRAD_SETTER = (
    "only Tensors of floating point and complex dtype can require gradients"
)
ONLY_FLOAT_REQUIRE_GRAD_METHOD = "only Tensors of floating point dtype can require gradients"
NON_LEAF_REQUIRES_GRAD_FALSE = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
)
NON_LEAF_REQUIRES_GRAD_TRUE = "you can only change requires_grad flags of leaf variables."
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)

# --- inference mode ---------------------------------------------------------
INFERENCE_SAVED_FOR_BACKWARD = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)
# torch's text really has no spaces after the first two full stops.
INFERENCE_INPLACE_OUTSIDE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)
INFERENCE_REQUIRES_GRAD_OUTSIDE = (
    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
)
INFERENCE_NO_VERSION = "Inference tensors do not track version counter."
BACKWARD_EMPTY_INPUTS = "`inputs` argument to `backward()` cannot be empty."
GRAD_EMPTY_INPUTS = "`inputs` argument to `grad()` cannot be empty."

# --- .grad ------------------------------------------------------------------
NON_LEAF_GRAD_ACCESS = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information."
)
RETAIN_GRAD_NO_GRAD = "can't retain_grad on Tensor that has requires_grad=False"
HOOK_NO_GRAD = "cannot register a hook on a tensor that doesn't require gradient"
CREATE_GRAPH_BACKWARD_CYCLE = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak."
)


def grad_not_tensor(type_name: str) -> str:
    return f"assigned grad expected to be a Tensor or None but got grad of type {type_name}"


def grad_wrong_size(grad_sizes: str, sizes: str) -> str:
    return (
        f"attempting to assign a gradient of size '{grad_sizes}' to a tensor of size '{sizes}'. "
        "Please ensure that the gradient and the tensor are the same size"
    )


def grad_wrong_dtype(grad_cpp_name: str, scalar_name: str) -> str:
    return (
        f"attempting to assign a gradient with dtype '{grad_cpp_name}' to a tensor with "
        f"grad_dtype '{scalar_name}'. The gradient must match the tensor's grad_dtype (defaults "
        "to the tensor's dtype). You can set the tensor's grad_dtype attribute with a specific "
        "dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of "
        "a tensor and its gradient may break downstream systems that assume they match."
    )


def grad_wrong_device(grad_device: str, device: str) -> str:
    # cuda: copied from torch/csrc/autograd/python_variable.cpp (not observable on a CPU build).
    return (
        f"attempting to assign a gradient located on device with type '{grad_device}' to a tensor "
        f"located on device with type '{device}'. Please ensure that the gradient and the tensor "
        "are on the same device"
    )


def data_not_tensor(type_name: str) -> str:
    return f"Variable data has to be a tensor, but got {type_name}"


def argument_not_tensor(function: str, type_name: str) -> str:
    """The Python arg parser's words for a non-Tensor where a Tensor `input` is expected."""
    return argument_must_be_tensor(function, "input", 1, type_name)


def argument_must_be_tensor(function: str, param: str, position: int, type_name: str) -> str:
    """... and for any Tensor parameter (positions as in the function form)."""
    return f"{function}(): argument '{param}' (position {position}) must be Tensor, not " \
        f"{type_name}"


# --- backward / autograd.grad ------------------------------------------------
IMPLICIT_GRAD_NON_SCALAR = "grad can be implicitly created only for scalar outputs"
MATERIALIZE_WITHOUT_ALLOW_UNUSED = (
    "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
    "allow_unused=False."
)
DIFFERENTIATED_NO_GRAD = "One of the differentiated Tensors does not require grad"
GRAD_OUTPUT_NOT_TENSOR = "Expected output to be a torch.Tensor"  # an AssertionError


# torch/autograd/function.py _SingleLevelFunction.forward (a NotImplementedError)
CUSTOM_FUNCTION_NO_FORWARD = "You must implement the forward function for custom autograd.Function."
CUSTOM_FUNCTION_NO_BACKWARD = ("You must implement either the backward or vjp method for your "
                               "custom autograd.Function to use it with backward mode AD.")
# torch/autograd/function.py BackwardCFunction.apply
CUSTOM_FUNCTION_BACKWARD_AND_VJP = ("Implementing both 'backward' and 'vjp' for a custom "
                                    "Function is not allowed. You should only implement one "
                                    "of them.")
# torch/csrc/autograd/python_variable.cpp THPVariable_get_volatile
VOLATILE_REMOVED = "volatile was removed (Variable.volatile is always False)"


# torch/autograd/graph.py get_gradient_edge; torch/autograd/__init__.py grad
GRADIENT_EDGE_NO_GRAD = ("It is not possible to get the gradient edge for a Tensor that does "
                         "not require gradients")
MATERIALIZE_GRADIENT_EDGE = ("materialize_grads cannot be used when the given input is a "
                             "GradientEdge")
# torch/csrc/autograd/init.cpp _increment_version (torch.autograd.graph.increment_version)
INCREMENT_VERSION_NOT_ITERABLE = "increment_version expect a Iterable[Tensor] as input"
# torch/autograd/graph.py allow_mutation_on_saved_tensors (torch's two literals join
# without a space)
ALLOW_MUTATION_NESTED = "allow_mutation_on_saved_tensors contexts cannot be nested"
ALLOW_MUTATION_OUTSIDE_CONTEXT = ("Trying to backward outside of the "
                                  "'allow_mutation_on_saved_tensors' context"
                                  "in which the graph was originally recorded.")


def grad_input_not_tensor(type_name: str) -> str:
    return f"all inputs have to be Tensors or GradientEdges, but got {type_name}"


def grad_shape_mismatch(i: int, grad_shape: str, out_shape: str) -> str:
    return (
        f"Mismatch in shape: grad_output[{i}] has a shape of {grad_shape} and output[{i}] has a "
        f"shape of {out_shape}."
    )


def batched_grad_shape_mismatch(i: int, grad_shape: str, out_shape: str) -> str:
    # torch/autograd/__init__.py _make_grads (is_grads_batched=True)
    return (
        "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
        "the batch dimension. The sizes of the remaining dimensions are expected to match the "
        f"shape of corresponding output, but a mismatch was detected: grad_output[{i}] has a "
        f"shape of {grad_shape} and output[{i}] has a shape of {out_shape}. If you only want "
        "some tensors in `grad_output` to be considered batched, consider using vmap.")


def no_grad_fn(i: int) -> str:
    return f"element {i} of tensors does not require grad and does not have a grad_fn"


def unused_input(i: int) -> str:
    return (
        f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
        "Set allow_unused=True if this is the desired behavior."
    )


def invalid_gradient_shape(node: str, i: int, got: str, expected: str) -> str:
    return (
        f"Function {node} returned an invalid gradient at index {i} - got {got} but expected "
        f"shape compatible with {expected}"
    )


def wrong_grad_count(node: str, expected: int, got: int) -> str:
    return (
        f"function {node} returned an incorrect number of gradients (expected {expected}, "
        f"got {got})"
    )


def grad_for_non_tensor(node: str, i: int) -> str:
    return (
        f"function {node} returned a gradient different than None at position {i + 1}, but the "
        "corresponding forward input was not a Variable"
    )


# --- saved tensors -----------------------------------------------------------
BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)


# saved_variable.cpp / python_saved_variable_hooks.cpp: saved-tensor hooks
SAVED_HOOKS_ALREADY_SET = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one "
    "pair of hooks is allowed at a time."
)
SAVED_HOOKS_AFTER_FREE = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need "
    "to access saved variables after calling backward."
)
SAVED_HOOKS_ON_NONE = "Calling register_hooks on a saved tensor with value None is forbidden"
PACK_HOOK_INPLACE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the "
    "input to a pack hook."
)


def unpack_hook_not_tensor(type_name: str) -> str:
    return ("Output of saved tensor unpack_hook expected to be a Tensor but got result of "
            f"type {type_name}")


# pybind11 (pybind11.h dispatcher) refusing SavedTensor.register_hooks' arguments: the
# signature, then the call's arguments by repr (self first) and keyword arguments
def register_hooks_incompatible(saved: object, args: tuple[object, ...],
                                kwargs: dict[str, object]) -> str:
    invoked = ", ".join(repr(a) for a in (saved, *args))
    if kwargs:
        invoked += "; kwargs: " + ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return ("register_hooks(): incompatible function arguments. The following argument types "
            "are supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: "
            "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\n"
            f"Invoked with: {invoked}")


def modified_by_inplace(type_and_sizes: str, producer: str | None, current: int,
                        expected: int, anomaly: bool = False) -> str:
    """producer is 'output N of Name', absent for leaves (torch omits the clause). The hint
    depends on anomaly mode (saved_variable.cpp): on, the warning above holds the trace."""
    which = f", which is {producer}," if producer else ""
    hint = ("Hint: the backtrace further above shows the operation that failed to compute its "
            "gradient. The variable in question was changed in there or anywhere later. Good "
            "luck!") if anomaly else (
            "Hint: enable anomaly detection to find the operation that failed to compute its "
            "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{type_and_sizes}]{which} is at version {current}; expected version "
        f"{expected} instead. {hint}"
    )


# --- shapes, dtypes, devices -------------------------------------------------
def broadcast_mismatch(a: int, b: int, dim: int) -> str:
    return (
        f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton "
        f"dimension {dim}"
    )


def mm_shapes(a: str, b: str) -> str:
    return f"mat1 and mat2 shapes cannot be multiplied ({a} and {b})"


# Operands of the wrong rank: each kernel checks ranks before shapes, in its own words.
def mm_not_matrix(operand: str) -> str:  # self or mat2
    return f"{operand} must be a matrix"


def addmm_not_matrix(operand: str, ndim: int) -> str:  # mat1 or mat2
    return f"{operand} must be a matrix, got {ndim}-D tensor"


def mv_ranks(mat_ndim: int, vec_ndim: int) -> str:  # mv is addmv with a 1-D bias
    return f"vector + matrix @ vector expected, got 1, {mat_ndim}, {vec_ndim}"


def mv_sizes(rows: int, mat: str, vec: int) -> str:
    return f"size mismatch, got input ({rows}), mat ({mat}), vec ({vec})"


# Matrix products do not promote dtypes; each kernel words the refusal its own way.
def mm_dtypes(a: str, b: str) -> str:  # cpp names: float, double
    return f"expected m1 and m2 to have the same dtype, but got: {a} != {b}"


def addmm_dtypes(first: str, a: str, b: str) -> str:  # first: self or mat1; scalar names
    return f"{first} and mat2 must have the same dtype, but got {a} and {b}"


def mv_dtypes(mat: str, vec: str) -> str:  # scalar names: Float, Double
    return addmv_dtypes(vec, mat, vec)   # mv is addmv with vec as its bias


def bmm_dtypes(a: str, b: str) -> str:
    return f"expected scalar type {a} but found {b}"


def dot_sizes(n: int, m: int) -> str:
    return (
        f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number "
        f"of elements, but got {n} and {m} elements respectively"
    )


def dot_dtypes(a: str, b: str) -> str:
    return f"dot : expected both vectors to have same dtype, but found {a} and {b}"


def invalid_shape(shape: str, numel: int) -> str:
    return f"shape '{shape}' is invalid for input of size {numel}"


VIEW_NOT_COMPATIBLE = (
    "view size is not compatible with input tensor's size and stride (at least one dimension "
    "spans across two contiguous subspaces). Use .reshape(...) instead."
)


def dim_out_of_range(low: int, high: int, got: int) -> str:
    return f"Dimension out of range (expected to be in range of [{low}, {high}], but got {got})"


def index_out_of_range(index: int, dim: int, size: int) -> str:
    return f"index {index} is out of bounds for dimension {dim} with size {size}"


def select_out_of_range(index: int, shape: tuple[int, ...], dim: int) -> str:
    """TensorShape.cpp select_symint (torch.select, Tensor.select): the dim wrapped."""
    return (f"select(): index {index} out of range for tensor of size "
            f"[{', '.join(str(s) for s in shape)}] at dimension {dim}")


# TensorAdvancedIndexing.cpp (index_select_out_cpu_): the index checks of its paths; a 1-d or
# 0-d self's and the general path's (TORCH_CHECK_INDEX, an IndexError), the dim-1 fast path's
# and an empty self's (TORCH_CHECK, a RuntimeError)
INDEX_SELECT_OUT_OF_RANGE = "index out of range in self"
INDEX_SELECT_EMPTY_AXIS = "index_select(): self indexing axis dim should be positive"


def index_select_out_of_data_bounds(index: int, size: int) -> str:
    return f"INDICES element is out of DATA bounds, id={index} axis_dim={size}"


# python_variable_indexing.cpp / TensorIndexing.h: a lone int or slice on a 0-dim tensor, and
# more indexed dims than the tensor has
INDEX_OF_0_DIM = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                  "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
SLICE_OF_0_DIM = "slice() cannot be applied to a 0-dim tensor."


def too_many_indices(ndim: int) -> str:
    return f"too many indices for tensor of dimension {ndim}"


def item_numel(n: int) -> str:
    return f"a Tensor with {n} elements cannot be converted to Scalar"


def cat_sizes(dim: int, expected: int, got: int, i: int) -> str:
    return (
        f"Sizes of tensors must match except in dimension {dim}. Expected size {expected} but "
        f"got size {got} for tensor number {i} in the list."
    )


def mean_dtype(scalar_name: str) -> str:
    return (
        "mean(): could not infer output dtype. Input dtype must be either a floating point or "
        f"complex dtype. Got: {scalar_name}"
    )


def t_dims(n: int) -> str:
    return f"t() expects a tensor with <= 2 dimensions, but self is {n}D"


def expand_size(new: int, old: int, dim: int, target: str, sizes: str) -> str:
    return (
        f"The expanded size of the tensor ({new}) must match the existing size ({old}) at "
        f"non-singleton dimension {dim}.  Target sizes: {target}.  Tensor sizes: {sizes}"
    )


def cannot_cast(result: str, out: str) -> str:
    return f"result type {result} can't be cast to the desired output type {out}"


def devices_differ(a: str, b: str) -> str:
    # cuda: copied from ATen's TensorIterator (not observable on a CPU build).
    return ("Expected all tensors to be on the same device, but found at least two devices, "
            f"{a} and {b}!")


# TORCH_WARN_ONCE (reference_engine/warn.py): aten/src/ATen/native/TensorShape.cpp numpy_T
NUMPY_T_NOT_MATRIX = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
    "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
    "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
    "tensor."
)
NUMPY_T_0D = "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases."
# TORCH_WARN_ONCE: python_variable_methods.cpp maybe_warn_requires_grad (float(), complex(),
# and so each element torch.tensor([...]) converts from a tensor)
REQUIRES_GRAD_TO_SCALAR = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
    "Consider using tensor.detach() first."
)
def target_size_differs(target: object, input: object) -> str:
    """torch/nn/functional.py mse_loss (a Python warning)."""
    return (f"Using a target size ({target}) that is different to the input size ({input}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure "
            "they have the same size.")


COPY_CONSTRUCT_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor)."
)


# --- hooks and custom Functions (graph.py, function.py, inplace.py) -----------
def hook_result_type(expected: str, got: str) -> str:
    # torch/csrc/autograd/python_hook.cpp: node hooks must return a tuple, tensor hooks a
    # tensor ("Variable").
    return f"expected {expected}, but hook returned '{got}'"


def hook_result_count(name: str, got: int, expected: int) -> str:
    return (f"hook '{name}' has returned an incorrect number of values (got {got}, but "
            f"expected {expected})")


# torch/csrc/autograd/python_cpp_function.cpp THPCppFunction_call: calling a grad_fn
def node_call_arity(expected: int, got: int) -> str:
    return f"expected {expected} arguments, got {got} instead"


def node_call_not_variable(i: int) -> str:
    return f"argument {i} is not a Variable"


def not_callable(type_name: str) -> str:
    return f"'{type_name}' object is not callable"   # Python's own, for a custom node


HOOK_REPLACED_NONE = "can't replace a None gradient with a non-None value"


def hook_changed_size(name: str) -> str:
    return f"hook '{name}' has changed the size of value"


def hook_changed_type(name: str, was: str, got: str) -> str:
    return f"hook '{name}' has changed the type of value (was {was} got {got})"


# torch/csrc/autograd/saved_variable.cpp SavedVariable::unpack (two strings, no space)
SAVED_TENSOR_DETACHED = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
    "This is not supported, please use out-of-place `.detach()` instead")
POST_ACCUMULATE_HOOK_RETURNED = "Tensor post accumulate grad hooks should return None."
# torch/csrc/autograd/VariableTypeManual.cpp detach_
DETACH_VIEW_INPLACE = (
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
    "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
    "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution.")
# torch/csrc/autograd/variable.cpp VariableHooks::set_data
DATA_NOT_FLOAT = ("data set to a tensor that requires gradients must be floating point or "
                  "complex dtype")
POST_ACCUMULATE_NON_LEAF = "post accumulate grad hooks cannot be registered on non-leaf tensors"
MARK_DIRTY_LEAF = "a leaf Variable that requires grad has been used in an in-place operation."
ONCE_DIFFERENTIABLE = (
    "trying to differentiate twice a function that was marked with @once_differentiable"
)
# torch/csrc/autograd/variable.cpp handle_view_on_rebase: a header, then one reason per
# CreationMeta.
def view_inplace_header(output_nr: int, fn_name: str | None, no_grad: bool,
                        indirect: bool, inference: bool = False) -> str:
    modified = "its base or another view of its base has been" if indirect else "is being"
    if no_grad:
        prefix = (f"Output {output_nr} of {fn_name} is a view of a view which was created in"
                  if fn_name else "A view was created in")
        if inference:
            return f"{prefix} inference mode and {modified} modified inplace in normal mode."
        return f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    return f"Output {output_nr} of {fn_name} is a view and {modified} modified inplace."


VIEW_INPLACE_REASON = {
    "MULTI_OUTPUT_NODE": (
        " This view is the output of a function that returns multiple views. Such functions do "
        "not allow the output views to be modified inplace. You should replace the inplace "
        "operation by an out-of-place one."
    ),
    "NO_GRAD_MODE": (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
        "want the inplace to be tracked)."
    ),
    "IN_CUSTOM_FUNCTION": (
        " This view was created inside a custom Function (or because an input was returned "
        "as-is) and the autograd logic to handle view+inplace would override the custom "
        "backward associated with the custom Function, leading to incorrect gradients. This "
        "behavior is forbidden. You can fix this by cloning the output of the custom Function."
    ),
    "INFERENCE_MODE": (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "inference_mode block (if you don't want the inplace to be tracked) or both outside (if "
        "you want the inplace to be tracked)."
    ),
}
# torch/csrc/autograd/custom_function.cpp (_process_backward_mode_ad)
MARK_DIRTY_VIEW_MULTIPLE_OUTPUTS = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
    "cannot return more than one Tensor. This is not supported by the current autograd engine. "
    "You should either make sure the input is not a view (using .clone() for example) or make "
    "your Function only return one Tensor (potentially splitting it into two Functions: one "
    "doing the inplace that returns a single Tensor and a second one that does the other "
    "operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do "
    "this change.")
MARK_DIRTY_NOT_RETURNED = (
    "Some elements marked as dirty during the forward method were not returned as output. The "
    "inputs that are modified inplace must all be outputs of the Function.")
# custom_function.cpp: a warning for a tensor, an error for a view (its rebase would be wrong).
MARK_DIRTY_NOT_INPUT = (
    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have "
    "been mutated should be passed to ctx.mark_dirty().")


def grad_not_variable(type_name: str) -> str:
    return f"expected Variable or None (got {type_name})"

INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.")
# MemoryOverlap.cpp assert_no_partial_overlap: an input that shares some, not all, of the
# output's memory
PARTIAL_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation.")


# --- dtypes, devices, shapes --------------------------------------------------
# torch/csrc/autograd/python_variable_indexing.cpp / python_variable_methods.cpp THPVariable_index
INDEX_NOT_INTEGER = "only integer tensors of a single element can be converted to an index"


def cartesian_prod_not_1d(shape: str) -> str:
    return f"Expect a 1D vector, but got shape {shape}"  # Itertools.cpp cartesian_prod


def sizes(shape: Sequence[int]) -> str:
    """A shape as torch's messages print sizes: `[2, 3]`."""
    return "[" + ", ".join(str(s) for s in shape) + "]"


def unsupported_numpy_dtype(np_dtype: object) -> str:
    return f"unsupported numpy dtype {np_dtype}"


def bad_device_string(spec: object) -> str:
    return f"Expected one of cpu, cuda device type at start of device string: {spec}"


def matmul_0d(da: int, db: int) -> str:
    return f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"


LEN_OF_0D = "len() of a 0-d tensor"


def narrow_out_of_range(start: int, length: int, size: int) -> str:
    return f"start ({start}) + length ({length}) exceeds dimension size ({size})."


def split_sizes_wrong_sum(n: int, dim: int, sizes: list[int]) -> str:
    return (f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
            f"size at dimension {dim}), but got split_sizes={sizes}")


# ATen's split, split_with_sizes, chunk and their unsafe_ forms (TensorShape.cpp): checked
# before the dim is wrapped, chunk's then split's
SPLIT_0D = "split expects at least a 1-dimensional tensor"
CHUNK_0D = "chunk expects at least a 1-dimensional tensor"


def chunk_count(chunks: int) -> str:
    return f"chunk expects `chunks` to be greater than 0, got: {chunks}"


def split_size_negative(split_size: int) -> str:
    return f"split expects split_size be non-negative, but got split_size={split_size}"


def split_size_zero(dim_size: int) -> str:
    return ("split_size can only be 0 if dimension size is 0, but got dimension size of "
            f"{dim_size}")


def split_sizes_negative(sizes: list[int]) -> str:
    return ("split_with_sizes expects split_sizes have only non-negative entries, but got "
            f"split_sizes={sizes}")


# ATen's advanced indexing (TensorAdvancedIndexing.cpp, IndexKernel, TensorIterator)
def index_out_of_bounds(index: int, k: int, size: int) -> str:
    return f"index {index} is out of bounds for dimension {k} with size {size}"


def mask_shape_mismatch(mask: str, j: int, shape: str, dim: int) -> str:
    return (f"The shape of the mask {mask} at index {j} does not match the shape of the "
            f"indexed tensor {shape} at index {dim}")


def index_shapes_mismatch(shapes: str) -> str:
    return f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}"


def index_put_shape_mismatch(value: str, result: str) -> str:
    return (f"shape mismatch: value tensor of shape {value} cannot be broadcast to indexing "
            f"result of shape {result}")


# python_variable_indexing.cpp treatSequenceAsTuple, on every such index
NON_TUPLE_SEQUENCE_INDEX = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
    "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error or "
    "a different result")


# --- the engine's final callbacks (Engine::queue_callback) ----------------------------
QUEUE_CALLBACK_OUTSIDE_BACKWARD = "Final callbacks can only be installed during backward pass."
WILL_EXECUTE_OUTSIDE_BACKWARD = (
    "_get_should_execute_nodes should only be called during the backward pass"
)


# --- torch.autograd.graph.register_multi_grad_hook ----------------------------------------
def multi_grad_mode(modes: tuple[str, ...], mode: object) -> str:
    return f"Expects mode to be one of {modes} but got {mode}"


# --- var / var_mean (ops/moments.py): aten/src/ATen/native/ReduceOps.cpp ------------
VAR_DTYPE = "std and var only support floating point and complex dtypes"


def var_dof_warning(op: str) -> str:
    return (f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "reduction factor (input numel divided by output numel).")


# --- ctx.saved_variables (function.py): python_function.cpp -------------------------------
SAVED_VARIABLES_DEPRECATED = "'saved_variables' is deprecated; use 'saved_tensors'"


# --- out= overloads (ops/out_overloads.py): VariableTypeUtils.h throw_error_out_requires_grad
def out_requires_grad(op: str) -> str:
    return (f"{op}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad.")


# --- not modelled (the engine's own limits, no torch wording) ------------------
OUT_RESIZE_NOT_MODELLED = "an out= tensor of another shape (which torch resizes) is not modelled"


# --- .grad assignment (python_variable.cpp THPVariable_set_grad) ----------------
GRAD_IS_SELF = "can't assign Variable as its own grad"


def trace_not_matrix(ndim: int) -> str:
    return f"trace: expected a matrix, but got tensor with dim {ndim}"


# --- anomaly mode (anomaly_mode.py): torch/autograd/anomaly_mode.py, engine.cpp
# evaluate_function, python_anomaly_mode.cpp _print_stack ------------------------------
ANOMALY_ENABLED = ("Anomaly Detection has been enabled. This mode will increase the runtime "
                   "and should only be enabled for debugging.")


def anomaly_nan(node: str, i: int) -> str:
    return f"Function '{node}' returned nan values in its {i}th output."


def anomaly_no_forward_info(node: str) -> str:
    return (f"Error detected in {node}. No forward pass information available. Enable detect "
            "anomaly during forward pass for more information.")


def anomaly_forward_trace(node: str, stack: str) -> str:
    return f"Error detected in {node}. Traceback of forward call that caused the error:\n{stack}"


def anomaly_parent_trace(node: str, stack: str) -> str:
    return (f"\n\nPrevious calculation was induced by {node}. Traceback of forward call that "
            f"induced the previous calculation:\n{stack}")


# --- gradcheck (gradcheck.py): torch/autograd/gradcheck.py ------------------------------
def gradcheck_not_double(idx: int) -> str:
    return (f"Input #{idx} requires gradient and is not a double precision floating point or "
            "complex. This check will likely fail if all the inputs are not of double "
            "precision floating point or complex. ")


def gradcheck_stride_zero(idx: int) -> str:
    return (f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs "
            "that are non-overlapping to be able to compute the numerical gradients "
            "correctly. You should call .contiguous on the input before passing it to "
            "gradcheck.")


GRADCHECK_NO_INPUT_REQUIRES_GRAD = (
    "gradcheck expects at least one input tensor to require gradient, but none of them have "
    "requires_grad=True.")
GRADCHECK_NONZERO_NUMERICAL = "Numerical gradient for function expected to be zero"
GRADCHECK_DTYPE_MISMATCH = "Gradient has dtype mismatch"
GRADCHECK_WRONG_SIZE = "Analytical gradient has incorrect size"
GRADCHECK_NOT_MULTIPLIED = "backward not multiplied by grad_output"
GRADCHECK_INCORRECT_TYPE = "grad is incorrect type"
GRADCHECK_INCORRECT_SIZE = "grad is incorrect size"
GRADCHECK_UNDEFINED_BC = (
    "Backwards compatibility: New undefined gradient support checking feature is enabled by "
    "default, but it may break existing callers of this function. If this is true for you, "
    'you can call this function with "check_undefined_grad=False" to disable the feature')
GRADCHECK_UNDEFINED_FAILED = (
    "Expected backward function to handle undefined output grads. Please look at \"Notes "
    "about undefined output gradients\" in \"tools/autograd/derivatives.yaml\"")
GRADCHECK_UNDEFINED_NONZERO = (
    "Expected all input grads to be undefined or zero when all output grads are undefined or "
    "zero. Please look at \"Notes about undefined output gradients\" in "
    "\"tools/autograd/derivatives.yaml\"")
GRADCHECK_NEEDS_A_MODE = (
    "Expected at least one of check_forward_ad or check_backward_ad to be True")
GRADCHECK_BATCHED_NEEDS_BACKWARD = (
    "Setting check_batched_grad=True requires check_backward_ad to be True")
GRADGRADCHECK_NEEDS_A_MODE = (
    "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


def gradcheck_not_reentrant(nondet_tol: float) -> str:
    return ("Backward is not reentrant, i.e., running backward with same input and "
            "grad_output multiple times gives different values, although analytical gradient "
            f"matches numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
            + FAILED_NONDET_MSG)


def gradcheck_jacobian_mismatch(output: int, input: int, numerical: str, analytical: str
                                ) -> str:
    return (f"Jacobian mismatch for output {output:d} with respect to input {input:d},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")


# not modelled (the engine's own limit, no torch wording)
GRADCHECK_NOT_MODELLED = ("gradcheck's fast_mode, forward-mode, batched and masked checks are "
                          "not modelled by the reference engine")


# --- activation checkpointing (utils/checkpoint.py): torch/utils/checkpoint.py ------------
CHECKPOINT_USE_REENTRANT_NOT_PASSED = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
    "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
    "exception. use_reentrant=False is recommended, but if you need to preserve the current "
    "default behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")
CHECKPOINT_SEQUENTIAL_USE_REENTRANT_NOT_PASSED = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
    "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
    "passed. use_reentrant=False is recommended, but if you need to preserve the current "
    "default behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")
CHECKPOINT_NO_INPUT_REQUIRES_GRAD = (
    "None of the inputs have requires_grad=True. Gradients will be None")
CHECKPOINT_REENTRANT_GRAD = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing "
    "an `inputs` parameter to .backward(). To resolve this error, you can either set "
    "use_reentrant=False, or call .backward() without passing the `inputs` argument.")
CHECKPOINT_NO_OUTPUT_REQUIRES_GRAD = (
    "none of output has requires_grad=True, this checkpoint() is not necessary")
CHECKPOINT_CONTEXT_FN_REENTRANT = (
    "Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
CHECKPOINT_UNPACK_TWICE = (
    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked "
    "once. If you are calling ctx.saved_tensors in backward, make sure to do so only once. "
    "Otherwise please open an issue with details on your use case.")
_CHECKPOINT_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint‑debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""
CHECKPOINT_MORE_SAVED = (
    "torch.utils.checkpoint: trying to save more tensors during recomputation than during "
    "the original forward pass.\n" + _CHECKPOINT_DEBUG_TIP)


def checkpoint_count_mismatch(forward: int, recomputed: int) -> str:
    return ("torch.utils.checkpoint: A different number of tensors was saved during the "
            "original forward and recomputation.\n"
            f"Number of tensors saved during forward: {forward}\n"
            f"Number of tensors saved during recomputation: {recomputed}.\n"
            + _CHECKPOINT_DEBUG_TIP)




# --- torch.tensor of a list holding tensors (factories.py): python_variable_methods.cpp item
ONE_ELEMENT_TENSORS_ONLY = "only one element tensors can be converted to Python scalars"
# --- forward-mode AD (torch/autograd/forward_ad.py, autograd_meta.cpp, VariableTypeUtils.h) ---
FWAD_NO_LEVEL = ("Trying to create a dual Tensor for forward AD but no level exists, make sure "
                 "to enter_dual_level() first.")
FWAD_NESTED_LEVEL = "Nested forward mode AD is not supported at the moment"
FWAD_EXIT_NOT_LAST = ("Trying to exit a forward AD level that was not the last one that was "
                      "created. This is not supported.")
# exit_dual_level() with no level entered: the level is -1
FWAD_LEVEL_NEGATIVE = "Dual level must be a positive number."
FWAD_INVALID_LEVEL = "Invalid level given to _make_dual"
# aten/src/ATen/LegacyBatchedFallback.cpp batchedTensorForLoopFallback, for a view op (torch's
# repr of a dual tensor inside jacobian(strategy="forward-mode", vectorize=True)'s vmap)
VMAP_UNPACK_DUAL = ("Batching rule not implemented for aten::_unpack_dual; the fallback path "
                    "doesn't work on out= or view ops.")
# ... for an op that returns no tensor (item, is_nonzero: a tangent's `.item()`, `bool()`)
def vmap_no_fallback(op: str) -> str:
    return f"Batching rule not implemented for aten::{op}. We could not generate a fallback."


# c10/core/TensorImpl.h data(): the batched tangent's tolist() (a BatchedTensorImpl has no
# storage)
NO_STORAGE_DATA_POINTER = "Cannot access data pointer of Tensor that doesn't have storage"
# ... numpy() of a batched tensor, which detaches it first (tensor_numpy.cpp)
VMAP_DETACH = ("Batching rule not implemented for aten::detach; the fallback path doesn't "
               "work on out= or view ops.")
FWAD_CUSTOM_FUNCTION_NO_JVP = ("You must implement the jvp function for custom "
                               "autograd.Function to use it with forward mode AD.")


def fwad_not_floating(what: str, dt: object) -> str:
    return f"Expected {what} to be floating point or complex, but got: {dt}"


def fwad_already_dual(level: int) -> str:
    return ("Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            f"same level {level} is not supported.")


def fwad_tangent_is_dual(level: int) -> str:
    # torch's text has no space before the level
    return ("Setting a forward grad that itself has a forward gradient at the same "
            f"level{level} is not supported.")


def fwad_size_mismatch(size: Sequence[int], given: Sequence[int]) -> str:
    return ("Trying to set a forward gradient that has a different size than that of the "
            "original Tensor, this is not supported. Tensor is of size "
            f"{list(size)} while the given forward gradient is of size {list(given)}.")


def fwad_jvp_count(expected: int, got: int) -> str:
    return (f"Function's jvp returned an invalid number of forward gradients (expected {expected} "
            f"but got {got})")


def fwad_jvp_non_differentiable(position: int) -> str:
    # torch's text has two spaces after "but" and none after the first full stop
    return (f"Function's jvp returned a gradient at position {position}, but  the corresponding "
            "forward output is not a differentiable Tensor.You should return None at that "
            "position instead.")


FWAD_JVP_NOT_INPLACE = (
    "An inplace custom Function is not modifying the forward mode gradients inplace. If the "
    "forward is modifying an input inplace, then the jvp function must modify the "
    "corresponding gradient inplace.")
FWAD_JVP_NOT_A_VIEW = ("A custom Function's forward is returning a view (or an input as-is) "
                       "but the jvp is not returning a view.")
FWAD_JVP_NOT_A_VIEW_OF_INPUT = ("A custom Function is returning a view but the jvp is not "
                                "returning a view of the given grad input.")
FWAD_JVP_NOT_A_VIEW_OF_BASE = ("A custom Function is returning a view but the jvp is not "
                               "returning a view of the same base as the given grad input.")


def fwad_out_function(name: str) -> str:
    return (f"Trying to use forward AD with {name}_out that does not support it because it is "
            "an out= function")


def fwad_not_implemented(name: str) -> str:
    # (torch 2.13 and 2.14, gen_variable_type's TORCH_CHECK_NOT_IMPLEMENTED: found when
    # test_not_implemented_fwad's case first compared an op's text)
    return (f"Trying to use forward AD with {name} that does not support it because it has not "
            "been implemented yet.\nPlease file an issue to PyTorch at "
            "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that "
            "we can prioritize its implementation or submit a PR adding the implementation to "
            "derivatives.yaml")
# --- torch.autograd.functional (autograd_functional.py): torch/autograd/functional.py --------
def functional_not_tensor(arg_name: str, fn_name: str, index: int | None, type_repr: str) -> str:
    """_as_tuple: `index` is None when the argument was not a tuple."""
    where = (f"the given {arg_name}" if index is None else f"the value at index {index}")
    return (f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
            f"but {where} has type {type_repr}.")


def functional_v_tuple_length(expected: int, got: int) -> str:
    return f"v is a tuple of invalid length: should be {expected} but got {got}."


FUNCTIONAL_V_SINGLE = "The given v should contain a single Tensor."


def functional_v_size(index: int | None, expected: str, got: str) -> str:
    prepend = "" if index is None else f"Entry {index} in "
    return f"{prepend}v has invalid size: should be {expected} but got {got}."


FUNCTIONAL_V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function "
                            "returns a single Tensor with a single element.")
FUNCTIONAL_V_NONE_INPUT_JVP = ("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single element.")
# vhp and hvp word it like jvp; torch writes it as a separate literal in each.
FUNCTIONAL_V_NONE_INPUT = FUNCTIONAL_V_NONE_INPUT_JVP


def functional_single_tensor(fn_name: str) -> str:
    return f"The function given to {fn_name} should return a single Tensor"


def functional_single_element(fn_name: str) -> str:
    return (f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element")


# _check_requires_grad, by input_type
def strict_independent_of_input(i: int) -> str:
    return (f"The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.")


def strict_hessian_independent(i: int) -> str:
    return (f"The hessian of the user-provided function with respect to input {i} is "
            "independent of the input. This is not allowed in strict mode. You should ensure "
            "that your function is thrice differentiable and that the hessian depends on the "
            "inputs.")


def strict_jacobian_independent(i: int) -> str:
    return ("While computing the hessian, found that the jacobian of the user-provided "
            f"function with respect to input {i} is independent of the input. This is not "
            "allowed in strict mode. You should ensure that your function is twice "
            "differentiable and that the jacobian depends on the inputs (this would be "
            "violated by a linear function for example).")


def strict_grad_input_independent(i: int) -> str:
    return (f"The gradient with respect to input {i} is independent of the inputs of the "
            "user-provided function. This is not allowed in strict mode.")


def strict_output_no_grad(i: int) -> str:
    return (f"Output {i} of the user-provided function does not require gradients. The "
            "outputs must be computed in a differentiable manner from the input when running "
            "in strict mode.")


# _fill_in_zeros, by stage
def strict_back_trick(i: int) -> str:
    return (f"The gradient with respect to the input is independent of entry {i} in the "
            "grad_outputs when using the double backward trick to compute forward mode "
            "gradients. This is not allowed in strict mode.")


def strict_double_back(i: int) -> str:
    return (f"The jacobian of the user-provided function is independent of input {i}. This "
            "is not allowed in strict mode.")


def strict_double_back_trick(i: int) -> str:
    return (f"The hessian of the user-provided function is independent of entry {i} in the "
            "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
            "double backward trick to replace forward mode AD.")


def strict_create_graph_jacobian(i: int) -> str:
    return (f"The jacobian of the user-provided function is independent of input {i}. This "
            "is not allowed in strict mode when create_graph=True.")


def strict_create_graph_hessian(i: int) -> str:
    return (f"The hessian of the user-provided function is independent of input {i}. This "
            "is not allowed in strict mode when create_graph=True.")


def strict_output_independent_of_input(i: int, j: int) -> str:
    """jacobian's loop (not vectorized)."""
    return (f"Output {i} of the user-provided function is independent of input {j}. This is "
            "not allowed in strict mode.")


STRICT_AND_VECTORIZE = (
    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
    "supported together. Please either set `strict=False` or `vectorize=False`.")
FORWARD_MODE_CREATE_GRAPH = (
    "torch.autograd.functional.jacobian: `create_graph=True` and `strategy=\"forward-mode\"` "
    "are not supported together (yet). Please either set `create_graph=False` or "
    "`strategy=\"reverse-mode\"`.")
# torch's literal really lacks the space between "is" and "only".
FORWARD_MODE_NOT_VECTORIZED = (
    "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
    "only implemented for `vectorize=True`.")
JACOBIAN_STRATEGY = (
    "Expected strategy to be either \"forward-mode\" or \"reverse-mode\". Hint: If your "
    "function has more outputs than inputs, \"forward-mode\" tends to be more performant. "
    "Otherwise, prefer to use \"reverse-mode\".")
HESSIAN_STRATEGY = "Expected strategy to be either \"forward-mode\" or \"reverse-mode\"."
FORWARD_MODE_STRICT = (
    "torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are not "
    "supported together (yet). Please either set `strict=False` or "
    "`strategy=\"reverse-mode\"`.")


# --- nn.functional and special (issue 24) ------------------------------------
GELU_APPROXIMATE = "approximate argument must be either none or tanh."   # GeluType.h
HARDTANH_BOUNDS = "min_val cannot be greater than max_val"   # F.hardtanh (Python)


def softshrink_lambda(max_value: float, dtype_name: str, lambd: float) -> str:
    """Activation.cpp's softshrink check, its numbers as C++ streams them (%g)."""
    return (f"lambda must be in range [0, {max_value:g}] for input dtype {dtype_name}, "
            f"but found {lambd:g}")


def inplace_not_modelled(name: str) -> str:
    """The engine's own: an nn.functional activation's inplace=True form."""
    return (f"reference engine: {name}(..., inplace=True) is not modelled (torch writes the "
            "input and saves the result); call it with inplace=False")
HUBER_DELTA = "huber_loss does not support non-positive values for delta."   # Loss.cpp


def invalid_reduction(reduction: str) -> str:
    """torch/nn/_reduction.py get_enum (a ValueError)."""
    return f"{reduction} is not a valid value for reduction"


def bce_target_size(target: object, input: object) -> str:
    """F.binary_cross_entropy (a ValueError)."""
    return (f"Using a target size ({target}) that is different to the input size ({input}) "
            "is deprecated. Please ensure they have the same size.")


def bce_logits_target_size(target: object, input: object) -> str:
    """F.binary_cross_entropy_with_logits (a ValueError)."""
    return f"Target size ({target}) must be the same as input size ({input})"


def not_differentiable_argument(function: str, argument: str) -> str:
    """VariableType's check_no_requires_grad (an argument derivatives.yaml marks
    non_differentiable)."""
    return (f"The function '{function}' is not differentiable with respect to argument "
            f"'{argument}'. This input cannot have requires_grad True.")


def xlog1py_arguments(got: str) -> str:
    """torch.special.xlog1py's argument parser, given two numbers."""
    return (f"special_xlog1py() received an invalid combination of arguments - got ({got}), "
            "but expected one of:\n"
            " * (Tensor input, Tensor other, *, Tensor out = None)\n"
            " * (Number self, Tensor other, *, Tensor out = None)\n"
            " * (Tensor input, Number other, *, Tensor out = None)\n")
GLU_SCALAR = "glu does not support scalars because halving size must be even"   # F.glu


def glu_odd(dim: int, size: int) -> str:
    """GatedLinearUnit.cpp."""
    return f"Halving dimension must be even, but dimension {dim} is size {size}"
PAD_ODD = "Padding length must be divisible by 2"   # PadNd.cpp


def pad_too_long(length: int, ndim: int) -> str:
    """PadNd.cpp."""
    return ("Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {length} and input of dimension {ndim}")


def undefined_argument(position: int, name: str) -> str:
    """ATen's checked_dense_tensor_unwrap (an op given an undefined tensor, as
    layer_norm_double_backward's add_ of a bias term it never defined without a weight)."""
    return (f"Expected a proper Tensor but got None (or an undefined Tensor in C++) for "
            f"argument #{position} '{name}'")


PAD_CIRCULAR_WRAPS = "Padding value causes wrapping around more than once."   # PadNd.cpp
PAD_CIRCULAR_EMPTY = "Negative padding value is resulting in an empty dimension"   # PadNd.cpp


# ---- products and linear algebra (issue 24) ----

def dot_not_vectors(a: int, b: int) -> str:  # dot, vdot
    return f"1D tensors expected, but got {a}D and {b}D tensors"


def addr_not_vector(name: str, ndim: int) -> str:  # vec1 or vec2
    return f"addr: Expected 1-D argument {name}, but got {ndim}-D"


def outer_not_vector(name: str, ndim: int) -> str:  # self or vec2
    return f"outer: Expected 1-D argument {name}, but got {ndim}-D"


CROSS_RANKS = "linalg.cross: inputs must have the same number of dimensions."


def cross_sizes(dim: int, a: int, b: int) -> str:
    return f"linalg.cross: inputs dimension {dim} must have length 3. Got {a} and {b}"


CROSS_NO_DIM = (
    "Using torch.cross without specifying the dim arg is deprecated.\n"
    "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
    "The default value of dim will change to agree with that of linalg.cross in a future "
    "release.")
CROSS_NO_SIZE_3 = "no dimension of size 3 in input"


def not_positive_definite(op: str, order: int) -> str:  # cholesky, linalg.cholesky
    return (f"{op}: The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {order} is not positive-definite).")


CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
    "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
    "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent "
    "results for all valid (symmetric positive definite) inputs.")


def singular_inverse(element: int) -> str:
    return (f"linalg.inv: The diagonal element {element} is zero, the inversion could not be "
            "completed because the input matrix is singular.")


def multi_dot_too_few(n: int) -> str:
    return f"multi_dot(): expected at least 2 tensors but got {n}"


# ---- elementwise math (issue 24) --------------------------------------------------------
# aten/src/ATen/native/UnaryOps.cpp
POLYGAMMA_NEGATIVE = "polygamma(n, x) does not support negative n."
MVLGAMMA_P = "p has to be greater than or equal to 1"
POSITIVE_BOOL = "The `+` operator, on a bool tensor is not supported."


def parser_mismatch(name: str, got: tuple[str, ...],
                    signatures: tuple[tuple[str, tuple[str, ...] | None], ...]) -> str:
    """torch's argument parser (python_arg_parser.cpp) when no signature matches: the types
    given, then each signature; under one that takes as many arguments as were given, the
    given types again, the mismatching ones marked `!type!` (`marked`; None: no such line)."""
    lines = []
    for text, marked in signatures:
        lines.append(f" * ({text})\n")
        if marked is not None:
            lines.append("      didn't match because some of the arguments have invalid "
                         f"types: ({', '.join(marked)})\n")
    return (f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), "
            "but expected one of:\n" + "".join(lines))


def invalid_combination(name: str, got: tuple[str, ...],
                        signatures: tuple[tuple[str, bool], ...]) -> str:
    """No signature matches and one taking exactly the arguments given marks every one of
    them invalid (as torch prints `remainder(2, 3)`'s (Number self, Tensor other))."""
    every = tuple(f"!{t}!" for t in got)
    return parser_mismatch(name, got, tuple((text, every if exact else None)
                                            for text, exact in signatures))


def div_rounding_mode(mode: object) -> str:
    """BinaryOps.cpp div_mode's check."""
    return f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{mode}'"


# aten/src/ATen/native/PointwiseOps.cpp (the double space is torch's)
ADDCDIV_INTEGER = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")
# aten/src/ATen/native/UnaryOps.cpp neg's check
NEG_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead.")
# aten/src/ATen/native/TensorFactories.cpp (empty_like's check)
CHANNELS_LAST_RANK = "required rank 4 tensor to use channels_last format"
# aten/src/ATen/native/UnaryOps.cpp frexp_out's check
FREXP_DTYPE = ("torch.frexp() only supports floating-point dtypes")


# ---- reductions, scans and sorting (issue 24) ----
# aten/src/ATen/native/TensorShape / Sorting.cpp: topk's and kthvalue's k checks
TOPK_OUT_OF_RANGE = "selected index k out of range"


def kthvalue_out_of_range(dim: int) -> str:
    return f"kthvalue(): selected number k out of range for dimension {dim}"
KTHVALUE_OUT_NOT_MODELLED = (
    "reference_engine: kthvalue(out=(values, indices)) is not modelled beyond its overlap "
    "check")
# ReduceOps.cpp / ReduceOpsUtils.h / LinearAlgebra.cpp
TOO_MANY_DIMS = "only tensors with up to 64 dims are supported"
AMINMAX_EMPTY = ("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                 "has no identity.")
AMINMAX_OUT_NOT_MODELLED = "reference_engine: aminmax(out=...) is not modelled beyond its checks"
NORM_OUT_NOT_MODELLED = "reference_engine: torch.norm(out=...) is not modelled"
NORM_MATRIX_NOT_MODELLED = ("reference_engine: torch.norm's matrix norms (linalg.matrix_norm: "
                            "'nuc', 'fro' over more than two dims) are not modelled")


def reduction_dim_empty(op: str, dim: int) -> str:
    """zero_numel_check_dims: an IndexError."""
    return f"{op}: Expected reduction dim {dim} to have non-zero size."


def reduction_dim_unspecified(op: str) -> str:
    return (f"{op}: Expected reduction dim to be specified for input.numel() == 0. Specify "
            "the reduction dim with the 'dim' argument.")


def arg_extreme_of_empty(op: str) -> str:
    """ReduceOps.cpp argmax/argmin_out without a dim: an IndexError (TORCH_CHECK_INDEX)."""
    return f"{op}: Expected reduction dim to be specified for input.numel() == 0."


def dim_repeated(dim: int) -> str:
    return f"dim {dim} appears multiple times in the list of dims"


def out_dtype(expected: str, got: str) -> str:
    """aminmax's out= check (resize_output's dtype check)."""
    return f"Expected out tensor to have dtype {expected}, but got {got} instead"


def out_dtype_match(input_dtype: str, out_dtype: str) -> str:
    """amax/amin's out= check."""
    return (f"Expected the dtype for input and out to match, but got {input_dtype} for "
            f"input's dtype and {out_dtype} for out's dtype.")


def nanmean_dtype(got: str) -> str:
    return f"nanmean(): expected input to have floating point or complex dtype but got {got}"


def vector_norm_dtype(got: str) -> str:
    return f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {got}"


def vector_norm_empty(p: float) -> str:
    return (f"linalg.vector_norm cannot compute the {p:g} norm on an empty tensor because "
            "the operation does not have an identity")


def renorm_dims(ndim: int) -> str:
    return f"renorm: input needs at least 2 dimensions, got {ndim} dimensions"


def mean_optional_dtype(scalar_name: str) -> str:
    return ("mean(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {scalar_name}")




# ReduceOps.cpp diff_check, Integration.cpp, Correlation.cpp
def diff_order(n: int) -> str:
    return f"order must be non-negative but got {n}"


DIFF_ZERO_DIM = "diff expects input to be at least one-dimensional"
DIFF_OTHER_DIMS = "diff expects prepend or append to be the same dimension as input"


def trapezoid_one_x(op: str) -> str:
    return f"{op}: There must be one `x` value for each sample point"


def cov_dims(op: str, ndim: int) -> str:
    return (f"{op}(): expected input to have two or fewer dimensions but got an input with "
            f"{ndim} dimensions")


def cov_weights_dims(name: str, ndim: int) -> str:
    return (f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
            f"{ndim} dimensions")


def cov_weights_dtype(name: str, integral: bool, got: str) -> str:
    kind = "integral" if integral else "floating point"
    return f"cov(): expected {name} to have {kind} dtype but got {name} with {got} dtype"


def cov_weights_numel(name: str, numel: int, n: int) -> str:
    return (f"cov(): expected {name} to have the same numel as there are observations in the "
            f"input but got {numel} != {n}")


def cov_weights_negative(name: str) -> str:
    return f"cov(): {name} cannot be negative"


COV_WEIGHTS_ZERO = "cov(): weights sum to zero, can't be normalized"
COV_DOF = ("cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
           "number of observations.")
# Sorting.cpp quantile_checks / quantile_impl
def quantile_q_range(q: float) -> str:
    return f"quantile() q must be in the range [0, 1] but got {q}"


def quantile_interpolation(got: str) -> str:
    return ("quantile() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {got}")


QUANTILE_EMPTY = "quantile() input tensor must be non-empty"
QUANTILE_Q_DIMS = "quantile() q must be a scalar or 1D tensor"
QUANTILE_DTYPE = "quantile() input tensor must be either float or double dtype"
QUANTILE_Q_DTYPE = "quantile() q tensor must be same dtype as the input tensor"
QUANTILE_Q_VALUES = "quantile() q values must be in the range [0, 1]"
QUANTILE_INTERPOLATION_NOT_MODELLED = (
    "reference_engine: quantile's interpolation 'lower', 'higher' and 'nearest' (in-place "
    "floor_/ceil_/round_ of the ranks) are not modelled")


# ---- shape, view, joining and splitting ops (issue 24) ----
# aten/src/ATen/native/TensorShape.cpp unless said otherwise.
NARROW_0_DIM = "narrow() cannot be applied to a 0-dim tensor."
NARROW_NEGATIVE_LENGTH = "narrow(): length must be non-negative."
NARROW_START_TENSOR = "start must be an 0-dim integral Tensor."
# narrow_copy_dense_cpu_out's bare TORCH_CHECK(dim < self_sizes.size()) for a dim >= 0
NARROW_COPY_DIM = ("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got "
                   "false.  (Could this error message be improved?  If so, please report an "
                   "enhancement request to PyTorch.)")


def narrow_start_out_of_range(size: int, start: int) -> str:
    return f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"


def diagonal_dims_identical(dim1: int, dim2: int) -> str:
    return f"diagonal dimensions cannot be identical {dim1}, {dim2}"


# InferSize.h
INFER_ONE_DIM = "only one dimension can be inferred"


def infer_zero_elements(shape: str) -> str:
    return (f"cannot reshape tensor of 0 elements into shape {shape} because the unspecified "
            "dimension size -1 can be any value and is ambiguous")


def not_expandable(size: str, to: str) -> str:   # ExpandUtils.h sum_to
    return f"size {{{size}}} is not expandable to size {{{to}}}."


def movedim_lengths(src: str, dst: str) -> str:
    return (f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
            f"the same number of dims as destination ({dst} dims)")


def movedim_repeated(which: str, dims: str) -> str:
    return f"movedim: repeated dim in `{which}` ({dims})"


def flip_ndim(n: int) -> str:   # fliplr: n = 2, flipud: n = 1
    return f"Input must be >= {n}-d."


ROLL_SHIFTS_REQUIRED = "`shifts` required"


def roll_align(shifts: int, dims: int) -> str:
    return f"shifts and dimensions must align. shifts: {shifts}, dims:{dims}"


def dim_of_0_dim(dim: int) -> str:   # WrapDimMinimal.cpp, wrap_scalar=false
    return f"Dimension specified as {dim} but tensor has no dimensions"


def rot90_rotation_dims(n: int) -> str:
    return f"expected total rotation dims == 2, but got dims = {n}"


def rot90_total_dims(n: int) -> str:
    return f"expected total dims >= 2, but got total dims = {n}"


def rot90_same_dims(d0: int, d1: int) -> str:
    return f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"


def cat_ndims(a: int, b: int) -> str:
    return f"Tensors must have same number of dimensions: got {a} and {b}"


CAT_EMPTY = "torch.cat(): expected a non-empty list of Tensors"   # python_arg_parser


def cat_zero_dim(i: int) -> str:
    return f"zero-dimensional tensor (at position {i}) cannot be concatenated"


def tensor_list_element(i: int, got: str) -> str:   # python_arg_parser
    return f"expected Tensor as element {i} in argument 0, but got {got}"


def stack_empty(name: str) -> str:   # hstack, vstack, dstack, column_stack
    return f"{name} expects a non-empty TensorList"


def split_min_dims(name: str, n: int, got: int) -> str:   # hsplit, vsplit, dsplit
    return (f"torch.{name} requires a tensor with at least {n} dimension, but got a tensor "
            f"with {got} dimensions!")


def split_not_divisible(name: str, dim: int, size: int, sections: int) -> str:
    return (f"torch.{name} attempted to split along dimension {dim}, but the size of the "
            f"dimension {size} is not divisible by the split_size {sections}!")


def split_sections_type(name: str, got: str) -> str:
    """hsplit(x, 'abc'): both overloads mark the sections argument."""
    marked = ("Tensor", f"!{got}!")
    return parser_mismatch(name, ("Tensor", got), (("Tensor input, int sections", marked),
                                                   ("Tensor input, tuple of ints indices",
                                                    marked)))


def tensor_split_dims(n: int) -> str:
    return f"tensor_split expected at least a 1-dimensional tensor, but got a tensor with {n} dims"


def tensor_split_sections(n: int) -> str:
    return f"number of sections must be larger than 0, got {n}"


REPEAT_DIMS = ("Number of dimensions of repeat dims can not be smaller than number of "
               "dimensions of tensor")


def block_diag_dims(i: int, n: int) -> str:
    return (f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
            f"{n} dimensions")


def pad_length(n: int) -> str:   # PadNd.cpp
    return f"Length of pad must be even but instead it equals {n}"


def constant_pad_too_long(n: int, ndim: int) -> str:   # torch's text lacks the two spaces
    return ("Length of pad should be no more than twice the number of dimensions of the "
            f"input. Pad length is {n}while the input has {ndim}dimensions.")
MESHGRID_INDEXING = ("torch.meshgrid: in an upcoming release, it will be required to pass the "
                     "indexing argument.")
MESHGRID_EMPTY = "meshgrid expects a non-empty TensorList"


# torch ends it with the tensor's C++ print (its values and type), which is not modelled
MESHGRID_DIMS = "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "


def cat_not_tensors(got: str) -> str:   # python_arg_parser
    return f"cat(): argument 'tensors' (position 1) must be tuple of Tensors, not {got}"


def matrix_property(name: str, ndim: int) -> str:   # Tensor.mT, Tensor.mH
    return (f"tensor.{name} is only supported on matrices or batches of matrices. Got "
            f"{ndim}-D tensor.")


def h_not_matrix(ndim: int) -> str:
    text = f"tensor.H is only supported on matrices (2-D tensors). Got {ndim}-D tensor."
    return text + " For batches of matrices, consider using tensor.mH" if ndim > 2 else text


def as_strided_out_of_bounds(size: str, stride: str, offset: int, itemsize: int,
                             needed: int, storage: int) -> str:   # Resize.h checkInBoundsForStorage
    return (f"setStorage: sizes {size}, strides {stride}, storage offset {offset}, and itemsize "
            f"{itemsize} requiring a storage size of {needed} are out of bounds for storage of "
            f"size {storage}")


# the engine's own limit (not torch's): as_strided reads a tensor's storage, which the engine
# models for a tensor whose elements are all of its storage, in order
AS_STRIDED_OF_VIEW = ("as_strided of a view of part of its storage, or of a non-contiguous "
                      "tensor, is not modelled by the reference engine")


# ---- indexing, scatter, masked, triangular/diagonal ops (issue 24) ----------------------------
# from ATen's TensorShape.cpp, TriangularOps.cpp, TensorAdvancedIndexing.cpp, ScatterGatherChecks.h

def triangle_needs_2d(name: str) -> str:
    return f"{name}: input tensor must have at least 2 dimensions"


def diag_needs_1d_or_2d(ndim: int) -> str:
    return f"diag(): Supports 1D or 2D tensors. Got {ndim}D"


def fill_value_dims(ndim: int) -> str:
    return (f"fill_ only supports 0-dimension value tensor but got tensor with {ndim} "
            "dimensions.")


def scatter_dtype(name: str) -> str:
    return f"{name}(): Expected self.dtype to be equal to src.dtype"


SCATTER_INDEX_DIMS_SELF = "Index tensor must have the same number of dimensions as self tensor"
SCATTER_INDEX_DIMS_SRC = "Index tensor must have the same number of dimensions as src tensor"


# masked_scatter__cpu's TORCH_WARN (TensorAdvancedIndexing.cpp): no space after the comma
MASKED_SCATTER_UINT8 = ("masked_scatter_ received a mask with dtype torch.uint8, this "
                        "behavior is now deprecated,please use a mask with dtype torch.bool "
                        "instead.")


def masked_scatter_mask_dtype(scalar_name: str) -> str:
    return f"masked_scatter_ only supports boolean masks, but got mask with dtype {scalar_name}"


# The scatter family's source dtype checks, each with its own text (a source of another dtype
# is refused, never cast): index_func_meta_impl (TensorAdvancedIndexing.cpp) for index_add /
# index_reduce, index_copy's meta function, put_, masked_scatter_ and index_put_.
def index_func_dtype(func: str, self_name: str, source_name: str) -> str:
    return (f"{func}(): self ({self_name}) and source ({source_name}) must have the same "
            "scalar type")


def index_copy_dtype(self_name: str, source_name: str) -> str:
    return ("index_copy_(): self and source expected to have the same dtype, but got (self) "
            f"{self_name} and (source) {source_name}")


def put_dtype(self_name: str, source_name: str) -> str:
    return ("put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{self_name} and source.dtype = {source_name}")


def masked_scatter_dtype(self_name: str, source_name: str) -> str:
    # torch's text has no space after "got"
    return ("masked_scatter: expected self and source to have same dtypes but got"
            f"{self_name} and {source_name}")


def index_add_source_shape(self_shape: str, source_shape: str) -> str:
    return ("source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {self_shape} source.shape = {source_shape}")


def reduce_argument(name: str, reduce: str) -> str:
    if name == "index_reduce":
        return ("index_reduce(): Expected reduce to be one of prod, mean, amax or amin but "
                f"got {reduce}.")
    return f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}"


def take_out_of_range(index: int, numel: int) -> str:
    return f"out of range: tried to access index {index} on a tensor of {numel} elements."


def masked_select_mask_dtype(scalar_name: str) -> str:
    return "masked_select: expected BoolTensor for mask"


def view_scatter_shape(slice_size: str, src_size: str) -> str:
    return (f"expected src to have a size equal to the slice of self. src size = {src_size}, "
            f"slice size = {slice_size}")


INDEX_REDUCE_BETA = "index_reduce() is in beta and the API may change at any time."


def out_resized(old: str, new: str) -> str:
    """Resize.cpp's resize_output warning."""
    return (f"An output with one or more elements was resized since it had shape {old}, "
            f"which does not match the required output shape {new}. This behavior is "
            "deprecated, and in a future PyTorch release outputs will not be resized unless "
            "they have zero elements. You can explicitly reuse an out tensor t by resizing it, "
            "inplace, to zero elements with t.resize_(0).")


# IndexingUtils.h expandTensors' TORCH_WARN for a uint8 index tensor (taken as a mask)
UINT8_INDEX = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
               "torch.bool instead.")
def masked_fill_mask_dtype(cpp_name: str) -> str:
    """masked_fill__cpu's check, with the caffe2 type name ('unsigned char')."""
    return f"masked_fill_ only supports boolean masks, but got mask with dtype {cpp_name}"


GATHER_INDEX_DTYPE = "gather(): Expected dtype int32/int64 for index"
GATHER_INDEX_DIMS = "Index tensor must have the same number of dimensions as input tensor"


def gather_size(d: int, index_sizes: str, self_sizes: str, dim: int) -> str:
    return (f"Size does not match at dimension {d} expected index {index_sizes} to be no "
            f"larger than self {self_sizes} apart from dimension {dim}")


def masked_fill_value_dims(ndim: int) -> str:
    return ("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{ndim} dimension(s).")


def value_overflow(type_name: str) -> str:
    return f"value cannot be converted to type {type_name} without overflow"


# the C++ type names checked_convert prints (c10/util/TypeCast.h), by torch's scalar name
CHECKED_CONVERT_NAMES = {"Half": "c10::Half", "BFloat16": "c10::BFloat16", "Float": "float",
                         "Double": "double", "Long": "int64_t", "Int": "int",
                         "Short": "int16_t", "Char": "int8_t", "Byte": "uint8_t",
                         "ComplexFloat": "c10::complex<float>",
                         "ComplexDouble": "c10::complex<double>"}


# TORCH_WARN_ONCE: aten/src/ATen/native/Copy.cpp copy_impl, a complex source copied into a
# real self (copy_, and to()/float()/... through _to_copy, setitem through copy_)
COMPLEX_TO_REAL_CAST = "Casting complex values to real discards the imaginary part"


def not_modelled(what: str) -> str:
    """Not torch's text: the engine's refusal where LAPACK's output is not modelled."""
    return f"{what} is not modelled by the reference engine"


# ---- h21eng (issue 21: the engine's files split by concern) ----

def registry_module_not_imported(name: str) -> str:
    """Not torch's text: a registry row names an engine module the package does not import."""
    return (f"registry.py names the module {name!r}, which reference_engine/__init__.py does "
            f"not import: import it there")


# ---- h22cx (issue 22: complex autograd) ---------------------------------------------------
# torch/csrc/autograd/autograd.py's _make_grads, for a complex scalar output
def implicit_grad_not_real(dt: object) -> str:
    return f"grad can be implicitly created only for real scalar outputs but got {dt}"


# aten/src/ATen/native/TensorConversions.cpp / ComplexHelper.h
VIEW_AS_REAL_NOT_COMPLEX = "view_as_real is only supported for complex tensors"
VIEW_AS_REAL_CONJ = (
    "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
    "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
    "resulting tensor will NOT alias the original.")
VIEW_AS_COMPLEX_LAST_DIM = "Tensor must have a last dimension of size 2"
VIEW_AS_COMPLEX_STRIDE = "Tensor must have a last dimension with stride 1"


def view_as_complex_dtype(scalar_name: str) -> str:
    return ("view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {scalar_name}")


# aten/src/ATen/native/UnaryOps.cpp (imag of a real tensor)
IMAG_NOT_COMPLEX = "imag is not implemented for tensors with non-complex dtypes."


# aten/src/ATen/native/TensorFactories.cpp complex_check_dtype (torch.complex, torch.polar)
def numpy_unsupported_scalar_type(scalar_name: str) -> str:
    # torch/csrc/utils/tensor_numpy.cpp aten_to_numpy_dtype
    return f"Got unsupported ScalarType {scalar_name}"


def complex_inputs_not_float(a: str, b: str) -> str:
    return f"Expected both inputs to be Half, Float or Double tensors but got {a} and {b}"


def complex_second_argument(a: str, b: str) -> str:
    return f"Expected object of scalar type {a} but got scalar type {b} for second argument"


# aten/src/ATen/Dispatch.h: a kernel with no complex instantiation (comparisons, max)
def max_min_complex(name: str) -> str:
    """max(dim) / min(dim) of a complex tensor (ReduceOps.cpp)."""
    return f"{name}(): does not support complex input"


# the reference engine's own (no torch text): what it does not model of complex views
COMPLEX_VIEW_INPLACE_NOT_MODELLED = (
    "the reference engine does not model in-place writes through a view of another dtype "
    "(real, imag, view_as_real, view_as_complex) or through a conj view")


# torch/autograd/__init__.py _make_grads: a grad_output and its output, one complex
def grad_complex_mismatch(i: int, grad_dtype: object, out_dtype: object) -> str:
    return ("For complex Tensors, both grad_output and output are required to have the same "
            f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {grad_dtype} and "
            f"output[{i}] has a dtype of {out_dtype}.")


# ---- h24gen ---------------------------------------------------------------------------------

def kernel_not_implemented(kernel: str, scalar_name: str) -> str:
    """AT_DISPATCH's text for a dtype the kernel is not compiled for (an activation's kernel on
    an integer tensor: `"elu_cpu" not implemented for 'Long'`)."""
    return f'"{kernel}" not implemented for \'{scalar_name}\''


# ---- h22cxfix (complex and polar with out=) ----------------------------------------------
# aten/src/ATen/native/TensorFactories.cpp, complex_check_dtype
def complex_out_dtype(expected: str, got: str) -> str:
    return f"Expected object of scalar type {expected} but got scalar type {got} for argument 'out'"


# ---- h24gen2 (generator divergences) ------------------------------------------------------
# aten/src/ATen/native/Activation.cpp hardtanh_out
HARDTANH_BOOL = "Bool inputs not supported for hardtanh"


# aten/src/ATen/native/Lerp.cpp (lerp_Scalar / lerp_Tensor meta)
def lerp_dtype(arg: str, expected: str, got: str) -> str:
    return f"expected dtype {expected} for `{arg}` but got dtype {got}"


# aten/src/ATen/native/LinearAlgebra.cpp linalg_vecdot (checkFloatingOrComplex, then dtypes)
def vecdot_not_floating(got: str) -> str:
    return f"linalg.vecdot: Expected a floating point or complex tensor as input. Got {got}"


def vecdot_dtypes(x: str, y: str) -> str:
    return ("linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{x} and y of type {y} instead")


# torch/csrc/autograd/functions/utils.h set_history: an op's differentiable output of an
# integer dtype, an input requiring grad
def autograd_dtype(scalar_name: str) -> str:
    return f"Autograd not support dtype: {scalar_name}"


# ---- h22cov (gradcheck's forward-mode check) ----------------------------------------------
# torch/autograd/gradcheck.py gradcheck and _get_notallclose_msg (is_forward_ad=True)
GRADCHECK_BATCHED_FORWARD_NEEDS_FORWARD = (
    "Setting check_batched_forward_grad=True requires check_forward_ad to be True")


def gradcheck_forward_jacobian_mismatch(output: int, input: int, numerical: str,
                                        analytical: str) -> str:
    return (f"Jacobian computed with forward mode mismatch for output {output:d} with respect "
            f"to input {input:d},\nnumerical:{numerical}\nanalytical:{analytical}\n")


def gradcheck_complex_part(part: str, element: str) -> str:
    """The prefix of a mismatch found on one part of a complex output (backward) or input
    (forward): part is real or imaginary, element outputs or inputs."""
    return f"While considering the {part} part of complex {element} only, "


def gradcheck_undefined_tangent_mismatch(k: int, inp: object, got: object,
                                         expected: object) -> tuple[object, ...]:
    """_test_undefined_forward_mode's GradcheckError arguments (torch raises it with these
    several, not one text)."""
    return ("Mismatch in tangent values for output with index: ", k, " when input: ", inp,
            " has an undefined tangent value. ", " Got: ", got, " but expected: ", expected)


# torch/csrc/autograd/engine.cpp validate_outputs: a custom Function's backward returned a
# complex gradient for a real input (built-in formulas take its real part themselves)
GRAD_COMPLEX_FOR_REAL_INPUT = (
    "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to "
    "be true, but got false.  (Could this error message be improved?  If so, please report "
    "an enhancement request to PyTorch.)")


# ---- h24ops2 (issue 24: contractions, norms, masked, losses) ------------------------------
# aten/src/ATen/native/Linear.cpp tensordot, inner
TENSORDOT_DIM_LISTS = "both dimension lists should have same length"
TENSORDOT_DTYPES = "both inputs should have same dtype"
TENSORDOT_OUT_NOT_MODELLED = "reference_engine: tensordot with out= is not modelled"


def tensordot_sizes(s1: int, d1: int, s2: int, d2: int) -> str:
    return (f"contracted dimensions need to match, but first has size {s1} in dim {d1} and "
            f"second has size {s2} in dim {d2}")


def inner_last_dims(a: tuple[int, ...], b: tuple[int, ...]) -> str:
    return ("inner() the last dimension must match on both input tensors but got shapes "
            f"[{', '.join(map(str, a))}] and [{', '.join(map(str, b))}]")


# torch/functional.py tensordot
def tensordot_dims_type(dims: object) -> str:
    return ("tensordot expects dims to be int or tuple[list[int], list[int]] or "
            f"list[list[int]] containing two lists, but got dims={dims}")


def tensordot_dims_negative(dims: int) -> str:
    return f"tensordot expects dims >= 0, but got dims={dims}"


def tensordot_dims_too_many(dims: int) -> str:
    return f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}"


# torch/masked/_ops.py _canonical_dim, _input_mask, _std_var
def masked_dim_repeated(d: int) -> str:
    return f"dim={d} appears multiple times in the list of dims"


def masked_dim_out_of_range(ndim: int, d: int) -> str:
    return f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})"


MASKED_MASK_DIMS = ("_input_mask expected broadcastable mask (got mask dimensionality higher "
                    "than of the input)")
MASKED_UNBIASED_AND_CORRECTION = "Only one of unbiased and correction may be given"


def masked_dtype_not_modelled(op: str) -> str:
    return (f"reference_engine: torch.masked.{op} is modelled for floating inputs and no dtype "
            "other than the input's")


# torch/nn/functional.py margin_ranking_loss, kl_div, gaussian_nll_loss, normalize
def margin_ranking_dims(a: object, b: object, t: object) -> str:
    return ("margin_ranking_loss : All input tensors should have same dimension but got "
            f"sizes: input1: {a}, input2: {b}, target: {t} ")


KL_DIV_MEAN = ("reduction: 'mean' divides the total loss by both the batch size and the "
               "support size.'batchmean' divides only by the batch size, and aligns with the "
               "KL div math definition.'mean' will be changed to behave the same as "
               "'batchmean' in the next major release.")
GAUSSIAN_NLL_NEGATIVE_VAR = "var has negative entry/entries"
GAUSSIAN_NLL_VAR_SIZE = "var is of incorrect size"
NORMALIZE_OUT_NOT_MODELLED = "reference_engine: normalize with out= is not modelled"


def gaussian_nll_reduction(reduction: str) -> str:
    return f"{reduction} is not valid"


# aten/src/ATen/native/Loss.cpp cosine_embedding_loss, Distance.cpp cosine_similarity
COSINE_EMBEDDING_TARGET = "0D or 1D target tensor expected, multi-target not supported"


def cosine_embedding_sizes(target_dim: int, a: object, b: object) -> str:
    expects = "2D" if target_dim == 1 else "1D"
    return (f"{target_dim}D target tensor expects {expects} input tensors, but found inputs "
            f"with sizes {a} and {b}.")


def cosine_similarity_dtype(dt: object) -> str:
    return f"expected common dtype to be floating point, yet common dtype is {dt}"


def cosine_similarity_eps(eps: float) -> str:
    return f"eps must be non-negative, got: {eps}"


# aten/src/ATen/native/Embedding.cpp, torch/nn/functional.py embedding, Onehot.cpp
EMBEDDING_WEIGHT_DIMS = "'weight' must be 2-D"
EMBEDDING_PADDING_IDX = "Padding_idx must be within num_embeddings"
EMBEDDING_SPARSE_NOT_MODELLED = "reference_engine: embedding with sparse=True is not modelled"
EMBEDDING_MAX_NORM_NOT_MODELLED = "reference_engine: embedding's max_norm is not modelled"
ONE_HOT_DTYPE = "one_hot is only applicable to index tensor of type LongTensor."
ONE_HOT_EMPTY = "Can not infer total number of classes from empty tensor."
ONE_HOT_NEGATIVE = "Class values must be non-negative."
ONE_HOT_TOO_SMALL = "Class values must be smaller than num_classes."


# Python's method descriptor of a C slot (torch._C.TensorBase.__radd__ called on a non-Tensor)
def descriptor_not_applicable(name: str, got: str) -> str:
    return (f"descriptor '{name}' for 'torch._C.TensorBase' objects doesn't apply to a "
            f"'{got}' object")


# ---- h23b (test_autograd.py coverage) ------------------------------------------------------
# torch/utils/checkpoint.py, the unpack hook of _checkpoint_hook: the GraphExecGroup sentence
# is inserted when the unpack runs under a group
def checkpoint_unpack_twice(in_group: bool) -> str:
    if not in_group:
        return CHECKPOINT_UNPACK_TWICE
    head, _, tail = CHECKPOINT_UNPACK_TWICE.partition("If you are")
    return (head + "Performing two backward calls that overlap (i.e. require the same saved "
            "activation in order to compute gradients) is not allowed while under the "
            "torch.utils.checkpoint.GraphExecGroup context. If you are" + tail)


# torch/utils/checkpoint.py, GraphExecGroup.__enter__
def graph_exec_group_nested(group: object) -> str:
    return f"GraphExecGroup contexts cannot be nested. Already inside group {group}"


# torch/csrc/autograd/python_function.cpp THPFunction_saved_tensors, a Function class with
# clear_saved_tensors_on_access = True read a second time
SAVED_TENSORS_CLEARED_ON_ACCESS = (
    "saved_tensors can only be accessed once when clear_saved_tensors_on_access=True is set "
    "on the autograd.Function. Either access saved_tensors only once, or set "
    "clear_saved_tensors_on_access=False.")


# torch/csrc/autograd/FunctionsManual.cpp scatter_reduce_backward / index_reduce_backward
# (prod), the DelayedError on the src grad
def reduce_prod_double_backward(op: str, src: str) -> str:
    return (f"{op}(): Double backward is unsupported for {src} when >1 zeros in {src} are "
            "scattered to the same position in self")


# torch/csrc/utils/tensor_numpy.cpp tensor_to_numpy
NUMPY_REQUIRES_GRAD = ("Can't call numpy() on Tensor that requires grad. Use "
                       "tensor.detach().numpy() instead.")


# torch/autograd/function.py Function.__init__ and Function.__call__
def function_instantiated(cls: str) -> str:
    return (f"{cls} should not be instantiated. Methods on autograd functions are all static, "
            "so you should invoke them on the class itself. Instantiating an autograd function "
            "will raise an error in a future version of PyTorch.")


LEGACY_FUNCTION_CALL = (
    "Legacy autograd function with non-static forward method is deprecated. Please use "
    "new-style autograd function with static forward method. (Example: "
    "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")


# ---- lead (generator divergences, session 31) ---------------------------------------------
# aten/src/ATen/native/TensorShape.cpp meshgrid
MESHGRID_DTYPES = "meshgrid expects all tensors to have the same dtype"
MESHGRID_DEVICES = "meshgrid expects all tensors to have the same device"


# ---- h23cov (issue 23: coverage of test_autograd.py) --------------------------------------
# aten/src/ATen/native/TensorCompare.cpp isin_default_kernel's dtype check
def isin_unsupported_dtype(scalar_name: str) -> str:
    return f"Unsupported input type encountered for isin(): {scalar_name}"


# torch/csrc/autograd/VariableTypeManual.cpp resize_ / resize_as_
RESIZE_REQUIRES_GRAD = "cannot resize variables that require grad"
# torch's argument parser on Tensor.resize_(*size) (python_arg_parser.cpp)
RESIZE_MISSING_SIZE = 'resize_() missing 1 required positional arguments: "size"'


def resize_size_type(got: str) -> str:
    return f"resize_(): argument 'size' (position 1) must be tuple of ints, not {got}"


def resize_as_template_type(got: str) -> str:
    return f"resize_as_(): argument 'the_template' (position 1) must be Tensor, not {got}"


# c10/core/TensorImpl.h safe_compute_numel, which a negative size overflows
RESIZE_NEGATIVE = "numel: integer multiplication overflow"


# aten/src/ATen/native/TensorShape.cpp set_'s check_dtype / torch's parser on Tensor.set_
def set_dtype(source: str, self: str) -> str:
    return f"Could not set tensor of type {source} to a tensor of type {self}"


def set_invalid_arguments(got: str) -> str:
    return invalid_combination("set_", (got,), (
        ("", True), ("torch.Storage source", True),
        ("torch.Storage source, int storage_offset, tuple of ints size, tuple of ints stride "
         "= None", False),
        ("Tensor source", True),
        ("Tensor source, int storage_offset, tuple of ints size, tuple of ints stride = None",
         False)))


# the engine's own refusals (ops/storage.py): behaviour it does not model
RESIZE_NOT_MODELLED = ("the reference engine models resize_ to another size only of a "
                       "contiguous tensor that is not a view")
SET_GRAD_NOT_MODELLED = ("the reference engine does not model set_ in grad mode on a tensor "
                         "that requires grad or with a source that does (torch records a "
                         "NotImplemented node)")
SET_VIEW_NOT_MODELLED = "the reference engine does not model set_ on a view"


# torch/autograd/gradcheck.py _check_outputs_same_dtype_and_shape (fast mode's central
# difference) and _run_slow_mode_and_get_error / FAST_FAIL_SLOW_OK_MSG
def gradcheck_perturbed_shapes(eps: float, a: object, b: object) -> str:
    return (f"Expected `func` to return outputs with the same shape when inputs are perturbed "
            f"by {eps}, but got: shapes {a} and {b}.")


def gradcheck_perturbed_dtypes(eps: float, a: object, b: object) -> str:
    return (f"Expected `func` to return outputs with the same dtype when inputs are perturbed "
            f"by {eps}, but got: dtypes {a} and {b}.")


GRADCHECK_FAST_FAIL_SLOW_OK = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()


def gradcheck_fast_slow_mode(numerical: str, analytical: str, max_diff: str,
                             slow_ok: bool) -> str:
    text = (
        "\nThe above quantities relating the numerical and analytical jacobians are computed \n"
        "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more "
        "background \n"
        "about fast mode. Below, we recompute numerical and analytical jacobians in slow "
        "mode:\n\n"
        f"Numerical:\n {numerical}\n"
        f"Analytical:\n{analytical}\n\n"
        f"The max per-element difference (slow mode) is: {max_diff}.\n")
    return text + GRADCHECK_FAST_FAIL_SLOW_OK if slow_ok else text


# aten/src/ATen/native/TensorShape.cpp setStrided (as_strided_ of a size without elements)
def as_strided_dims(size: int, stride: int) -> str:
    return "mismatch in length of strides and shape"


# ---- lead (session 32) ---------------------------------------------------------------------
def _parser_type(x: object) -> str:
    """python_arg_parser.cpp's name of a Python argument in its mismatch text (a tuple is
    printed as Python prints one: `(int,)`)."""
    if isinstance(x, (tuple, list)):
        names = ", ".join(type(v).__name__ for v in x)
        if isinstance(x, list):
            return f"list of [{names}]"
        return f"tuple of ({names}{',' if len(x) == 1 else ''})"
    return type(x).__name__


def movedim_mixed(source: object, destination: object) -> str:
    """torch's argument parser when movedim gets an int and a sequence: neither overload
    (int, int) nor (tuple of ints, tuple of ints) matches. The int overload marks the
    arguments that are not ints; the tuple overload marks both (as torch 2.13 prints it).
    The function's text: the method's lacks the `Tensor` argument, as split_sections_type's."""
    def shown(arg: object, mark: bool) -> str:
        return f"!{_parser_type(arg)}!" if mark else _parser_type(arg)
    signatures = tuple(
        (f"Tensor input, {kind} source, {kind} destination",
         ("Tensor", *(shown(a, not isinstance(a, int) or not int_overload)
                      for a in (source, destination))))
        for kind, int_overload in (("int", True), ("tuple of ints", False)))
    got = ("Tensor", type(source).__name__, type(destination).__name__)
    return parser_mismatch("movedim", got, signatures)


# ---- h22cx (complex autograd gaps) ----------------------------------------------------------
# aten/src/ATen/native/TensorCompare.cpp clamp / clamp_min / clamp_max (their meta functions):
# TORCH_CHECK_NOT_IMPLEMENTED(!isComplexType(...)); relu is clamp_min(self, 0) on CPU
CLAMP_COMPLEX = "clamp is not supported for complex types"


# ---- h24ops3 (issue 24): determinants, nll/cross entropy, normalisations ------------------
# aten/src/ATen/native/LinearAlgebraUtils.h checkIsMatrix, squareCheckInputs,
# checkFloatingOrComplex
def linalg_at_least_2d(f_name: str, arg: str = "A") -> str:
    return f"{f_name}: The input tensor {arg} must have at least 2 dimensions."


def linalg_not_square(f_name: str, rows: int, cols: int, arg: str = "A") -> str:
    return (f"{f_name}: {arg} must be batches of square matrices, but they are {rows} by "
            f"{cols} matrices")


def linalg_not_floating(f_name: str, got: str) -> str:
    return f"{f_name}: Expected a floating point or complex tensor as input. Got {got}"


# aten/src/ATen/native/LossNLL.cpp (nll_loss_forward's meta checks, the kernels' target
# check, nll_loss_nd, cross_entropy_loss) and LossNLL2d.cpp check_inputs_nll_loss2d
NLL_INPUT_DIMS = "input tensor should be 1D or 2D"
NLL_TARGET_DIMS = "0D or 1D target tensor expected, multi-target not supported"
NLL2D_WEIGHT = "weight tensor should be defined either for all or no classes"
CROSS_ENTROPY_PROB_IGNORE = "ignore_index is not supported for floating point target"


def nll_size_mismatch(input: Sequence[int], target: Sequence[int]) -> str:
    return f"size mismatch (got input: {sizes(input)}, target: {sizes(target)})"


def nll_nd_1d_target(size: int) -> str:
    return f"For 1D input, 1D target must have size 1, but got target size: {size}"


def nll_weight_size(n_classes: int, shape: Sequence[int]) -> str:
    return (f"weight tensor should be defined either for all {n_classes} classes or no "
            f"classes but got weight tensor of shape: {sizes(shape)}")


def nll_target_out_of_bounds(target: int) -> str:
    return f"Target {target} is out of bounds."


def nll2d_target_dims(ndim: int) -> str:
    return ("only batches of spatial targets supported (3D tensors) but got targets of "
            f"dimension: {ndim}")


def nll2d_input_dims(ndim: int) -> str:
    return ("only batches of spatial inputs supported (4D tensors), but got input of "
            f"dimension: {ndim}")


def nll2d_size_mismatch(input: Sequence[int], target: Sequence[int]) -> str:
    return f"size mismatch (got input: {sizes(input)} , target: {sizes(target)}"


def nll_nd_dims(ndim: int) -> str:
    return f"Expected 1 or more dimensions (got {ndim})"


def nll_nd_batch(input_batch: int, target_batch: int) -> str:
    return (f"Expected input batch_size ({input_batch}) to match target batch_size "
            f"({target_batch}).")


def nll_nd_target_size(expected: Sequence[int], got: Sequence[int]) -> str:
    return f"Expected target size {sizes(expected)}, got {sizes(got)}"


def cross_entropy_weight_size(n_classes: int, shape: Sequence[int]) -> str:
    return f"cross_entropy: {nll_weight_size(n_classes, shape)}"


def label_smoothing_range(value: float) -> str:
    return f"label_smoothing must be between 0.0 and 1.0. Got: {value:g}"


def cross_entropy_prob_dtype(scalar_name: str) -> str:
    return f"Expected floating point type for target with class probabilities, got {scalar_name}"


# torch/nn/_reduction.py legacy_get_string (a UserWarning)
def legacy_reduction(reduction: str) -> str:
    return (f"size_average and reduce args will be deprecated, please use "
            f"reduction='{reduction}' instead.")


# aten/src/ATen/native/layer_norm.h _check_layer_norm_inputs (rms_norm's own copy writes
# `[*2, 2]`), group_norm.cpp, torch/nn/functional.py group_norm and _verify_batch_size
def norm_shape_empty(shape: Sequence[int]) -> str:
    return ("Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
            f"least one element, but got normalized_shape = {sizes(shape)}")


def norm_affine_shape(name: str, got: Sequence[int], shape: Sequence[int]) -> str:
    return (f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
            f"shape {sizes(got)} and normalized_shape = {sizes(shape)}")


def norm_input_shape(shape: Sequence[int], input: Sequence[int], rms: bool) -> str:
    trailing = ", ".join(str(s) for s in shape) if rms else "".join(f", {s}" for s in shape)
    return (f"Given normalized_shape={sizes(shape)}, expected input with shape "
            f"[*{trailing}], but got input of size{sizes(input)}")


# rms_norm's check after its weight's (torch 2.13, a ValueError): fewer dims than
# normalized_shape
def rms_norm_input_dims(normalized_ndim: int, ndim: int) -> str:
    return f"Input tensor must have at least {normalized_ndim} dimensions, but got {ndim}"


def group_norm_dims(ndim: int) -> str:
    return f"Expected at least 2 dimensions for input tensor but received {ndim}"


def batch_size_one(size: Sequence[int]) -> str:
    return f"Expected more than 1 value per channel when training, got input size {list(size)}"


def group_norm_groups(shape: Sequence[int], groups: int) -> str:
    return ("Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {sizes(shape)} and num_groups={groups}")


def group_norm_affine(name: str, got: Sequence[int], input: Sequence[int]) -> str:
    return (f"Expected {name} to be a vector of size equal to the number of channels in "
            f"input, but got {name} of shape {sizes(got)} and input of shape {sizes(input)}")


# aten/src/ATen/native/BatchLinearAlgebra.cpp linalg_solve_ex's checks and
# linalg_solve's info check (a torch.linalg.LinAlgError)
SOLVE_SINGULAR = ("torch.linalg.solve: The solver failed because the input matrix is "
                  "singular.")
SOLVE_EX_SINGULAR_NOT_MODELLED = (
    "reference_engine: linalg.solve_ex of a singular matrix (LAPACK's partial result) is not "
    "modelled")


def solve_dtypes(f_name: str, a: str, b: str) -> str:
    return (f"{f_name}: Expected A and B to have the same dtype, but found A of type {a} and B "
            f"of type {b} instead")


def solve_shapes(f_name: str, equation: str, a: str, b: str) -> str:
    return f"{f_name}: Incompatible shapes of A and B for the equation {equation} ({a} and {b})"


# views_strided.replay: a view function's as_strided step replayed on a tensor not laid out as its
# storage (not modelled: the engine's as_strided reads flat storage positions)
VIEW_FN_AS_STRIDED_NOT_MODELLED = ("the reference engine replays a view function's as_strided "
                                   "only on a tensor laid out as its storage")


# ---- h24gen2 ----------------------------------------------------------------------------

def addmv_dtypes(self: str, mat: str, vec: str) -> str:  # scalar names: Float, Double
    return f"addmv input tensors must have the same dtype, but got {self}, {mat}, and {vec}"


# ---- h27eng: dispatch.py, the core's table of ops (the engine's own wiring) ----------------

def dispatch_provided_twice(name: str) -> str:
    return f"reference_engine.dispatch.{name} is provided twice"


def dispatch_not_provided(name: str) -> str:
    return (f"reference_engine.dispatch has no {name!r}: the core's calls into the ops are "
            f"provided by reference_engine/__init__.py")


# ---- h27fwd -----------------------------------------------------------------------------

# torch/storage.py _warn_typed_storage_removal (Tensor.storage(), and TypedStorage's
# methods), the first time in a process
TYPED_STORAGE_DEPRECATED = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
    "the only storage class. This should only matter to you if you are using storages "
    "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
    "tensor.storage()")


# torch/csrc/autograd/FunctionsManual.cpp not_implemented(): a derivatives.yaml formula
# written as not_implemented("<name>")
def derivative_not_implemented(name: str) -> str:
    return f"the derivative for '{name}' is not implemented."


# ---- h27ckpt ----------------------------------------------------------------------------
# torch/utils/checkpoint.py: selective activation checkpointing (create_selective_checkpoint_
# contexts, _CachedTorchDispatchMode, _VersionWrapper)
SAC_POLICY_TYPE = "policy_fn_or_list must be either a function or a list of ops."
SAC_CACHED_TENSOR_MUTATED = (
    "Tensor cached during selective activation checkpoint has been mutated")
SAC_BACKWARD_EXTRA_TIME = (
    "Trying to backward an extra time. You are only allowed to backward once on any region "
    "computed under selective activation checkpoint.")
_SAC_MISMATCH = ("This can happen if the operations in the checkpointed region are "
                 "nondeterministic or depend on global state that changed between forward "
                 "and backward.")


def sac_not_an_overload(op: str, type_name: str, packet: bool) -> str:
    extra = ("Please update the OpOverloadPacket to a specific OpOverload.For example, if you "
             "have `torch.ops.aten.mm`, change it to `torch.ops.aten.mm.default`."
             if packet else "")
    return (f"Expected op in `op_list` to be an OpOverload but got: {op} of type "
            f"<class '{type_name}'>. {extra}")


def sac_not_in_storage(op: str) -> str:
    return f"{op} encountered during backward but not found in storage. {_SAC_MISMATCH}"


def sac_index_not_in_storage(op: str, idx: int) -> str:
    return (f"{op} invocation index {idx} encountered during backward but not found in "
            f"storage. {_SAC_MISMATCH}")


# CPython's AttributeError for an attribute a grad_fn's class does not have (torch's generated
# node classes define their _saved_*/_raw_saved_* as properties, so any other name is Python's)
def no_attribute(cls: str, name: str) -> str:
    return f"'{cls}' object has no attribute '{name}'"


# torch/_ops.py: an op or overload torch.ops.aten does not have
def aten_no_op(name: str) -> str:
    return f"'_OpNamespace' 'aten' object has no attribute '{name}'"


def aten_no_overload(op: str, overload: str) -> str:
    return f"The underlying op of '{op}' has no overload name '{overload}'"


# torch/utils/checkpoint.py: a forward context that swallowed the forward's exception
CHECKPOINT_FORWARD_CONTEXT_SUPPRESSED = (
    "torch.utils.checkpoint: the forward context provided by context_fn suppressed an "
    "exception raised during the checkpointed forward. This is not supported because "
    "checkpoint cannot return a value for a failed forward.")


# torch/utils/checkpoint.py _CheckpointFrame.check_recomputed_tensors_match: the recomputed
# tensors' metadata (determinism_check="default"), and the checks checkpoint takes
def checkpoint_metadata_mismatch(different: list[tuple[int, object, object]]) -> str:
    tensors = "".join(f"tensor at position {i}:\nsaved metadata: {saved}\n"
                      f"recomputed metadata: {recomputed}\n"
                      for i, saved, recomputed in different)
    return ("torch.utils.checkpoint: Recomputed values for the following tensors have "
            f"different metadata than during the forward pass.\n{tensors}.\n"
            + _CHECKPOINT_DEBUG_TIP)


def checkpoint_determinism_check(allowed: list[str], got: str) -> str:
    return f"determinism_check should be one of {allowed}, but got {got}"


# ---- h27cov -----------------------------------------------------------------------------
# torch/utils/hooks.py BackwardHook and torch/nn/modules/module.py's full backward hooks

FULL_BACKWARD_HOOK_NO_INPUT_GRAD = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
    "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.")
FULL_BACKWARD_HOOK_NO_INPUT_GRAD_RESULT = (
    "Backward hook for Modules where no input requires gradient should always return None or "
    "None for all gradients.")
BACKWARD_HOOK_NO_INPUTS = "Cannot set Module backward hook for a Module with no input Tensors."
BACKWARD_HOOK_OUTPUT_TYPE = ("For backward hooks to be called, module output should be a "
                             "Tensor or a tuple of Tensors but received {}")


def backward_hook_grad_count(got: int, expected: int) -> str:
    return ("Backward hook returned an invalid number of grad_input, "
            f"got {got}, but expected {expected}")
# torch/nn/modules/batchnorm.py BatchNorm1d._check_input_dim
def batch_norm_1d_dims(ndim: int) -> str:
    return f"expected 2D or 3D input (got {ndim}D input)"


BATCH_NORM_TRAINING_NOT_MODELLED = (
    "reference_engine: nn.BatchNorm1d is modelled in eval mode only (with running statistics)")
# Tensor.grad_dtype (python_variable.cpp THPVariable_get_grad_dtype / set_grad_dtype)
GRAD_DTYPE_NON_LEAF_GET = "grad_dtype can only be accessed on leaf tensors."
GRAD_DTYPE_NON_LEAF_SET = "grad_dtype can only be set on leaf tensors."


def grad_dtype_type(type_name: str) -> str:
    return f"grad_dtype must be a torch.dtype or None, but got {type_name}"


def grad_dtype_has_grad(new_scalar_name: str, grad_cpp_name: str) -> str:
    return (f"Cannot set grad_dtype to '{new_scalar_name}' because there is already a "
            f"gradient with dtype '{grad_cpp_name}'. Please clear the gradient (.grad = None) "
            "before changing grad_dtype, or ensure the new grad_dtype matches the existing "
            "gradient's dtype.")


# ---- h27ops (issue 24): QR, matrix_exp ---------------------------------------------------------
# aten/src/ATen/native/LinearAlgebraUtils.h _parse_qr_mode; BatchLinearAlgebra.cpp qr's
# TORCH_WARN_ONCE; FunctionsManual.cpp linalg_qr_backward's checks

def qr_mode(mode: str) -> str:
    return (f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
            "'r', or 'complete'")


def qr_deprecated() -> str:
    return ("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
            "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
            "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = "
            "torch.linalg.qr(A, 'reduced' if some else 'complete')")


def qr_backward_mode_r() -> str:
    return ("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
            "linalg.qr.")


def qr_backward_complete() -> str:
    return ("The QR decomposition is not differentiable when mode='complete' and nrows > "
            "ncols.")


# BatchLinearAlgebra.cpp triangular_solve's TORCH_WARN_ONCE and linearSolveCheckInputs-style
# checks; LinearAlgebra.cpp linalg_vander's checks
def triangular_solve_deprecated() -> str:
    return ("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular"
            "and will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular "
            "has its arguments reversed and does not return a copy of one of the inputs.\nX = "
            "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
            "torch.linalg.solve_triangular(A, B).")


def triangular_solve_dims(b_dim: int, a_dim: int) -> str:
    return (f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
            f"{b_dim} dimensions instead" if b_dim < 2 else
            f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has "
            f"{a_dim} dimensions instead")


def vander_dtype(got: str) -> str:
    return f"linalg.vander supports floating point, complex, and integer tensors, but got {got}"


VANDER_N = "N must be greater than 1."


# LinearAlgebra.cpp linalg_matrix_norm, _linalg_matrix_norm_checks and linalg_norm's checks
def matrix_norm_order(ord: str) -> str:
    return f"linalg.matrix_norm: Order {ord} not supported."


def matrix_norm_dim_pair(dim: list[int]) -> str:
    return f"linalg.matrix_norm: dim must be a 2-tuple. Got {', '.join(map(str, dim))}"


def matrix_norm_same_dims(d0: int, d1: int) -> str:
    return f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})"


def linalg_norm_dim_length(dim: list[int]) -> str:
    return ("linalg.norm: If dim is specified, it must be of length 1 or 2. Got "
            f"[{', '.join(map(str, dim))}]")


def linalg_norm_ndim(ndim: int) -> str:
    return (f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
            f"Got {ndim}D.")


# torch/functional.py einsum; aten/src/ATen/native/Linear.cpp einsum's checks
EINSUM_ARGS = ("einsum(): must specify the equation string and at least one operand, or at "
               "least one operand and its subscripts list")
EINSUM_SUBLIST_NOT_MODELLED = "reference_engine: einsum's sublist format is not modelled"
EINSUM_FEWER_OPERANDS = "einsum(): fewer operands were provided than specified in the equation"
EINSUM_MORE_OPERANDS = "einsum(): more operands were provided than specified in the equation"
EINSUM_OUTPUT_SECOND_ELLIPSIS = ("einsum(): found '.' for output but an ellipsis (...) was "
                                 "already found")
EINSUM_OUTPUT_BAD_ELLIPSIS = ("einsum(): found '.' for output that is not part of any ellipsis "
                              "(...)")


def einsum_second_ellipsis(op: int) -> str:
    return f"einsum(): found '.' for operand {op} for which an ellipsis was already found"


def einsum_bad_ellipsis(op: int) -> str:
    return f"einsum(): found '.' for operand {op} that is not part of any ellipsis"


def einsum_invalid_subscript(index: int) -> str:
    return (f"einsum(): invalid subscript given at index {index} in the equation string, "
            "subscripts must be in [a-zA-Z]")


def einsum_output_subscript(label: str, repeated: bool) -> str:
    what = ("appears more than once in the output" if repeated
            else "does not appear in the equation for any input operand")
    return f"einsum(): output subscript {label} {what}"


def einsum_subscript_count(nlabels: int, ndim: int, op: int, has_ellipsis: bool) -> str:
    if has_ellipsis:
        return (f"einsum(): the number of subscripts in the equation ({nlabels}) is more than "
                f"the number of dimensions ({ndim}) for operand {op}")
    return (f"einsum(): the number of subscripts in the equation ({nlabels}) does not match the "
            f"number of dimensions ({ndim}) for operand {op} and no ellipsis was given")


def einsum_repeated_sizes(label: str, op: int, size: int, prev: int) -> str:
    return (f"einsum(): subscript {label} is repeated for operand {op} but the sizes don't "
            f"match, {size} != {prev}")


def einsum_subscript_broadcast(label: str, size: int, op: int, seen: int) -> str:
    return (f"einsum(): subscript {label} has size {size} for operand {op} which does not "
            f"broadcast with previously seen size {seen}")


def einsum_ellipsis_broadcast(dim: int, op: int, size: int, seen: int) -> str:
    # (no space before "has size": ATen's text)
    return (f"einsum(): dimension {dim} covered by ellipsis in operand {op}has size {size} "
            f"which does not broadcast with previously seen ellipsis with size {seen} for the "
            "respective dimension")


# BatchLinearAlgebra.cpp: torch.lu's TORCH_WARN_ONCE, _linalg_check_errors for getrf
def lu_deprecated() -> str:
    return ("torch.lu is deprecated in favor of torch.linalg.lu_factor / "
            "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\n"
            "LU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
            "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
            "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n"
            "should be replaced with\n"
            "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")


def lu_singular(name: str, info: int, batch: int | None) -> str:
    where = "" if batch is None else f"(Batch element {batch}): "
    return (f"{name}: {where}U[{info},{info}] is zero and using it on lu_solve would result in "
            "a division by zero. If you still want to perform the factorization, consider "
            "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


LU_NO_PIVOT_NOT_MODELLED = "reference_engine: LU without pivoting (pivot=False) is not modelled"
LU_UNPACK_PARTS_NOT_MODELLED = ("reference_engine: lu_unpack with unpack_data or unpack_pivots "
                                "False is not modelled")


# BatchLinearAlgebra.cpp linalg_lu_solve's checks and lu_solve's TORCH_WARN_ONCE
def lu_solve_dtypes(lu: str, b: str) -> str:
    return (f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
            f"{lu} and B of type {b} instead")


def lu_solve_deprecated() -> str:
    return ("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed "
            "in a future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments "
            "reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = "
            "torch.linalg.lu_solve(LU, pivots, B)")


# LinearAlgebra.cpp linalg_tensorinv and linalg_tensorsolve's checks
def tensorinv_ind(ind: int) -> str:
    return f"Expected a strictly positive integer for 'ind', but got {ind}"


def tensorinv_shapes(end: int, start: int) -> str:
    return ("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            f"prod(self.shape[:ind]), but got {end} != {start}")


def tensorsolve_shapes(result: int, other: int) -> str:
    return ("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
            f"prod(self.shape[:other.ndim]), but got {result} != {other}")


# Itertools.cpp combinations' checks
def combinations_not_vector(shape: list[int]) -> str:
    return f"Expect a 1D vector, but got shape [{', '.join(map(str, shape))}]"


def combinations_negative(r: int) -> str:
    return f"Expect a non-negative number, but got {r}"


# ---- lead28 ------------------------------------------------------------------------------
def arg_extreme_bool(name: str) -> str:   # ReduceOps.cpp argmax_out / argmin_out
    return f"{name}(): does not support bool input"


# ---- h28ops (issue 24): spectral decompositions (ops/spectral.py) ----
# BatchLinearAlgebra.cpp linalg_svd's driver check, svd's (torch.svd's) dimension check,
# checkUplo; LinearAlgebra.cpp linalg_cond's
SVD_DRIVER_CUDA_ONLY = ("torch.linalg.svd: keyword argument `driver=` is only supported on "
                        "CUDA inputs with cuSOLVER backend.")
COND_AT_LEAST_2D = "linalg.cond: The input tensor must have at least 2 dimensions."
COND_ORDER_NOT_MODELLED = ("reference_engine: linalg.cond's orders other than None, 2 and -2 "
                           "(matrix norms of A and of its inverse) are not modelled")


def svd_at_least_2d(ndim: int) -> str:
    return (f"linalg.svd: input should have at least 2 dimensions, but has {ndim} dimensions "
            "instead")


def eigh_uplo(uplo: str) -> str:
    return f"Expected UPLO argument to be 'L' or 'U', but got {uplo}"


# BatchLinearAlgebra.cpp linalg_lstsq's checks
LSTSQ_INPUT_2D = "torch.linalg.lstsq: input must have at least 2 dimensions."
LSTSQ_OTHER_1D = "torch.linalg.lstsq: other must have at least 1 dimension."
LSTSQ_DIMS = ("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
              "(input.dim() - other.dim()) <= 1")
LSTSQ_DRIVER = ("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, "
                "gelss)")
LSTSQ_FLOAT_DOUBLE = "This function doesn't handle types other than float and double"


def lstsq_dtypes(input_dtype: str, other_dtype: str) -> str:
    return ("torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
            f"input's dtype {input_dtype} and other's dtype {other_dtype}")


def lstsq_rows(vector: bool) -> str:
    return f"torch.linalg.lstsq: input.size(-2) should match other.size({-1 if vector else -2})"


# ---- h28cov -------------------------------------------------------------------------------
# python_variable.cpp: deleting a tensor's attributes (`del x.data` and the others refused;
# `del x.grad` resets the grad). requires_grad's setter refuses the missing value as a
# non-bool.
DELETE_DATA = "Deleting tensor data is not allowed. Delete tensor instead!"
DELETE_REQUIRES_GRAD = "requires_grad must be a bool"
DELETE_GRAD_FN = "Deletion of _grad_fn not allowed. Detach tensor instead!"
DELETE_BACKWARD_HOOKS = "Deletion of _backwards_hooks not allowed!"


# ---- h28nnf (issue 24): F.pad's modes, pooling, convolution, distances ----
def pad_mode_unrecognised(mode: str) -> str:
    """torch/csrc/api/.../PadNd's mode parsing (NotImplementedError)."""
    return f"Unrecognised padding mode {mode}"


def pad_mode_value(mode: str) -> str:
    """PadNd.cpp _pad_enum."""
    return f'Padding mode "{mode}" doesn\'t take in value argument'


def pad_not_supported(length: int, ndim: int) -> str:
    """F.pad of a mode but 'constant' with a padding length its rank has no kernel for
    (NotImplementedError)."""
    return f"Padding size {length} is not supported for {ndim}D input tensor."


def pad_input_dims(k: int, shape: list[int]) -> str:
    """Padding.h check_valid_input."""
    return (f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: [{', '.join(map(str, shape))}]")


def reflect_pad_too_large(argument: int, before: int, after: int, dim: int,
                          shape: list[int]) -> str:
    """ReflectionPad.cpp."""
    return (f"Argument #{argument}: Padding size should be less than the corresponding input "
            f"dimension, but got: padding ({before}, {after}) at dimension {dim} of input "
            f"[{', '.join(map(str, shape))}]")


def pad_output_too_small(size: int, out: int) -> str:
    """ReflectionPad.cpp / ReplicationPadding.cpp, 1-d."""
    return f"input (W: {size}) is too small. Calculated output W: {out}"


def pad_output_empty_not_modelled(mode: str) -> str:
    """The engine's own: torch's 2-d and 3-d texts for an empty output differ by kernel."""
    return (f"reference engine: F.pad mode '{mode}' with a 2-d or 3-d padding that leaves an "
            "empty output is not modelled")


def cdist_compute_mode(mode: str) -> str:
    """torch/functional.py cdist (ValueError)."""
    return f"{mode} is not a valid value for compute_mode"


def cdist_dims(name: str, ndim: int) -> str:
    """Distance.cpp cdist."""
    return f"cdist only supports at least 2D tensors, {name} got: {ndim}D"


def cdist_columns(c1: int, c2: int) -> str:
    """Distance.cpp cdist."""
    return f"X1 and X2 must have the same number of columns. X1: {c1} X2: {c2}"


def cdist_dtype(scalar_name: str) -> str:
    """Distance.cpp cdist_impl."""
    return f"cdist only supports floating-point dtypes, X1 got: {scalar_name}"


CDIST_NEGATIVE_P = "cdist only supports non-negative p values"   # Distance.cpp cdist_impl


def pdist_dims(ndim: int) -> str:
    """Distance.cpp pdist."""
    return f"pdist only supports 2D tensors, got: {ndim}D"


PDIST_DTYPE = "pdist only supports floating-point dtypes"   # Distance.cpp pdist
PDIST_NEGATIVE_P = "pdist only supports non-negative p values"   # Distance.cpp pdist


# ReduceOps.cpp pre_check_gradient and gradient_helper (torch.gradient)
def gradient_spacing_no_dim(ndim: int, length: int) -> str:
    return ("torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {ndim}', since dim argument was not given, but got a list "
            f"of length {length}")


def gradient_spacing_dim(spacing: int, dim: int) -> str:
    return ("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
            f"dim arguments to have the same length, but got a spacing argument of length "
            f"{spacing} and a dim argument of length {dim}.")


GRADIENT_EDGE_ORDER = "torch.gradient only supports edge_order=1 and edge_order=2."
GRADIENT_DIM_SIZE = ("torch.gradient expected each dimension size to be at least "
                     "edge_order+1")


def gradient_coordinate_dims(ndim: int) -> str:
    return ("torch.gradient expected each element of spacing to have one dimension, but got "
            f"an element with {ndim} dimensions!")


# AveragePool2d.cpp / AveragePool3d.cpp / Pool.h / AdaptiveAveragePooling*.cpp (pooling)
_COUNT_WORDS = {2: "two", 3: "three"}


def pool_tuple(op: str, name: str, k: int) -> str:
    if name == "stride":
        return (f"{op}: stride must either be omitted, a single int, or a tuple of "
                f"{_COUNT_WORDS[k]} ints")
    either = "either " if k == 2 else ""
    return f"{op}: {name} must {either}be a single int, or a tuple of {_COUNT_WORDS[k]} ints"


POOL_DIVISOR_ZERO = "divisor must be not zero"
POOL3D_INPUT = "non-empty 4D or 5D (batch mode) tensor expected for input"


def pool_pad_negative(pad: int) -> str:
    return f"pad must be non-negative, but got pad: {pad}"


def pool_pad_half(pad: int, kernel: int) -> str:
    return (f"pad should be at most half of effective kernel size, but got pad={pad}, "
            f"kernel_size={kernel} and dilation=1")


def pool2d_input(shape: list[int]) -> str:
    return ("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got:[{', '.join(map(str, shape))}]")


def pool_output_small(planes: int, sizes: list[int], out: list[int]) -> str:
    return (f"Given input size: ({'x'.join(map(str, [planes, *sizes]))}). Calculated output "
            f"size: ({'x'.join(map(str, [planes, *out]))}). Output size is too small")


def pool1d_argument(op: str, name: str, got: int) -> str:
    """The argument parser's check of an int[1] argument."""
    return f"{op}() argument '{name}' should contain one int (got {got})"


def pool1d_dims(op: str, ndim: int) -> str:
    """checkDimRange (TensorUtils.cpp)."""
    return (f"Expected 2 to 3 dimensions, but got {ndim}-dimensional tensor for argument #1 "
            f"'self' (while checking arguments for {op})")


def adaptive_output_size(op: str, k: int) -> str:
    return f"{op}: output_size must be {k}"


def adaptive_negative(op: str, sizes: list[int]) -> str:
    # (the 3-d text has no space before its third size, as ATen writes it)
    shown = ", ".join(map(str, sizes[:2])) + ("," + str(sizes[2]) if len(sizes) > 2 else "")
    return (f"{op}: elements of output_size must be greater than or equal to 0 but received "
            f"{{{shown}}}")


def adaptive_input_dims(at_least: int) -> str:
    """F.adaptive_avg_pool{2,3}d's _list_with_default (ValueError)."""
    return f"Input dimension should be at least {at_least}"


def pool_input_not_modelled(op: str) -> str:
    """The engine's own: an adaptive pooling's input of another rank or an empty plane."""
    return f"reference engine: {op} of this input's shape is not modelled"


# Im2Col.cpp / im2col_shape_check (F.unfold)
def im2col_pair(name: str, got: int) -> str:
    return f"It is expected {name} equals to 2, but got size {got}"


def im2col_argument(check: str, what: str, pair: tuple[int, int]) -> str:
    """kernel size / dilation should be greater than zero, padding non-negative, ..."""
    first, second = {"kernel size": ("kernel_height", "kernel_width"),
                     "dilation": ("dilation_height", "dilation_width"),
                     "padding": ("pad_height", "pad_width"),
                     "stride": ("stride_height", "stride_width")}[what]
    return f"{what} should be {check}, but got {first}: {pair[0]} {second}: {pair[1]}"


def im2col_input(shape: list[int]) -> str:
    return ("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
            f"non-zero dimensions for input, but got: [{', '.join(map(str, shape))}]")


def im2col_too_small(size: list[int], kernel: tuple[int, int], dilation: tuple[int, int],
                     padding: tuple[int, int], blocks: list[int]) -> str:
    def pair(p: Sequence[int]) -> str:
        return f"({p[0]}, {p[1]})"
    return (f"Given input with spatial size {pair(size)}, kernel_size={pair(kernel)}, "
            f"dilation={pair(dilation)}, padding={pair(padding)}, calculated shape of the "
            f"array of sliding blocks as {pair(blocks)}, but its components must be at least "
            "one.")


def adaptive_max_output_size(op: str, k: int) -> str:
    """AdaptiveMaxPooling2d.cpp / 3d's meta check."""
    return f"{op}(): internal error: output_size.size() must be {k}"


def negative_dimension(dim: int, shape: list[int]) -> str:
    """The empty tensor factory's check (EmptyTensor.cpp)."""
    return (f"Trying to create tensor with negative dimension {dim}: "
            f"[{', '.join(map(str, shape))}]")


def local_response_norm_dims(dim: int) -> str:
    """F.local_response_norm (ValueError; the spaces are torch's source's indentation)."""
    return (f"Expected 3D or higher dimensionality{' ' * 26}input (got {dim} dimensions)")


# ---- h27gen ------------------------------------------------------------------------------

def output_broadcast(output: tuple[int, ...], shape: tuple[int, ...]) -> str:
    """TensorIterator's check of an output (an out= or in-place result, or a kernel's
    preallocated one: soft_margin_loss's) against the broadcast shape of the inputs."""
    return (f"output with shape {list(output)} doesn't match the broadcast shape "
            f"{list(shape)}")


# aten/src/ATen/native/TensorAdvancedIndexing.cpp, index_copy's meta function (an IndexError,
# then a RuntimeError naming the slices, each a space-separated vector)
def index_copy_dims(source: int, destination: int) -> str:
    return ("index_copy_(): When source and destination are not scalars, their dimensionality "
            f"must match. Source dimensionality ({source}), destination dimensionality "
            f"({destination})")


def index_copy_slices(destination: Sequence[int], dim: int, source: Sequence[int]) -> str:
    return ("index_copy_(): Source/destination tensor must have same slice shapes. Destination "
            f"slice shape: {' '.join(map(str, destination))} at dimension {dim} and source "
            f"slice shape: {' '.join(map(str, source))} at dimension 0.")


# torchgen's generated VariableType code for an op whose derivatives.yaml entry has no
# result formula (index_reduce): a longer text than fwad_not_implemented's
def fwad_no_formula(name: str) -> str:
    return (f"Trying to use forward AD with {name} that does not support it because it has not "
            "been implemented yet.\nPlease file an issue to PyTorch at "
            "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that "
            "we can prioritize its implementation or submit a PR adding the implementation to "
            "derivatives.yaml")


# ---- h28gen -------------------------------------------------------------------------------

# aten/src/ATen/ExpandUtils.cpp inferExpandGeometry: fewer sizes than the tensor has dims
def expand_too_few_sizes(type_string: str, shape: list[int], sizes: list[int]) -> str:
    return (f"expand({type_string}{{{shape}}}, size={sizes}): the number of sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(shape)})")


# ---- h29ops2 (issue 24): feature_alpha_dropout, margin losses, attention, Householder ----

# torch/nn/functional.py's dropout functions (a ValueError), and ATen's make_feature_noise
def dropout_probability(p: float) -> str:
    return f"dropout probability has to be between 0 and 1, but got {p}"


FEATURE_DROPOUT_DIMS = "Feature dropout requires at least 2 dimensions in the input"


# torch/csrc/autograd/autograd_not_implemented_fallback.cpp: the NotImplemented node of an op
# without a derivatives.yaml entry (multi_margin_loss_backward), raised in backward
def no_derivative_for(op: str) -> str:
    return f"derivative for {op} is not implemented"


# torch/nn/functional.py multi_margin_loss and triplet_margin_loss (ValueErrors)
MULTI_MARGIN_P = "only p == 1 and p == 2 supported"
MARGIN_WEIGHT_DIM = "weight must be one-dimensional"


def triplet_margin(margin: float) -> str:
    return f"margin must be greater than 0, got {margin}"


# ATen's LossMultiMargin.cpp / LossMultiLabelMargin.cpp shape checks and Loss.cpp's
# triplet_margin_loss
def margin_loss_input(sizes: list[int]) -> str:
    return ("Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{sizes}")


def multi_margin_target(nframe: int, target: list[int], input: list[int]) -> str:
    return ("multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{nframe}], but got {target}. "
            f"Input has shape {input}.")


def margin_weight_size(dim: int, weight: list[int]) -> str:
    return f"inconsistent weight size, expected {dim} but got {weight}"


def multilabel_target(target: list[int], input: list[int]) -> str:
    return f"inconsistent target size: {target} for input of size: {input}"


def triplet_dims(a: int, p: int, n: int) -> str:
    return ("The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


# ---- h29ops (issue 24): interpolate and upsampling, batch and instance norm, grid_sample,
# embedding_bag, bilinear, prelu ----

# torch/nn/functional.py interpolate (ValueError, TypeError, NotImplementedError)
INTERPOLATE_ALIGN_CORNERS = ("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
INTERPOLATE_SIZE_AND_SCALE = "only one of size or scale_factor should be defined"
INTERPOLATE_SIZE_OR_SCALE = "either size or scale_factor should be defined"
INTERPOLATE_RECOMPUTE_WITH_SIZE = ("recompute_scale_factor is not meaningful with an explicit "
                                   "size.")
INTERPOLATE_ANTIALIAS = ("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")


def interpolate_size_dims(spatial: list[int], size: object) -> str:
    return ("Input and output must have the same number of spatial dimensions, but got input "
            f"with spatial dimensions of {spatial} and output size of {size}. Please provide "
            "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
            "format.")


def interpolate_scale_dims(spatial: list[int], scale_factor: object) -> str:
    return ("Input and scale_factor must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {spatial} and scale_factor of shape "
            f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
            "scale_factor in (s1, s2, ...,sK) format.")


def interpolate_size_types(types: list[type]) -> str:
    return ("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
            f"Tuple[int, int, int], but got size with types {types}")


def interpolate_rank(ndim: int, mode: str, needs: int) -> str:
    return f"Got {ndim}D input, but {mode} mode needs {needs}D input"


def interpolate_input(ndim: int, mode: str) -> str:
    return ("Input Error: Only 3D, 4D and 5D input Tensors supported"
            f" (got {ndim}D) for the modes: nearest | linear | bilinear | bicubic | trilinear "
            f"| lanczos | area | nearest-exact (got {mode})")


def interpolate_not_modelled(mode: str, antialias: bool) -> str:
    """The engine's own: the anti-aliasing kernels (_upsample_bilinear2d_aa, ...) and lanczos
    are not modelled."""
    return (f"reference engine: F.interpolate mode '{mode}' with antialias={antialias} is not "
            "modelled")


def upsample_deprecated(name: str) -> str:
    """F.upsample, F.upsample_nearest, F.upsample_bilinear (UserWarning)."""
    return f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead."


# aten/src/ATen/native/UpSample.cpp compute_output_size and UpSample.h's common checks
UPSAMPLE_SIZE_OR_SCALE = "Must specify exactly one of output_size and scale_factors"


def upsample_expected(name: str, k: int, got: int) -> str:
    return f"It is expected {name} equals to {k}, but got size {got}"


def upsample_sizes(spatial: list[int], sizes: list[int]) -> str:
    axes = "DHW"[3 - len(spatial):]
    inp = ", ".join(f"{a}: {n}" for a, n in zip(axes, spatial, strict=True))
    out = ", ".join(f"{a}: {n}" for a, n in zip(axes, sizes, strict=True))
    joint = " and output" if len(spatial) == 1 else " output"
    return (f"Input and output sizes should be greater than 0, but got input ({inp}){joint} "
            f"({out})")


def upsample_empty(k: int, shape: list[int]) -> str:
    return f"Non-empty {k + 2}D data tensor expected but got a tensor with sizes {shape}"


# torch/nn/functional.py batch_norm's _verify_batch_size, instance_norm's
# _verify_spatial_size (ValueError: they print the input's torch.Size)
def batch_norm_batch_size(size: Sequence[int]) -> str:
    return ("Expected more than 1 value per channel when training, got input size "
            f"torch.Size({list(size)})")


def instance_norm_spatial_size(size: Sequence[int]) -> str:
    return ("Expected more than 1 spatial element when training, got input size "
            f"torch.Size({list(size)})")


# aten/src/ATen/native/Normalization.cpp _batch_norm_impl_index, instance_norm
def batch_norm_undefined(name: str) -> str:
    return f"{name} must be defined in evaluation mode"


def batch_norm_features(name: str, expected: int, actual: int) -> str:
    return f"{name} should contain {expected} elements not {actual}"


INSTANCE_NORM_RUNNING_STATS = ("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")


# aten/src/ATen/native/Activation.cpp prelu
PRELU_ZERO_DIM = "Not allow zero-dim input tensor."


def prelu_channels(weights: int, channels: int) -> str:
    return ("Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{weights} and channel size = {channels}.")


def prelu_weight_dims(ndim: int) -> str:
    return f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {ndim}"


def prelu_promotion(a: str, b: str) -> str:
    """ScalarType names (Float, Double)."""
    return f"prelu: Type promoting not supported. Got {a} and {b}"


# aten/src/ATen/native/Linear.cpp bilinear
def bilinear_dims(a: int, b: int) -> str:
    return f"bilinear(): input dimensions do not match: got {a} and {b}"


def bilinear_batch(a: int, b: int) -> str:
    return f"bilinear(): input batch dimensions do not match: got {a} and {b}"


def bilinear_weight(k: int, got: int, expected: int) -> str:
    return (f"bilinear(): input{k} size does not match weight size: got {got} but expected "
            f"{expected}")


def bilinear_bias(got: int, expected: int) -> str:
    return f"bilinear(): bias size does not match weight size: got {got} but expected {expected}"


# ---- h29conv (issue 24): convolution (Convolution.cpp), max pooling (Pool.h) ----
CONV_WEIGHT_DIMS = "weight should have at least three dimensions"
CONV_GROUPS = "non-positive groups is not supported"
CONV_PADDING_NEGATIVE = "negative padding is not supported"
CONV_OUTPUT_PADDING_NEGATIVE = "negative output_padding is not supported"
CONV_STRIDE = "non-positive stride is not supported"
CONV_DILATION = "dilation should be greater than zero"
CONV_WEIGHT_DIMS_SAME = "weight should have at least three dimensions"
CONV_SAME_STRIDED = "padding='same' is not supported for strided convolutions"
# convolution_same's TORCH_WARN_ONCE
CONV_SAME_EVEN_KERNEL = ("Using padding='same' with even kernel lengths and odd dilation may "
                         "require a zero-padded copy of the input be created")


def _sizes(shape: Sequence[int]) -> str:
    return f"[{', '.join(map(str, shape))}]"


def conv_param_length(name: str, dim: int, values: Sequence[int]) -> str:
    """expand_param_if_needed."""
    return (f"expected {name} to be a single integer value or a list of {dim} values to "
            f"match the convolution dimensions, but got {name}={_sizes(values)}")


def conv_input_dims(weight: list[int], input: list[int]) -> str:
    """check_shape_forward: the input's rank against the weight's."""
    k = len(weight)
    return (f"Expected {k}-dimensional input for {k}-dimensional weight {_sizes(weight)}, "
            f"but got {len(input)}-dimensional input of size {_sizes(input)} instead")


def conv_same_input_dims(k: int, weight: list[int], input: list[int]) -> str:
    """convolution_same's own text of it (no space before the weight's size)."""
    return (f"Expected {k}-dimensional input for {k}-dimensional weight{_sizes(weight)}, "
            f"but got {len(input)}-dimensional input of size {_sizes(input)} instead")


def conv_same_broadcast(name: str, dim: int) -> str:
    return f"{name} cannot broadcast to {dim} dimensions"


def conv_weight_groups(groups: int, what: str, weight: list[int]) -> str:
    return (f"Given groups={groups}, expected weight to be {what} {groups} at dimension 0, "
            f"but got weight of size {_sizes(weight)} instead")


def conv_input_channels(given: str, weight: list[int], input: list[int], channels: int
                        ) -> str:
    return (f"Given {given}, weight of size {_sizes(weight)}, expected input{_sizes(input)} "
            f"to have {channels} channels, but got {input[1]} channels instead")


def conv_bias(given: str, weight: list[int], elements: int, bias: list[int]) -> str:
    """`given` is "" or "transposed=1, "."""
    return (f"Given {given}weight of size {_sizes(weight)}, expected bias to be 1-dimensional "
            f"with {elements} elements, but got bias of size {_sizes(bias)} instead")


def conv_kernel_too_large(padded: list[int], kernel: list[int]) -> str:
    return (f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater "
            "than actual input size")


def conv_batchify(dims: int, op: str, shape: list[int]) -> str:
    return (f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {op}, but got "
            f"input of size: {_sizes(shape)}")


def conv_bias_dtype(input: str, bias: str) -> str:
    return f"Input type ({input}) and bias type ({bias}) should be the same"


def conv_padding_string(padding: str) -> str:
    return f"Invalid padding string: '{padding}'"


def conv_output_padding(dims: int, p: Any) -> str:
    return "output padding must be smaller than either stride or dilation"


def max_unpool_index(index: int, plane: int) -> str:
    return f"Found an invalid max index: {index}"


def max_unpool_output_length(k: int, got: int) -> str:
    """F's _unpool_output_size (ValueError)."""
    return (f"output_size should be a sequence containing {k} or {k + 2} elements, but it has "
            f"a length of '{got}'")


def max_unpool_output_size(output_size: Any, d: int, low: int, high: int) -> str:
    return f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})'


def max_unpool_indices_dtype(name: str) -> str:
    return f"elements in indices should be type int64 but got: {name}"


def max_unpool_shapes(input: list[int], indices: list[int]) -> str:
    return (f"Expected shape of indices to be same as that of the input tensor "
            f"({_sizes(input)}) but got indices tensor with shape: {_sizes(indices)}")


def max_unpool_input(k: int, shape: list[int]) -> str:
    return (f"Input to max_unpooling{k}d should be a {k + 1}d or {k + 2}d Tensor, but got a "
            f"tensor with {len(shape)} dimensions.")


POOL_STRIDE_ZERO = "stride should not be zero"
POOL2D_RANK = "non-empty 3D or 4D (batch mode) tensor expected for input"


def max_pool_positive(what: str, values: Sequence[int]) -> str:
    """pool2d_shape_check / pool3d_shape_check (Pool.h): each value named by its axis."""
    axes = "HW" if len(values) == 2 else "THW"
    prefix = {"kernel size": "k", "stride": "d", "dilation": "dilation"}[what]
    shown = " ".join(f"{prefix}{a}: {v}" for a, v in zip(axes, values, strict=True))
    return f"{what} should be greater than zero, but got {shown}"


def max_pool_pad_half(pad: int, kernel: int, dilation: int) -> str:
    """pooling_output_shape (Pool.h): the padding against the dilated kernel's half."""
    return (f"pad should be at most half of effective kernel size, but got pad={pad}, "
            f"kernel_size={kernel} and dilation={dilation}")


def max_pool_pad_kernel_half(kernel: list[int], pads: list[int]) -> str:
    """pool2d_shape_check / pool3d_shape_check: the padding against the kernel's half."""
    if len(kernel) == 2:
        return ("pad should be smaller than or equal to half of kernel size, but got "
                f"padW = {pads[1]}, padH = {pads[0]}, kW = {kernel[1]}, kH = {kernel[0]}")
    return ("pad should be smaller than or equal to half of kernel size, but got "
            f"kT: {kernel[0]} kW: {kernel[2]} kH: {kernel[1]} padT: {pads[0]} "
            f"padW: {pads[2]} padH: {pads[1]}")


def max_pool3d_empty(shape: list[int]) -> str:
    """pool3d_shape_check (it prints the zero length where its text says the dimension)."""
    return ("max_pool3d_with_indices_out_cpu_template(): Expected input's non-batch "
            f"dimensions to have positive length, but input has a shape of {_sizes(shape)} "
            "and non-batch dimension 0 has length zero!")


def max_pool1d_input(shape: list[int]) -> str:
    return ("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{_sizes(shape)}")


def max_pool1d_argument(text: str) -> str:
    """check_max_pool1d (MaxPooling.cpp)."""
    return f"max_pool1d() {text}"


# ---- h30ops (issue 24): aten's slice, grid sampling, embedding_bag, Householder products ----
# TensorShape.cpp, slice
SLICE_STEP_NOT_POSITIVE = "slice step must be positive"


def aten_call_not_modelled(op: str) -> str:
    """The engine's own: an aten overload it has no forward for (ops/aten.py)."""
    return (f"reference_engine models calling {op} only for the registry's aten-only rows "
            "(registry.ATEN_ONLY); call the op through torch.<name> or Tensor.<name>")


# torch/nn/functional.py linear_cross_entropy (RuntimeErrors)
def linear_cross_entropy_input_dims(ndim: int) -> str:
    return f"expected input with dimensionality 1 or 2, got {ndim}"


def linear_cross_entropy_weight_dims(ndim: int) -> str:
    return f"expected linear_weight with dimensionality at least 2, got {ndim}"


def linear_cross_entropy_in_features(a: int, b: int) -> str:
    return ("expected equal input and linear_weight last dimensions (in_features), "
            f"got {a} and {b}, respectively")


def linear_cross_entropy_bias_shape(expected: tuple[int, ...], got: tuple[int, ...]) -> str:
    return f"expected linear_bias shape {expected}, got {got}"


def linear_cross_entropy_unbatched(weight: tuple[int, ...], in_features: int,
                                   input: tuple[int, ...]) -> str:
    return (f"K-dimensional loss defined by linear_weight shape {weight} requires batched "
            f"input, (N, {in_features}), got unbatched input with shape {input}")


LINEAR_CROSS_ENTROPY_PROB_IGNORE = ("ignore_index cannot be specified when target contains "
                                    "probabilities")
# the engine's own: the chunked path is a torch.library custom op (ops/linear_cross_entropy.py)
LINEAR_CROSS_ENTROPY_CHUNKED = ("reference_engine does not model linear_cross_entropy's "
                                "chunked path (options=LinearCrossEntropyOptions): pass "
                                "options=None, the reference implementation")


# torch/nn/functional.py embedding_bag (ValueErrors, and its NotImplementedError)
def embedding_bag_psw_shape(psw: list[int], input: list[int]) -> str:
    return (f"embedding_bag: If per_sample_weights (torch.Size({psw})) is not None, then it "
            f"must have the same shape as the input (torch.Size({input}))")


def embedding_bag_weight_dims(ndim: int) -> str:
    return f"weight has to be a 2D Tensor, but got Tensor of dimension {ndim}"


def embedding_bag_2d_offsets(kind: type) -> str:
    return ("if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
            f"of fixed length sequences. However, found offsets of type {kind}")


def embedding_bag_input_dims(ndim: int) -> str:
    return f"input has to be 1D or 2D Tensor, but got Tensor of dimension {ndim}"


def embedding_bag_psw_mode(mode: str) -> str:
    return ("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
            "on GitHub.")


EMBEDDING_BAG_OFFSETS_NONE = "offsets has to be a 1D Tensor but got None"
EMBEDDING_BAG_OFFSETS_1D = "offsets has to be a 1D Tensor"
EMBEDDING_BAG_MODE = "mode has to be one of sum, mean or max"
EMBEDDING_BAG_MAX_SCALE = "max mode does not support scaling the gradient by the frequency"
EMBEDDING_BAG_MAX_SPARSE = "max mode does not support sparse weights"
# the engine's own (ops/embedding_bag.py)
EMBEDDING_BAG_NOT_MODELLED = ("reference_engine does not model embedding_bag's max_norm (an "
                              "in-place renorm of weight), scale_grad_by_freq or sparse")


# ---- h31cov ------------------------------------------------------------------------------
# aten/src/ATen/native/RangeFactories.cpp linspace_out: TORCH_CHECK(steps >= 0, ...)
LINSPACE_NEGATIVE_STEPS = "number of steps must be non-negative"
# torch/utils/checkpoint.py (torch 2.13) _get_debug_context_and_cb: with debug=True (or
# set_checkpoint_debug_enabled(True)) a CheckpointError raised while unpacking becomes this,
# its {forward_traces}/{recompute_traces} each recorded operator's log line and Python stack,
# its {forward_ops}/{recompute_ops} the logs alone (LoggingTensorMode); the engine records no
# operator logs, and the traces compare the message with those sections normalised
# (conformance/case/classify.py normalise_text)
CHECKPOINT_DEBUG_TEMPLATE = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`.
Scroll all the way down for guidance on how to navigate these logs.

+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        1. Stack traces of the operators that ran in the original forward     |
+------------------------------------------------------------------------------+

{forward_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        2. Stack traces of the operators that ran during recomputation        |
+------------------------------------------------------------------------------+

{recompute_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|       3. Log of operators in the original forward and recomputation          |
+------------------------------------------------------------------------------+
(Scroll up to correlate stack traces with each operation listed below. This
 helps identify their source in the code.)

IMPORTANT: Differences in "detach" calls between the original forward and the
           recomputation are expected. They are introduced by the checkpointing
           mechanism and can be ignored.

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.

 To identify where the mismatch may be coming from, you can do the following:

 1) Compare the operators ran during original forward and recomputation to
    see where they differ. These operators are printed above in the order they
    were executed.

 2) Review the stack trace for each operator to locate its invocation source.
    Each operator's stack trace is printed in their execution order.

 Note that the logs can be quite long. Here's how they are structured:
 (Tip: you can Ctrl-f for these headers)

 1. Stack traces of the operators that ran in the original forward
 2. Stack traces of the operators that ran during recomputation
 3. Log of operators in the original forward and recomputation
 4. Error message                                             <--- You are here
--------------------------------------------------------------------------------
"""
CHECKPOINT_DEBUG_CONTEXT_FN = "debug=True is incompatible with non-default context_fn"


# ---- h31ops (issue 24): grid sampling ---------------------------------------------------------
# aten/src/ATen/native/GridSamplerUtils.h (check_grid_sampler_common, _2d, _3d)
def grid_sampler_batch(input: list[int], grid: list[int]) -> str:
    return ("grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {sizes(input)} and grid with sizes {sizes(grid)}")


def grid_sampler_last_dim(k: int, grid: list[int]) -> str:
    return (f"grid_sampler(): expected grid to have size {k} in last dimension, but got grid "
            f"with sizes {sizes(grid)}")


def grid_sampler_empty(input: list[int], dim: int) -> str:
    return ("grid_sampler(): expected input to have non-empty spatial dimensions, but input "
            f"has sizes {sizes(input)} with dimension {dim} being empty")


def grid_sampler_dims(ndim: int, input: list[int], grid: list[int]) -> str:
    return (f"grid_sampler(): expected {ndim}D input and grid with same number of dimensions, "
            f"but got input with sizes {sizes(input)} and grid with sizes {sizes(grid)}")


GRID_SAMPLER_BICUBIC_3D = "grid_sampler(): bicubic interpolation only supports 4D input"


# torch/nn/functional.py grid_sample
def grid_sample_mode(mode: str) -> str:
    return ("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'")


def grid_sample_padding_mode(mode: str) -> str:
    return ("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{mode}'")


GRID_SAMPLE_ALIGN_CORNERS = ("Default grid_sample and affine_grid behavior has changed to "
                             "align_corners=False since 1.3.0. Please specify "
                             "align_corners=True if the old behavior is desired. See the "
                             "documentation of grid_sample for details.")


# ---- h32ops (issue 24): as_strided_scatter, ... ----------------------------------------------
# aten/src/ATen/native/TensorShape.cpp as_strided_scatter (Note [as_strided_scatter backward
# support]): an internal assert, whose text names the file and line of the pinned torch's build
AS_STRIDED_SCATTER_NON_CONTIGUOUS = (
    "!self.requires_grad() || self.is_contiguous() INTERNAL ASSERT FAILED at "
    "\"/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp\":4754, please report a bug "
    "to PyTorch. "
    "as_strided_scatter is currently only supported for contiguous inputs")


# aten/src/ATen/native/LossCTC.cpp (ctc_loss's Tensor overload, ctc_loss_allocate_outputs)
def ctc_lengths_integral(name: str) -> str:
    return f"{name} must be integral"


def ctc_dim(ndim: int) -> str:   # checkDim (TensorUtils.cpp)
    return (f"Expected 3-dimensional tensor, but got {ndim}-dimensional tensor for argument #1 "
            "'log_probs' (while checking arguments for ctc_loss_allocate_outputs)")


def ctc_targets_size(dim: int, size: int, got: int, at_least: bool) -> str:   # checkSize
    return (f"Expected tensor to have size {'at least ' if at_least else ''}{size} at dimension "
            f"{dim}, but got size {got} for argument #2 'targets' (while checking arguments for "
            "ctc_loss_allocate_outputs)")


CTC_BLANK = "blank must be in label range"
CTC_INPUT_LENGTHS_SIZE = "input_lengths must be of size batch_size"
CTC_TARGET_LENGTHS_SIZE = "target_lengths must be of size batch_size"


def ctc_length_at_least(name: str, value: int) -> str:
    return (f"Expected {name} to have value at least 0, but got value {value} (while checking "
            "arguments for ctc_loss_allocate_outputs)")


def ctc_input_length_at_most(most: int, value: int) -> str:
    return (f"Expected input_lengths to have value at most {most}, but got value {value} "
            "(while checking arguments for ctc_loss_allocate_outputs)")


def take_along_dim_ranks(input_ndim: int, indices_ndim: int) -> str:
    """_take_along_dim_helper (TensorAdvancedIndexing.cpp), before the dim is wrapped."""
    return ("torch.take_along_dim(): input and indices should have the same number of "
            f"dimensions, but got {input_ndim} dimensions for input, and {indices_ndim} "
            "dimensions for indices")


# ---- h33ops (issue 24): Householder products ------------------------------------------------
# BatchLinearAlgebra.cpp, linalg_householder_product and ormqr's checks (RuntimeErrors)
def householder_at_least_2d(f_name: str, arg: str) -> str:
    return f"{f_name}: {arg} must have at least 2 dimensions."


HOUSEHOLDER_TALL = ("torch.linalg.householder_product: input.shape[-2] must be greater than "
                    "or equal to input.shape[-1]")
HOUSEHOLDER_TAU_COLUMNS = ("torch.linalg.householder_product: input.shape[-1] must be greater "
                           "than or equal to tau.shape[-1]")


def householder_tau_ndim(f_name: str, tau_ndim: int, input_ndim: int) -> str:
    return (f"{f_name}: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {tau_ndim} and input.ndim is equal to {input_ndim}")


def householder_batch(f_name: str, arg: str, got: list[int]) -> str:
    return (f"{f_name}: Expected batch dimensions of {arg} to be equal to input.shape[:-2], "
            f"but got {got}")


def householder_tau_dtype(tau: str, input: str) -> str:
    return (f"torch.linalg.householder_product: tau dtype {tau} does not match input dtype "
            f"{input}")


def ormqr_other_size(side: int) -> str:
    return f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]"


def ormqr_tau_size(side: int) -> str:
    return (f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], "
            "input.shape[-1])")


def ormqr_other_ndim(other_ndim: int, input_ndim: int) -> str:
    return ("torch.ormqr: Expected other to have the same number of dimensions as input, but "
            f"got other.ndim equal to {other_ndim} and input.ndim is equal to {input_ndim}")


def ormqr_dtype(arg: str, input: str, other: str) -> str:
    # (sic: no space after "dtype" before the input's)
    return (f"torch.ormqr: Expected input and {arg} to have the same dtype, but input has "
            f"dtype{input} and {arg} has dtype {other}")
# the engine's own (ops/attention.py)
SDPA_NOT_MODELLED = ("reference_engine does not model scaled_dot_product_attention's dropout "
                     "(dropout_p > 0: a Bernoulli mask from torch's generator), grouped-query "
                     "attention (enable_gqa=True) or query, key and value of differing or "
                     "non-floating dtypes")


# torch.autocast (torch/amp/autocast_mode.py), and the engine's limit of its CPU policy
# (reference_engine/autocast_mode.py)
def autocast_device_type_not_str(t: type) -> str:
    return f"Expected `device_type` of type `str`, got: `{t}`"


def autocast_unsupported_device(device_type: str) -> str:
    return f"User specified an unsupported autocast device_type '{device_type}'"


AUTOCAST_CUDA_NOT_AVAILABLE = "CUDA is not available or torch_xla is imported. Disabling autocast."
AUTOCAST_CPU_DTYPE_NOT_SUPPORTED = (
    "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
    "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.")


def autocast_policy_not_modelled(aten_name: str) -> str:
    return (f"reference_engine models CPU autocast's lower_precision_fp policy only: "
            f"{aten_name} is on its fp32 or promote list, which is not modelled")


# ---- h35cplx (issue 22): torch.tensor's Python numbers ----------------------------------------
# CPython's PyFloat_AsDouble, which torch/csrc/utils/python_numbers.h THPUtils_unpackDouble
# calls for each number torch.tensor stores into a floating dtype (a complex one included)
def must_be_real_number(type_name: str) -> str:
    return f"must be real number, not {type_name}"


# THPUtils_unpackLong: a Python int outside int64 stored into an integer dtype (a ValueError)
UNPACK_LONG_OVERFLOW = "Overflow when unpacking long long"


# ---- h36eng (issue 24): pow, linear, tensor creation -----------------------------------------
# aten/src/ATen/native/Pow.cpp, TORCH_META_FUNC2(pow, Tensor_Scalar): an integral (or bool)
# tensor to a negative integral Scalar (a RuntimeError; a tensor exponent gives 0 / ±1 instead)
POW_INTEGER_NEGATIVE_EXPONENT = "Integers to negative integer powers are not allowed."


# aten/src/ATen/native/TensorAdvancedIndexing.cpp: make_index_put_iterator (setitem with an
# advanced index, index_put; a tensor value is not cast), index_fill_ (Scalar and Tensor value)
def index_put_dtype(destination: str, source: str) -> str:
    return (f"Index put requires the source and destination dtypes match, got {destination} "
            f"for the destination and {source} for the source.")


INDEX_FILL_INDEX_DTYPE = "index_fill_(): Expected dtype int64 for index."
INDEX_FILL_COMPLEX_INTO_REAL = ("index_fill_(): Converting complex Scalar to non-complex type "
                                "is not supported")


def index_fill_value_dims(ndim: int) -> str:
    return ("index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{ndim} dimension(s).")


# --- Tensor.new_tensor and Tensor.type() (tensor_new.py): torch/csrc/utils/tensor_new.cpp
# new_tensor; python_variable_methods.cpp THPVariable_type; tensor_types.cpp
NEW_TENSOR_COPY_CONSTRUCT_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than "
    "tensor.new_tensor(sourceTensor).")
TENSOR_TYPE_ARGUMENT = "dtype must be a type, str, or dtype object"


def invalid_tensor_type(name: str) -> str:
    return f"invalid type: '{name}'"


# torch/csrc/utils/python_arg_parser.cpp FunctionSignature::parse, for the new_* methods'
# `size` (given by position or by name)
def argument_given_twice(function: str, name: str) -> str:
    return f"{function}() got multiple values for argument '{name}'"


def missing_size_argument(function: str) -> str:
    return f'{function}() missing 1 required positional arguments: "size"'


def unexpected_keyword(function: str, name: str) -> str:
    return f"{function}() got an unexpected keyword argument '{name}'"


# The legacy tensor classes' forms the engine does not model (legacy_tensor_types.py): never a
# silent result; not torch's texts (torch accepts these forms).
def legacy_constructor_keywords_not_modelled(cls: str, keywords: list[str]) -> str:
    return f"{cls}(...) with {keywords}: not modelled by the reference engine"


def legacy_constructor_arguments_not_modelled(cls: str, kinds: str) -> str:
    return (f"{cls}({kinds}): not modelled by the reference engine (a tensor or storage "
            "argument)")
