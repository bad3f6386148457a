"""Samples of torch's error and warning texts, one or more for each kind of
conformance/case/kinds.py: MESSAGES (errors) and WARNINGS, kind -> text, read by
test_kinds.py."""

from __future__ import annotations

# Texts as torch 2.13 words them (and, where noted, as older releases did).
MESSAGES = {
    "backward_twice": "Trying to backward through the graph a second time (or directly access "
                      "saved tensors after they have already been freed). Saved intermediate "
                      "values of the graph are freed when you call .backward() or "
                      "autograd.grad(). Specify retain_graph=True if you need to backward "
                      "through the graph a second time or if you need to access saved tensors "
                      "after calling backward.",
    "saved_tensor_modified": "one of the variables needed for gradient computation has been "
                             "modified by an inplace operation: [torch.FloatTensor [2]], which "
                             "is output 0 of AddBackward0, is at version 1; expected version 0 "
                             "instead.",
    "leaf_inplace": "a leaf Variable that requires grad is being used in an in-place "
                    "operation.",
    "view_of_leaf_inplace": "a view of a leaf Variable that requires grad is being used in an "
                            "in-place operation.",
    "implicit_grad_nonscalar": "grad can be implicitly created only for scalar outputs",
    "grad_complex_for_real_input": "Expected isFloatingType(grad.scalar_type()) || "
    "(input_is_complex == grad_is_complex) to be true, but got false.",
    "grad_complex_mismatch": "For complex Tensors, both grad_output and output are required "
                             "to have the same dtype. Mismatch in dtype: grad_output[0] has a "
                             "dtype of torch.complex64 and output[0] has a dtype of "
                             "torch.float32.",
    "complex_unsupported": "\"lt_cpu\" not implemented for 'ComplexFloat'",
    "scalar_overflow": "value cannot be converted to type float without overflow",
    "complex_dtype_required": "view_as_real is only supported for complex tensors",
    "conj_view_unresolved": "view_as_real doesn't work on unresolved conjugated tensors.  To "
                            "resolve the conjugate tensor so you can view it as real, use "
                            "self.resolve_conj()",
    "implicit_grad_not_real": "grad can be implicitly created only for real scalar outputs "
                              "but got torch.complex64",
    "functional_not_tensor": "The inputs given to vjp must be either a Tensor or a tuple of "
                             "Tensors but the value at index 1 has type <class 'int'>.",
    "functional_invalid_v": "The vector v can only be None if the user-provided function "
                            "returns a single Tensor with a single element.",
    "functional_single_output": "The Tensor returned by the function given to hessian should "
                                "contain a single element",
    "functional_strict": "Output 0 of the user-provided function does not require gradients. "
                         "The outputs must be computed in a differentiable manner from the "
                         "input when running in strict mode.",
    "functional_unsupported_options": "torch.autograd.functional.jacobian: `strict=True` and "
                                      "`vectorized=True` are not supported together. Please "
                                      "either set `strict=False` or `vectorize=False`.",
    "functional_strategy": 'Expected strategy to be either "forward-mode" or "reverse-mode". '
                           'Hint: If your function has more outputs than inputs, "forward-mode" '
                           'tends to be more performant. Otherwise, prefer to use '
                           '"reverse-mode".',
    "no_grad_fn": "element 0 of tensors does not require grad and does not have a grad_fn",
    "grad_shape_mismatch": "Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) "
                           "and output[0] has a shape of torch.Size([]).",
    "invalid_gradient": "Function PowBackward0 returned an invalid gradient at index 0 - got "
                        "[3] but expected shape compatible with [2]",
    "wrong_number_of_gradients": "function MyReLUBackward returned an incorrect number of "
                                 "gradients (expected 1, got 2)",
    "unused_input": "The differentiated Tensor at index 1 appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior.",
    "requires_grad_nonleaf": "you can only change requires_grad flags of leaf variables. If you "
                             "want to use a computed variable in a subgraph that doesn't "
                             "require differentiation use var_no_grad = var.detach().",
    "retain_grad_no_requires_grad": "can't retain_grad on Tensor that has requires_grad=False",
    "non_float_requires_grad": "Only Tensors of floating point and complex dtype can require "
                               "gradients",
    "hook_no_requires_grad": "cannot register a hook on a tensor that doesn't require gradient",
    "assigned_grad_mismatch": "assigned grad has data of a different size",
    "grad_dtype_invalid": "grad_dtype can only be set on leaf tensors.",
    "device_mismatch": "Expected all tensors to be on the same device, but found at least two "
                       "devices, cuda:0 and cpu!",
    "shape_mismatch": "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x4)",
    "dtype_not_implemented": "\"elu_cpu\" not implemented for 'Long'",
    "cuda_unavailable": "Torch not compiled with CUDA enabled",
    "not_a_tensor": "all inputs have to be Tensors or GradientEdges, but got NoneType",
    "dtype_mismatch": "expected m1 and m2 to have the same dtype, but got: float != double",
    "backward_empty_inputs": "`inputs` argument to `backward()` cannot be empty.",
    "input_no_requires_grad": "One of the differentiated Tensors does not require grad",
    "materialize_grads_needs_allow_unused": "Expected allow_unused to be True or not passed "
                                            "when materialize_grads=True, but got: "
                                            "allow_unused=False.",
    "inference_tensor_in_autograd": "Inference tensors cannot be saved for backward. Please do "
                                    "not use Tensors created in inference mode in computation "
                                    "tracked by autograd.",
    "multi_output_view_inplace": "Output 0 of Unbind is a view and is being modified inplace. "
                                 "This view is the output of a function that returns multiple "
                                 "views. Such functions do not allow the output views to be "
                                 "modified inplace.",
    "custom_function_view_inplace": "Output 0 of MyFnBackward is a view and is being modified "
                                    "inplace. This view was created inside a custom Function "
                                    "(or because an input was returned as-is)",
    "no_grad_view_inplace": "A view was created in no_grad mode and its base or another view "
                            "of its base has been modified inplace with grad mode enabled. "
                            "Given that this use case is ambiguous and error-prone, it is "
                            "forbidden.",
    "once_differentiable_twice": "trying to differentiate twice a function that was marked "
                                 "with @once_differentiable",
    "post_accumulate_hook_nonleaf": "post accumulate grad hooks cannot be registered on "
                                    "non-leaf tensors",
    "hook_bad_return": "hook 'lambda' has changed the size of value",
    "non_differentiable_grad": "function MyFnBackward returned a gradient different than None "
                               "at position 2, but the corresponding forward input was not a "
                               "Variable",
    "mark_dirty_not_returned": "Some elements marked as dirty during the forward method were "
                               "not returned as output. The inputs that are modified inplace "
                               "must all be outputs of the Function.",
    "mark_dirty_view_multiple_outputs": "If your Function modifies inplace an input that is a "
                                        "view of another Tensor, your Function cannot return "
                                        "more than one Tensor. This is not supported by the "
                                        "current autograd engine.",
    "mark_dirty_view_not_input": "ctx.mark_dirty() received a tensor that was not an input. "
                                 "Only input Tensors that have been mutated should be passed "
                                 "to ctx.mark_dirty().",
    "batched_grad_shape_mismatch": "If `is_grads_batched=True`, we interpret the first "
                                   "dimension of each grad_output as the batch dimension. The "
                                   "sizes of the remaining dimensions are expected to match the "
                                   "shape of corresponding output, but a mismatch was detected: "
                                   "grad_output[0] has a shape of torch.Size([]) and output[0] "
                                   "has a shape of torch.Size([2, 2]). If you only want some "
                                   "tensors in `grad_output` to be considered batched, consider "
                                   "using vmap.",
    "post_accumulate_hook_returned": "Tensor post accumulate grad hooks should return None.",
    "detach_view_inplace": "Can't detach views in-place. Use detach() instead. If you are "
                           "using DistributedDataParallel (DDP) for training, and "
                           "gradient_as_bucket_view is set as True, gradients are views of "
                           "DDP buckets, and hence detach_() cannot be called on these "
                           "gradients.",
    "saved_tensor_detached": "Trying to use a saved tensor that has been detached in-place, "
                             "i.e. with .detach_().This is not supported, please use "
                             "out-of-place `.detach()` instead",
    "data_not_float": "data set to a tensor that requires gradients must be floating point or "
                      "complex dtype",
    "materialize_gradient_edge": "materialize_grads cannot be used when the given input is a "
                                 "GradientEdge",
    "gradient_edge_no_grad": "It is not possible to get the gradient edge for a Tensor that "
                             "does not require gradients",
    "pack_hook_inplace": "A saved tensor pack hook is modifying its input in place. Tensors "
                         "provided as input to pack hook cannot be modified by in-place "
                         "operations as this can lead to unexpected side-effects. Please open "
                         "an issue if you need to perform in-place operations on the input to "
                         "a pack hook.",
    "unpack_hook_not_tensor": "Output of saved tensor unpack_hook expected to be a Tensor but "
                              "got result of type int",
    "saved_hooks_already_set": "Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at a "
                               "time.",
    "saved_hooks_after_free": "Calling register_hooks on a saved tensor after it has been freed. "
                              "Saved intermediate values of the graph are freed when you call "
                              ".backward() or autograd.grad(). Specify retain_graph=True if you "
                              "need to backward through the graph a second time or if you need "
                              "to access saved variables after calling backward.",
    "saved_hooks_on_none": "Calling register_hooks on a saved tensor with value None is "
                           "forbidden",
    "legacy_function_call": "Legacy autograd function with non-static forward method is "
                            "deprecated. Please use new-style autograd function with static "
                            "forward method.",
    "numpy_requires_grad": "Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.",
    "double_backward_unsupported": "scatter_reduce(): Double backward is unsupported for src "
                                   "when >1 zeros in src are scattered to the same position "
                                   "in self",
    "saved_tensors_read_twice": "saved_tensors can only be accessed once when "
                                "clear_saved_tensors_on_access=True is set on the "
                                "autograd.Function. Either access saved_tensors only once, "
                                "or set clear_saved_tensors_on_access=False.",
    "saved_tensor_hooks_disabled": "saved tensors default hooks are disabled",
    "grad_empty_inputs": "`inputs` argument to `grad()` cannot be empty.",
    "out_requires_grad": "mul(): functions with out=... arguments don't support automatic "
                         "differentiation, but one of the arguments requires grad.",
    "fwad_no_level": "Trying to create a dual Tensor for forward AD but no level exists, make "
                     "sure to enter_dual_level() first.",
    "fwad_nested_level": "Nested forward mode AD is not supported at the moment",
    "fwad_exit_level": "Dual level must be a positive number.",
    "fwad_tangent_size": "Trying to set a forward gradient that has a different size than that "
                         "of the original Tensor, this is not supported. Tensor is of size [2] "
                         "while the given forward gradient is of size [3].",
    "fwad_already_dual": "Making a dual Tensor based on a Tensor that already has a forward "
                         "gradient at the same level 0 is not supported.",
    "fwad_not_floating": "Expected primal to be floating point or complex, but got: "
                         "torch.int64",
    "fwad_out_function": "Trying to use forward AD with add_out that does not support it "
                         "because it is an out= function",
    "fwad_not_implemented": "You must implement the jvp function for custom autograd.Function "
                            "to use it with forward mode AD.",
    "vmap_no_batching_rule": "Batching rule not implemented for aten::_unpack_dual; the "
                             "fallback path doesn't work on out= or view ops.",
    "derivative_not_implemented": "the derivative for 'igamma: input' is not implemented.",
    "tensor_without_storage": "Cannot access data pointer of Tensor that doesn't have storage",
    "custom_function_jvp_output": "A custom Function's forward is returning a view (or an "
                                  "input as-is) but the jvp is not returning a view.",
    "memory_overlap": "unsupported operation: some elements of the input tensor and the "
                      "written-to tensor refer to a single memory location. Please clone() the "
                      "tensor before performing the operation.",
    "inference_view_inplace": "A view was created in inference mode and is being modified "
                              "inplace in normal mode. Given that this use case is ambiguous "
                              "and error-prone, it is forbidden.",
    "own_grad_assignment": "can't assign Variable as its own grad",
    "resize_requires_grad": "cannot resize variables that require grad",
}
WARNINGS = {
    "tensor_copy_construct": "To copy construct from a tensor, it is recommended to use "
                             "sourceTensor.detach().clone() or sourceTensor.detach().clone()"
                             ".requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
    "function_instantiated": "<class 'x.Id'> should not be instantiated. Methods on autograd "
                             "functions are all static, so you should invoke them on the "
                             "class itself.",
    "create_graph_reference_cycle": "Using backward() with create_graph=True will create a "
                                    "reference cycle between the parameter and its gradient "
                                    "which can cause a memory leak.",
    "mark_dirty_not_input": "ctx.mark_dirty() received a tensor that was not an input. Only "
                            "input Tensors that have been mutated should be passed to "
                            "ctx.mark_dirty(). (Triggered internally at "
                            "/__w/pytorch/pytorch/torch/csrc/autograd/custom_function.cpp:320.)",
    "non_tuple_sequence_index": "Using a non-tuple sequence for multidimensional indexing is "
                                "deprecated and will be changed in pytorch 2.9; use "
                                "x[tuple(seq)] instead of x[seq].",
    "nonleaf_grad_access": "The .grad attribute of a Tensor that is not a leaf Tensor is being "
                           "accessed. Its .grad attribute won't be populated during "
                           "autograd.backward(). (Triggered internally at "
                           "/__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)",
    "saved_variables_deprecated": "'saved_variables' is deprecated; use 'saved_tensors'",
    "tensor_T_deprecated": "The use of `x.T` on tensors of dimension other than 2 to reverse "
                           "their shape is deprecated and it will throw an error in a future "
                           "release. Consider `x.mT` to transpose batches of matrices or "
                           "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the "
                           "dimensions of a tensor. (Triggered internally at "
                           "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)",
    "scalar_from_requires_grad": "Converting a tensor with requires_grad=True to a scalar may "
                                 "lead to unexpected behavior.\nConsider using tensor.detach() "
                                 "first. (Triggered internally at /__w/pytorch/pytorch/torch/"
                                 "csrc/autograd/generated/python_variable_methods.cpp:822.)",
}

# Anomaly mode, gradcheck and checkpoint, as torch 2.13 words them.
MESSAGES.update({
    "anomaly_nan": "Function 'DivBackward0' returned nan values in its 1th output.",
    "gradcheck_jacobian_mismatch": "Jacobian mismatch for output 0 with respect to input 0,\n"
                                   "numerical:tensor([[2.]])\nanalytical:tensor([[3.]])\n",
    "gradcheck_not_reentrant": "Backward is not reentrant, i.e., running backward with same "
                               "input and grad_output multiple times gives different values, "
                               "although analytical gradient matches numerical gradient.The "
                               "tolerance for nondeterminism was 0.0.",
    "gradcheck_no_input_requires_grad": "gradcheck expects at least one input tensor to require "
                                        "gradient, but none of them have requires_grad=True.",
    "gradcheck_stride_zero": "The 0th input has a dimension with stride 0. gradcheck only "
                             "supports inputs that are non-overlapping to be able to compute "
                             "the numerical gradients correctly.",
    "gradcheck_nonzero_numerical": "Numerical gradient for function expected to be zero",
    "gradcheck_backward_not_multiplied": "backward not multiplied by grad_output",
    "gradcheck_undefined_grad": "Expected backward function to handle undefined output grads. "
                                "Please look at \"Notes about undefined output gradients\" in "
                                "\"tools/autograd/derivatives.yaml\"",
    "checkpoint_reentrant_grad": "When use_reentrant=True, torch.utils.checkpoint is "
                                 "incompatible with .grad() or passing an `inputs` parameter to "
                                 ".backward().",
    "checkpoint_no_output_requires_grad": "none of output has requires_grad=True, this "
                                          "checkpoint() is not necessary",
    "checkpoint_unpack_twice": "torch.utils.checkpoint: Unpack is being triggered for a tensor "
                               "that was already unpacked once.",
    "checkpoint_recomputation_mismatch": "torch.utils.checkpoint: A different number of "
                                         "tensors was saved during the original forward and "
                                         "recomputation.\nNumber of tensors saved during "
                                         "forward: 3\n",
    "sac_op_list_not_overloads": "Expected op in `op_list` to be an OpOverload but got: 2 of "
                                 "type <class 'int'>. ",
    "sac_policy_type": "policy_fn_or_list must be either a function or a list of ops.",
    "sac_cached_tensor_mutated": "Tensor cached during selective activation checkpoint has "
                                 "been mutated",
    "sac_backward_extra_time": "Trying to backward an extra time. You are only allowed to "
                               "backward once on any region computed under selective "
                               "activation checkpoint.",
    "custom_function_no_forward": "You must implement the forward function for custom "
                                  "autograd.Function.",
    "custom_function_no_backward": "You must implement either the backward or vjp method for "
                                   "your custom autograd.Function to use it with backward "
                                   "mode AD.",
    "custom_function_backward_and_vjp": "Implementing both 'backward' and 'vjp' for a custom "
                                        "Function is not allowed. You should only implement "
                                        "one of them.",
    "allow_mutation_nested": "allow_mutation_on_saved_tensors contexts cannot be nested",
    "allow_mutation_outside_context": "Trying to backward outside of the "
                                      "'allow_mutation_on_saved_tensors' contextin which the "
                                      "graph was originally recorded.",
})
WARNINGS.update({
    "complex_to_real_cast": "Casting complex values to real discards the imaginary part",
    "anomaly_enabled": "Anomaly Detection has been enabled. This mode will increase the runtime "
                       "and should only be enabled for debugging.",
    "anomaly_forward_trace": "Error detected in DivBackward0. Traceback of forward call that "
                             "caused the error:\n  File \"/tmp/an.py\", line 9, in <module>\n"
                             "    z=(x/x)\n (Triggered internally at /__w/pytorch/pytorch/torch"
                             "/csrc/autograd/python_anomaly_mode.cpp:122.)",
    "gradcheck_not_double": "Input #0 requires gradient and is not a double precision floating "
                            "point or complex. This check will likely fail if all the inputs "
                            "are not of double precision floating point or complex. ",
    "gradcheck_undefined_grad_check": "Backwards compatibility: New undefined gradient support "
                                      "checking feature is enabled by default, but it may break "
                                      "existing callers of this function.",
    "checkpoint_use_reentrant_not_passed": "torch.utils.checkpoint: the use_reentrant parameter "
                                           "should be passed explicitly.",
    "volatile_removed": "volatile was removed (Variable.volatile is always False)",
    "checkpoint_no_input_requires_grad": "None of the inputs have requires_grad=True. Gradients "
                                         "will be None",
})
MESSAGES.update({
    "attribute_deletion_refused": "Deleting tensor data is not allowed. Delete tensor instead!",
    "requires_grad_not_bool": "requires_grad must be a bool",
    "checkpoint_debug_nondeterminism": " ERROR: Detected non-determinism while running "
                                       "activation checkpointing\n\n You are seeing this "
                                       "error because you passed `debug=True` to checkpoint "
                                       "and\n tensors to be saved",
})
MESSAGES.update({
    "integer_negative_power": "Integers to negative integer powers are not allowed.",
    "complex_scalar_into_real": "index_fill_(): Converting complex Scalar to non-complex type is "
                                "not supported",
})
