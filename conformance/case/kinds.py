"""Canonical error and warning kinds, each defined once by the patterns of torch's message.

Cases name an expected failure by kind (`raises("backward_twice")`), never by text: the text
drifts between torch releases while the behaviour does not. The patterns below match the
meaning of torch's message across releases; the exact text is compared separately, as a
stricter field, by the comparator. classify.py names a raised error or warning by this
table.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from conformance.case import api


@dataclass(frozen=True)
class Kind:
    name: str
    warning: bool
    patterns: tuple[str, ...]
    meaning: str
    # torch gives some warnings once per process (TORCH_WARN_ONCE) unless warn-always is
    # set. The harness runs every engine that has `set_warn_always` under it, so these are
    # compared as any warning; against an engine without it they are not compared (whether
    # one shows would depend on what ran before in the process), and `warns` of one holds.
    once: bool = False
    # For the Python errors no pattern names (a None where a tensor belongs): the exception
    # type that defines the kind when no message pattern matched.
    exception: str | None = None

    def matches(self, text: str) -> bool:
        return any(_compiled(p).search(text) for p in self.patterns)


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """A kind's pattern, compiled once: `re.search(pattern)` looks it up in re's own cache of
    512 patterns, which the other regular expressions of a run (torch's, the engine's)
    evict, and every classify then compiled its ~200 patterns again (38 ms a call in an
    OpInfo item's profile, conformance/opinfo/entry_check.py)."""
    return re.compile(pattern)


KINDS: tuple[Kind, ...] = (
    Kind("backward_twice", False,
         (r"Trying to backward through the graph a second time",),
         "a saved tensor was needed after the graph's buffers were freed"),
    Kind("saved_tensor_modified", False,
         (r"one of the variables needed for gradient computation has been modified by an "
          r"inplace operation",),
         "a tensor saved for backward was modified in place before backward used it"),
    Kind("view_of_leaf_inplace", False,
         (r"a view of a leaf Variable that requires grad is being used in an in-place",),
         "in-place operation on a view of a leaf that requires grad"),
    Kind("leaf_inplace", False,
         # "has been used" is mark_dirty's wording for the same rule
         (r"a leaf Variable that requires grad (is being|has been) used in an in-place",),
         "in-place operation on a leaf that requires grad"),
    Kind("multi_output_view_inplace", False,
         (r"is a view and (is being|its base or another view of its base has been) modified "
          r"inplace\. This view is the output of a function that returns multiple views",),
         "in-place on an output of unbind/split/chunk (a multi-output view)"),
    Kind("custom_function_view_inplace", False,
         (r"is a view and (is being|its base or another view of its base has been) modified "
          r"inplace\. This view was created inside a custom Function",),
         "in-place on a view returned by a custom Function"),
    Kind("no_grad_view_inplace", False,
         (r"A view was created in no_grad mode and (is being|its base or another view of its "
          r"base has been) modified inplace with grad mode enabled",
          # a view of such a view: the same rule, worded from the view's own grad_fn
          r"is a view of a view which was created in no_grad mode and (is being|its base or "
          r"another view of its base has been) modified inplace with grad mode enabled"),
         "a view made under no_grad (or its base) modified in place in grad mode"),
    Kind("once_differentiable_twice", False,
         (r"trying to differentiate twice a function that was marked with "
          r"@once_differentiable",),
         "differentiating the backward of a once_differentiable Function"),
    Kind("post_accumulate_hook_nonleaf", False,
         (r"post accumulate grad hooks cannot be registered on non-leaf tensors",),
         "register_post_accumulate_grad_hook on a non-leaf"),
    Kind("hook_bad_return", False,
         (r"hook '.*' has changed the (size|type) of value",
          r"expected (tuple|Variable|Tensor), but hook returned",
          r"has returned an incorrect number of values",
          r"can't replace a None gradient with a non-None value"),
         "a hook returned a value of the wrong type, shape or count"),
    Kind("non_differentiable_grad", False,
         (r"returned a gradient different than None at position",),
         "a Function's backward returned a grad for an input that cannot have one"),
    Kind("mark_dirty_not_returned", False,
         (r"Some elements marked as dirty during the forward method were not returned as "
          r"output",),
         "a custom Function marked an input dirty but did not return it"),
    Kind("mark_dirty_view_multiple_outputs", False,
         (r"If your Function modifies inplace an input that is a view of another Tensor, your "
          r"Function cannot return more than one Tensor",),
         "a custom Function marked a view input dirty and returned several tensors"),
    Kind("mark_dirty_view_not_input", False,
         (r"ctx\.mark_dirty\(\) received a tensor that was not an input",),
         "a custom Function marked dirty a view that is not one of its inputs"),
    Kind("post_accumulate_hook_returned", False,
         (r"post accumulate grad hooks should return None",),
         "a post-accumulate-grad hook returned a value"),
    Kind("detach_view_inplace", False,
         (r"Can't detach views in-place",),
         "detach_() on a view"),
    Kind("saved_tensor_detached", False,
         (r"Trying to use a saved tensor that has been detached",),
         "a backward needed a saved input that was detached in place since"),
    Kind("data_not_float", False,
         (r"data set to a tensor that requires gradients must be floating point",),
         "`.data = ` an integer tensor on a tensor that requires grad"),
    Kind("implicit_grad_nonscalar", False,
         (r"grad can be implicitly created only for scalar outputs",),
         "backward() without a gradient on a tensor with more than one element"),
    Kind("implicit_grad_not_real", False,
         (r"grad can be implicitly created only for real scalar outputs",),
         "backward() without a gradient on a complex scalar"),
    Kind("no_grad_fn", False,
         (r"does not require grad and does not have a grad_fn",),
         "backward or grad through a tensor that does not require grad"),
    Kind("grad_shape_mismatch", False,
         (r"Mismatch in shape: grad_output\[\d+\] has a shape of",),
         "the gradient passed to backward/grad does not match the output's shape"),
    Kind("batched_grad_shape_mismatch", False,
         (r"If `is_grads_batched=True`, we interpret the first dimension of each grad_output",),
         "autograd.grad(is_grads_batched=True) with a grad_output whose entries do not match "
         "the output's shape"),
    Kind("invalid_gradient", False,
         (r"returned an invalid gradient at index \d+",),
         "a backward function returned a gradient of the wrong shape, dtype or device"),
    Kind("wrong_number_of_gradients", False,
         (r"returned an incorrect number of gradients",),
         "a custom Function's backward returned the wrong number of gradients"),
    Kind("unused_input", False,
         (r"appears to not have been used in the graph",),
         "autograd.grad input not reached from the outputs, without allow_unused"),
    Kind("requires_grad_nonleaf", False,
         (r"you can only change requires_grad flags of leaf variables",),
         "requires_grad changed on a non-leaf tensor"),
    Kind("retain_grad_no_requires_grad", False,
         (r"can't retain_grad on Tensor that has requires_grad=False",),
         "retain_grad() on a tensor that does not require grad"),
    Kind("non_float_requires_grad", False,
         # the constructor says "Only", requires_grad_() and the setter "only"
         (r"[Oo]nly Tensors of floating point (and complex )?dtype can require gradients",
          r"Autograd not support dtype"),
         "requires_grad=True on an integer or bool tensor, or an op whose integer result "
         "would need a grad_fn (select_scatter of an integer self and a src requiring grad)"),
    Kind("hook_no_requires_grad", False,
         (r"cannot register a hook on a tensor that doesn't require gradient",),
         "register_hook on a tensor that does not require grad"),
    Kind("assigned_grad_mismatch", False,
         (r"assigned grad has data of a different (size|type)",
          r"assigned grad has data located on a different device",
          r"assigned grad expected to be",
          r"attempting to assign a gradient (of size|with dtype|located on device)"),
         "assigning a .grad whose shape, dtype or device differs from the tensor's"),
    Kind("grad_dtype_invalid", False,
         (r"grad_dtype can only be (accessed|set) on leaf tensors",
          r"Cannot set grad_dtype to .* because there is already a gradient",
          r"grad_dtype must be a torch.dtype or None"),
         "reading or setting grad_dtype of a non-leaf, or setting one that the existing "
         ".grad's dtype contradicts"),
    Kind("backward_empty_inputs", False,
         (r"`inputs` argument to `backward\(\)` cannot be empty",),
         "backward(inputs=[])"),
    Kind("input_no_requires_grad", False,
         (r"One of the differentiated Tensors does not require grad",),
         "autograd.grad with an input that does not require grad"),
    Kind("materialize_grads_needs_allow_unused", False,
         (r"Expected allow_unused to be True or not passed when materialize_grads=True",),
         "autograd.grad(materialize_grads=True, allow_unused=False)"),
    Kind("materialize_gradient_edge", False,
         (r"materialize_grads cannot be used when the given input is a GradientEdge",),
         "autograd.grad(materialize_grads=True) with an unreached GradientEdge input"),
    Kind("gradient_edge_no_grad", False,
         (r"It is not possible to get the gradient edge for a Tensor that does not require "
          r"gradients",),
         "get_gradient_edge of a tensor that does not require grad"),
    Kind("inference_tensor_in_autograd", False,
         (r"Inference tensors cannot be saved for backward",
          r"Inplace update to inference tensor outside InferenceMode is not allowed",
          r"Setting requires_grad=True on inference tensor outside InferenceMode is not "
          r"allowed",
          r"Inference tensors do not track version counter"),
         "an inference-mode tensor used where autograd must track it"),
    Kind("not_a_tensor", False,
         (r"all inputs have to be Tensors or GradientEdges, but got",
          r"Expected output to be a torch\.Tensor"),
         "autograd.grad given something other than a tensor among its outputs or inputs"),
    Kind("device_mismatch", False,
         (r"Expected all tensors to be on the same device",),
         "an operation mixed tensors on different devices"),
    Kind("dtype_mismatch", False,
         (r"expected m1 and m2 to have the same dtype",
          r"(self|mat1) and mat2 must have the same dtype",
          r"input tensors must have the same dtype",
          r"expected both vectors to have same dtype",
          r"expected scalar type \w+ but found \w+",
          r"self \(\w+\) and source \(\w+\) must have the same scalar type",
          r"self and source expected to have the same dtype",
          r"expected self and source to have same dtypes",
          r"Expected object of scalar type \w+ but got scalar type \w+ for second argument",
          r"expected dtype [\w ]+ for `(end|weight)` but got dtype",
          r"Expected x and y to have the same dtype",
          r"meshgrid expects all tensors to have the same dtype",
          r"Could not set tensor of type [\w ]+ to a tensor of type",
          r"Index put requires the source and destination dtypes match"),
         "a matrix product, or a scatter (index_add_, index_copy_, index_reduce_, put_, "
         "masked_scatter), or torch.complex/polar, or lerp, or meshgrid/cartesian_prod, of "
         "tensors of different dtypes (no type promotion there), or set_ to a tensor of another "
         "dtype"),
    Kind("shape_mismatch", False,
         (r"must match the size of tensor",
          r"shapes cannot be multiplied",
          r"must be a matrix",
          r"vector \+ matrix @ vector expected",
          r"size mismatch",
          r"shape '\[[\d, -]*\]' is invalid for input of size",
          r"inconsistent tensor size",
          r"Sizes of tensors must match",
          r"cannot be broadcast to indexing result of shape",
          r"The expanded size of the tensor \(\d+\) must match the existing size",
          r"the number of sizes provided \(\d+\) must be greater or equal to the number of "
          r"dimensions in the tensor",
          r"Expect a 1D vector, but got shape",
          r"is only supported on matrices",   # mT, mH, H, adjoint()
          r"should contain the same number of dims as destination",
          r"output with shape \[[\d, ]*\] doesn't match the broadcast shape",
          r"input and indices should have the same number of dimensions"),  # take_along_dim
         "operands of incompatible shapes (or of a rank the op refuses; movedim's source and "
         "destination of different lengths; an in-place op or an output whose operands "
         "broadcast past it; an expand to fewer dims than the tensor has)"),
    Kind("cuda_unavailable", False,
         (r"Torch not compiled with CUDA enabled", r"No CUDA GPUs are available",
          r"Found no NVIDIA driver"),
         "a CUDA tensor was requested where no CUDA device exists"),
    Kind("inference_view_inplace", False,
         (r"A view was created in inference mode and (is being|its base or another view of "
          r"its base has been) modified inplace in normal mode",
          # a view of such a view: the same rule, worded from the view's own grad_fn
          r"is a view of a view which was created in inference mode and (is being|its base or "
          r"another view of its base has been) modified inplace in normal mode"),
         "a view made in inference_mode (or its base) modified in place outside it"),
    Kind("own_grad_assignment", False,
         (r"can't assign Variable as its own grad",),
         "a tensor assigned as its own .grad"),
    # torch.autograd.functional (torch/autograd/functional.py)
    Kind("functional_not_tensor", False,
         (r"given to \w+ must be either a Tensor or a tuple of Tensors",),
         "an input, v or an output of the function given to torch.autograd.functional is not "
         "a Tensor or a tuple of Tensors"),
    Kind("functional_invalid_v", False,
         (r"v is a tuple of invalid length", r"The given v should contain a single Tensor",
          r"v has invalid size: should be", r"The vector v can only be None if"),
         "v of the wrong length or size for vjp/jvp/vhp/hvp, or left out where the "
         "function's input (output, for vjp) has more than one element"),
    Kind("functional_single_output", False,
         (r"The function given to \w+ should return a single Tensor",
          r"The Tensor returned by the function given to \w+ should contain a single element"),
         "hessian/vhp/hvp of a function that does not return one single-element Tensor"),
    Kind("functional_strict", False,
         (r"This is not allowed in strict mode",
          r"must be computed in a differentiable manner from the input when running in "
          r"strict mode"),
         "strict=True and an output, gradient, jacobian or hessian independent of an input"),
    Kind("functional_unsupported_options", False,
         (r"are not supported together", r"only implemented for `vectorize=True`"),
         "a combination of jacobian/hessian options torch does not support (strict with "
         "vectorize or forward-mode, create_graph with forward-mode, forward-mode without "
         "vectorize)"),
    Kind("functional_strategy", False,
         (r'Expected strategy to be either "forward-mode" or "reverse-mode"',),
         "jacobian's strategy or hessian's outer_jacobian_strategy is neither "
         '"forward-mode" nor "reverse-mode" (an AssertionError)'),
    Kind("grad_complex_mismatch", False,
         (r"both grad_output and output are required to have the same dtype",),
         "a gradient given for an output is complex and the output is not, or the reverse"),
    Kind("grad_complex_for_real_input", False,
         (r"input_is_complex == grad_is_complex\) to be true",),
         "a custom Function's backward returned a complex gradient for a real input (its "
         "real part is the backward's to take)"),
    Kind("complex_unsupported", False,
         (r"not implemented for 'Complex", r"not supported for complex",
          r"not implemented for complex tensors", r"does not support complex",
          r"not intended to support complex numbers", r"does not support complex input"),
         "an op that refuses complex tensors was given one (`<`, max, clamp, floor, sign, sort)"),
    Kind("scalar_overflow", False, (r"value cannot be converted to type .* without overflow",),
         "a number that does not fit the tensor's dtype (fill_, masked_fill_, float() or "
         "int() of a complex value with an imaginary part into a real dtype)"),
    Kind("complex_dtype_required", False,
         (r"imag is not implemented for tensors with non-complex dtypes",
          r"view_as_real is only supported for complex tensors",
          r"view_as_complex is only supported for",
          r"Expected both inputs to be Half, Float or Double tensors"),
         "an op that needs a complex tensor (imag, view_as_real) or real floating parts "
         "(view_as_complex, complex, polar) was given another dtype"),
    Kind("conj_view_unresolved", False,
         (r"doesn't work on unresolved conjugated tensors",),
         "view_as_real of a conj view (resolve_conj() first)"),
    Kind("dtype_not_implemented", False,
         (r'"\w+" not implemented for \'\w+\'',
          r"Expected a floating point or complex tensor as input",
          r"arg(max|min)\(\): does not support bool input",
          r"mean\(\): could not infer output dtype"),
         "a kernel run on a dtype it is not compiled for (an activation of an integer "
         "tensor: \"elu_cpu\" not implemented for 'Long'; linalg.vecdot of one; argmax of "
         "a bool tensor; mean of an integer tensor, or to an integer dtype=)"),
    Kind("python_type_error", False, (), "any other TypeError, e.g. a None where a tensor "
         "belongs", exception="TypeError"),
    Kind("python_assertion_error", False, (), "any other AssertionError raised by the engine",
         exception="AssertionError"),
    Kind("python_value_error", False, (), "any other ValueError", exception="ValueError"),
    Kind("python_overflow_error", False, (), "any OverflowError, e.g. int() of a tensor "
         "holding an infinity", exception="OverflowError"),
    Kind("python_index_error", False, (), "any other IndexError, e.g. an index out of range",
         exception="IndexError"),
    Kind("python_attribute_error", False, (), "any other AttributeError, e.g. `.zero_()` on a "
         ".grad that is None", exception="AttributeError"),
    # no pattern: the interpreter gives this kind to the very exception object a program's
    # `raise` raised (evaluate.statement_outcome), by identity, whatever its text
    Kind("case_raised", False, (), "the exception a `raise` statement of the case raised, "
         "arriving as it was raised (not wrapped or replaced by the engine)"),
    Kind("mark_dirty_not_input", True,
         (r"ctx\.mark_dirty\(\) received a tensor that was not an input",
          r"Only input Tensors should be given to ctx\.mark_dirty\(\)"),
         "a custom Function marked dirty a tensor that is not one of its inputs"),
    Kind("non_tuple_sequence_index", True,
         (r"Using a non-tuple sequence for multidimensional indexing is deprecated",),
         "indexing with a list that holds lists, slices, None or Ellipsis (read as a tuple)"),
    Kind("nonleaf_grad_access", True,
         (r"The \.grad attribute of a Tensor that is not a leaf Tensor is being accessed",),
         "reading .grad of a non-leaf tensor that does not retain its grad"),
    Kind("create_graph_reference_cycle", True,
         (r"Using backward\(\) with create_graph=True will create a reference cycle",),
         "backward(create_graph=True) with leaves that accumulate grads", once=True),
    Kind("tensor_T_deprecated", True,
         (r"The use of `x\.T` on tensors of dimension other than 2 to reverse their shape is "
          r"deprecated",
          r"Tensor\.T is deprecated on 0-D tensors"),
         "`x.T` on a tensor that is not 2-d (TensorShape.cpp numpy_T)", once=True),
    Kind("scalar_from_requires_grad", True,
         (r"Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
          r"behavior",),
         "float(x) in grad mode, or torch.tensor of a list holding such x, where x requires "
         "grad (python_variable_methods.cpp maybe_warn_requires_grad)", once=True),
    Kind("pack_hook_inplace", False,
         (r"A saved tensor pack hook is modifying its input in place",),
         "a saved-tensor pack hook modified the tensor it was given in place"),
    Kind("unpack_hook_not_tensor", False,
         (r"Output of saved tensor unpack_hook expected to be a Tensor",),
         "a saved-tensor unpack hook returned something other than a tensor"),
    Kind("saved_hooks_already_set", False,
         (r"Calling register_hooks on a saved tensor whose hooks have already been set",),
         "register_hooks a second time on one saved tensor"),
    Kind("saved_hooks_after_free", False,
         (r"Calling register_hooks on a saved tensor after it has been freed",),
         "register_hooks on a saved tensor that backward already freed"),
    Kind("saved_hooks_on_none", False,
         (r"Calling register_hooks on a saved tensor with value None is forbidden",),
         "register_hooks on a custom Function's saved None"),
    Kind("legacy_function_call", False,
         (r"Legacy autograd function with non-static forward method is deprecated",),
         "an instance of an autograd.Function called on inputs (the legacy style)"),
    Kind("function_instantiated", True,
         (r"should not be instantiated\. Methods on autograd functions are all static",),
         "an autograd.Function class instantiated (a DeprecationWarning)"),
    Kind("numpy_requires_grad", False,
         (r"Can't call numpy\(\) on Tensor that requires grad",),
         "Tensor.numpy() of a tensor that requires grad, grad mode on"),
    Kind("double_backward_unsupported", False,
         (r"Double backward is unsupported for",),
         "a double backward through an Error node torch's formula put where it has none "
         "(scatter_reduce/index_reduce prod with >1 zeros of src at one position)"),
    Kind("saved_tensors_read_twice", False,
         (r"saved_tensors can only be accessed once when clear_saved_tensors_on_access",),
         "a second read of saved_tensors of a Function with clear_saved_tensors_on_access"),
    # disable_saved_tensors_hooks raises the caller's own message; these are the messages of
    # torch's docstring example and of torch.func, the callers torch documents
    Kind("saved_tensor_hooks_disabled", False,
         (r"saved tensors default hooks are disabled",
          r"torch\.func\.\{grad, vjp, jacrev, hessian\} don't yet support saved tensor "
          r"hooks"),
         "saved-tensor hooks set inside disable_saved_tensors_hooks (or the reverse)"),
    Kind("grad_empty_inputs", False,
         # torch before 2.x raised a ValueError "grad requires non-empty inputs."
         (r"`inputs` argument to `grad\(\)` cannot be empty",
          r"grad requires non-empty inputs"),
         "autograd.grad(outputs, inputs=[])"),
    Kind("saved_variables_deprecated", True,
         (r"'saved_variables' is deprecated; use 'saved_tensors'",),
         "a custom Function's backward read ctx.saved_variables"),
    Kind("out_requires_grad", False,
         (r"functions with out=\.\.\. arguments don't support automatic differentiation",),
         "an op's out= form called in grad mode with an input or out that requires grad"),
    Kind("memory_overlap", False,
         (r"unsupported operation: (more than one element of the written-to tensor refers|"
          r"some elements of the input tensor and the written-to tensor refer) to a single "
          r"memory location",),
         "an in-place op writing a tensor whose elements share memory, or that partly shares "
         "memory with an input (x[1:].add_(x[:-1]))"),
    # forward-mode AD (torch.autograd.forward_ad)
    Kind("fwad_no_level", False,
         (r"Trying to create a dual Tensor for forward AD but no level exists",),
         "make_dual outside a dual level"),
    Kind("fwad_nested_level", False, (r"Nested forward mode AD is not supported",),
         "entering a dual level inside another"),
    Kind("fwad_exit_level", False,
         (r"Dual level must be a positive number",
          r"Trying to exit a forward AD level that was not the last one"),
         "exiting a dual level that is not the current one (or none at all)"),
    Kind("fwad_tangent_size", False,
         (r"Trying to set a forward gradient that has a different size",),
         "make_dual with a tangent of another shape than the primal"),
    Kind("fwad_already_dual", False,
         (r"Making a dual Tensor based on a Tensor that already has a forward gradient",
          r"Setting a forward grad that itself has a forward gradient at the same level"),
         "make_dual of a primal, or with a tangent, that has a tangent at that level"),
    Kind("fwad_not_floating", False,
         (r"Expected (primal|tangent) to be floating point or complex",),
         "make_dual of an integer primal or tangent"),
    Kind("fwad_out_function", False,
         (r"Trying to use forward AD with \w+ that does not support it because it is an "
          r"out= function",),
         "an op's out= form with a dual input or out"),
    Kind("fwad_not_implemented", False,
         (r"Trying to use forward AD with \w+ that does not support it because it has not "
          r"been implemented yet",
          r"You must implement the jvp function for custom autograd\.Function to use it "
          r"with forward mode AD"),
         "forward mode through an op (or a custom Function) without a forward formula"),
    Kind("vmap_no_batching_rule", False,
         (r"Batching rule not implemented for aten::\w+",),
         "an op vmap has no batching rule for, on a batched tensor (the repr of a dual tensor "
         "inside jacobian(strategy=\"forward-mode\", vectorize=True): aten::_unpack_dual; a "
         "batched tangent's item() or bool(): aten::item, aten::is_nonzero)"),
    # h37fwd
    Kind("tensor_without_storage", False,
         (r"Cannot access data pointer of Tensor that doesn't have storage",),
         "the data of a tensor without storage read (tolist() of vmap's batched tangent)"),
    Kind("tensor_copy_construct", True,
         (r"To copy construct from a tensor, it is recommended to use "
          r"sourceTensor\.detach\(\)\.clone\(\)",),
         "torch.tensor(t) or x.new_tensor(t) of a tensor t (tensor_new.cpp)"),
    Kind("derivative_not_implemented", False,
         (r"the derivative for '[^']+' is not implemented",),
         "backward through an input whose derivatives.yaml formula is not_implemented(...) "
         "(igamma's input)"),
    Kind("custom_function_no_forward", False,
         (r"You must implement the forward function for custom autograd\.Function",),
         "apply of a Function class that defines no forward (a NotImplementedError), such "
         "as torch.autograd.function.InplaceFunction"),
    Kind("custom_function_no_backward", False,
         (r"You must implement either the backward or vjp method for your custom "
          r"autograd\.Function to use it with backward mode AD",),
         "backward through a Function class that defines neither backward nor vjp (a "
         "NotImplementedError)"),
    Kind("custom_function_backward_and_vjp", False,
         (r"Implementing both 'backward' and 'vjp' for a custom Function is not allowed",),
         "backward through a Function class that defines both backward and vjp"),
    Kind("custom_function_jvp_output", False,
         (r"Function's jvp returned an invalid number of forward gradients",
          r"Function's jvp returned a gradient at position \d+, but +the corresponding forward "
          r"output is not a differentiable Tensor",
          r"An inplace custom Function is not modifying the forward mode gradients inplace",
          r"A custom Function's forward is returning a view \(or an input as-is\) but the jvp "
          r"is not returning a view",
          r"A custom Function is returning a view but the jvp is not returning a view of the "
          r"(given grad input|same base as the given grad input)"),
         "a custom Function's jvp returned the wrong number of tangents, a tangent for a "
         "non-differentiable output, or not the input's tangent (in place) or a view of it "
         "for an output that is an input or a view of one"),
    # h23cov (issue 23)
    Kind("resize_requires_grad", False, (r"cannot resize variables that require grad",),
         "resize_ or resize_as_ of a tensor that requires grad (outside inference mode)"),
)

# Anomaly mode, gradcheck and activation checkpointing (torch/autograd/anomaly_mode.py,
# engine.cpp, python_anomaly_mode.cpp, torch/autograd/gradcheck.py, torch/utils/checkpoint.py).
KINDS += (
    Kind("anomaly_nan", False,
         (r"Function '[^']*' returned nan values in its \d+th output",),
         "anomaly mode's NaN check: a backward node returned a NaN"),
    Kind("gradcheck_jacobian_mismatch", False,
         (r"Jacobian (computed with forward mode )?mismatch for output \d+ with respect to "
          r"input \d+",),
         "gradcheck: the analytical Jacobian differs from the numerical one"),
    Kind("gradcheck_not_reentrant", False,
         (r"Backward is not reentrant, i\.e\., running backward with same input and "
          r"grad_output multiple times gives different values",),
         "gradcheck: two backward runs with the same grad_output disagree"),
    Kind("gradcheck_no_input_requires_grad", False,
         (r"gradcheck expects at least one input tensor to require gradient",),
         "gradcheck given no input that requires grad"),
    Kind("gradcheck_stride_zero", False,
         (r"input has a dimension with stride 0\. gradcheck only supports inputs that are "
          r"non-overlapping",),
         "gradcheck given an expanded (overlapping) input"),
    Kind("gradcheck_nonzero_numerical", False,
         (r"Numerical gradient for function expected to be zero",),
         "gradcheck: no differentiable output, yet the outputs depend on the inputs"),
    Kind("gradcheck_backward_not_multiplied", False,
         (r"backward not multiplied by grad_output",),
         "gradcheck: backward with a zero grad_output gave a nonzero grad"),
    Kind("gradcheck_undefined_grad", False,
         (r"Expected backward function to handle undefined output grads",
          r"Expected all input grads to be undefined or zero when all output grads are "
          r"undefined or zero"),
         "gradcheck: backward fails (or is nonzero) for undefined output grads"),
    Kind("checkpoint_reentrant_grad", False,
         (r"When use_reentrant=True, torch\.utils\.checkpoint is incompatible with \.grad\(\)",),
         "reentrant checkpoint reached by autograd.grad or backward(inputs=...)"),
    Kind("checkpoint_no_output_requires_grad", False,
         (r"none of output has requires_grad=True, this checkpoint\(\) is not necessary",),
         "reentrant checkpoint's backward, whose recomputed outputs need no grad"),
    Kind("checkpoint_unpack_twice", False,
         (r"torch\.utils\.checkpoint: Unpack is being triggered for a tensor that was "
          r"already unpacked once",),
         "non-reentrant checkpoint: a saved tensor unpacked twice in one backward"),
    Kind("checkpoint_recomputation_mismatch", False,
         (r"torch\.utils\.checkpoint: A different number of tensors was saved during the "
          r"original forward and recomputation",
          r"torch\.utils\.checkpoint: trying to save more tensors during recomputation than "
          r"during the original forward pass",
          r"torch\.utils\.checkpoint: Recomputed values for the following tensors have "
          r"different metadata than during the forward pass"),
         "non-reentrant checkpoint: the recomputation saved other tensors than the forward"),
    # selective activation checkpointing (torch/utils/checkpoint.py)
    Kind("sac_op_list_not_overloads", False,
         (r"Expected op in `op_list` to be an OpOverload but got",),
         "create_selective_checkpoint_contexts given a list holding something other than an "
         "op overload (a number, `torch.ops.aten.sin` without its overload)"),
    Kind("sac_policy_type", False,
         (r"policy_fn_or_list must be either a function or a list of ops",),
         "create_selective_checkpoint_contexts given neither a function nor a list"),
    Kind("sac_cached_tensor_mutated", False,
         (r"Tensor cached during selective activation checkpoint has been mutated",),
         "selective checkpoint: an op output it saved was modified in place before the "
         "recomputation needed it"),
    Kind("sac_backward_extra_time", False,
         (r"Trying to backward an extra time\. You are only allowed to backward once on any "
          r"region computed under selective activation checkpoint",),
         "selective checkpoint: a second recomputation of a region (backward twice with "
         "retain_graph)"),
    Kind("allow_mutation_nested", False,
         (r"allow_mutation_on_saved_tensors contexts cannot be nested",),
         "allow_mutation_on_saved_tensors entered inside another"),
    Kind("allow_mutation_outside_context", False,
         (r"Trying to backward outside of the 'allow_mutation_on_saved_tensors' context",),
         "a saved tensor of an allow_mutation_on_saved_tensors graph unpacked outside that "
         "block (an AssertionError)"),
    Kind("complex_to_real_cast", True,
         (r"Casting complex values to real discards the imaginary part",),
         "a complex tensor copied into a real one (copy_, to(), float(), setitem)", once=True),
    Kind("anomaly_enabled", True, (r"Anomaly Detection has been enabled",),
         "detect_anomaly() made (its warning that anomaly mode is slow)"),
    Kind("anomaly_forward_trace", True,
         (r"Error detected in .*\. (Traceback of forward call that caused the error|No "
          r"forward pass information available)",
          r"Previous calculation was induced by .*\. Traceback of forward call that induced "
          r"the previous calculation"),
         "anomaly mode: a backward failed; the forward call that made the node (and the "
         "nodes whose backward made it), or that none was recorded"),
    Kind("gradcheck_not_double", True,
         (r"Input #\d+ requires gradient and is not a double precision floating point or "
          r"complex",),
         "gradcheck given an input that requires grad and is not float64 or complex128"),
    Kind("gradcheck_undefined_grad_check", True,
         (r"Backwards compatibility: New undefined gradient support checking feature is "
          r"enabled by default",),
         "gradcheck's undefined-grad check failed (warned before its error)"),
    Kind("checkpoint_use_reentrant_not_passed", True,
         (r"torch\.utils\.checkpoint(\.checkpoint_sequential)?: the use_reentrant parameter "
          r"should be passed explicitly",),
         "checkpoint or checkpoint_sequential called without use_reentrant"),
    Kind("volatile_removed", True,
         (r"volatile was removed \(Variable\.volatile is always False\)",),
         "reading a tensor's removed `volatile` attribute"),
    Kind("checkpoint_no_input_requires_grad", True,
         (r"None of the inputs have requires_grad=True\. Gradients will be None",),
         "reentrant checkpoint given no input that requires grad"),
)

# h28cov: `del` of a tensor's attributes (python_variable.cpp)
KINDS += (
    Kind("attribute_deletion_refused", False,
         (r"Deleting tensor data is not allowed", r"Deletion of _grad_fn not allowed",
          r"Deletion of _backwards_hooks not allowed"),
         "`del x.data`, `del x._grad_fn` or `del x._backward_hooks`"),
    Kind("requires_grad_not_bool", False, (r"requires_grad must be a bool",),
         "requires_grad set to a value that is not a bool, or deleted (`del x.requires_grad`)"),
)

# h31cov: checkpoint's debug mode (torch/utils/checkpoint.py _checkpoint_error_template)
KINDS += (
    Kind("checkpoint_debug_nondeterminism", False,
         (r"You are seeing this error because you passed `debug=True` to checkpoint",),
         "non-reentrant checkpoint with debug=True (or set_checkpoint_debug_enabled(True)): "
         "the recomputation saved other tensors than the forward"),
)

# h36eng: pow's NumPy compatibility check (aten/src/ATen/native/Pow.cpp)
KINDS += (
    Kind("integer_negative_power", False,
         (r"Integers to negative integer powers are not allowed",),
         "an integer or bool tensor to a negative integer number (`x ** -1`; a tensor of "
         "negative exponents gives 0 or ±1 instead)"),
    Kind("complex_scalar_into_real", False,
         (r"Converting complex Scalar to non-complex type is not supported",),
         "index_fill_ or index_fill of a complex value (a number or a 0-d tensor, even one "
         "with no imaginary part) into a tensor that is not complex"),
)

ERROR_KINDS: tuple[str, ...] = tuple(k.name for k in KINDS if not k.warning)
WARNING_KINDS: tuple[str, ...] = tuple(k.name for k in KINDS if k.warning)
ONCE_PER_PROCESS: frozenset[str] = frozenset(k.name for k in KINDS if k.once)
UNKNOWN = "unknown"
CASE_RAISED = "case_raised"
assert CASE_RAISED in ERROR_KINDS


def unknown_kind(kind: object, *, warning: bool) -> tuple[str, list[str]] | None:
    """None when `kind` names a known error (or warning) kind; otherwise the problem and the
    nearest known names. `raises`/`warns` are checked at load time (language) and, for a
    kind the parser could not see, when run (interpreter): one rule for both."""
    valid = WARNING_KINDS if warning else ERROR_KINDS
    if kind in valid:
        return None
    return (f"unknown {'warning' if warning else 'error'} kind {kind!r}",
            api.nearest(str(kind), set(valid)))
