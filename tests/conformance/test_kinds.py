"""Error and warning kinds classify torch's own messages, and only their own."""

from __future__ import annotations

import pytest

from conformance.kinds import KINDS, UNKNOWN, classify, normalise_text

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
    "device_mismatch": "Expected all tensors to be on the same device, but found at least two "
                       "devices, cuda:0 and cpu!",
    "shape_mismatch": "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x4)",
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
    "inference_view_inplace": "A view was created in inference mode and is being modified "
                              "inplace in normal mode. Given that this use case is ambiguous "
                              "and error-prone, it is forbidden.",
    "own_grad_assignment": "can't assign Variable as its own grad",
}
WARNINGS = {
    "create_graph_reference_cycle": "Using backward() with create_graph=True will create a "
                                    "reference cycle between the parameter and its gradient "
                                    "which can cause a memory leak.",
    "nonleaf_grad_access": "The .grad attribute of a Tensor that is not a leaf Tensor is being "
                           "accessed. Its .grad attribute won't be populated during "
                           "autograd.backward(). (Triggered internally at "
                           "/__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)",
}


def test_every_kind_has_a_sample() -> None:
    by_type = {k.name for k in KINDS if k.exception}
    assert set(MESSAGES) | set(WARNINGS) | by_type == {k.name for k in KINDS}


def test_errors_no_pattern_names_are_classified_by_python_type() -> None:
    assert classify("'NoneType' object is not iterable", warning=False,
                    exception="TypeError") == "python_type_error"
    assert classify("assert x", warning=False,
                    exception="AssertionError") == "python_assertion_error"
    # a torch pattern wins over the type, and warnings are never classified by type
    assert classify("grad can be implicitly created only for scalar outputs", warning=False,
                    exception="TypeError") == "implicit_grad_nonscalar"
    assert classify("odd", warning=True, exception="TypeError") == UNKNOWN


@pytest.mark.parametrize(("kind", "text"), sorted(MESSAGES.items()))
def test_error_messages_classify_as_their_kind(kind: str, text: str) -> None:
    assert classify(text, warning=False) == kind
    assert classify(text, warning=True) == UNKNOWN


@pytest.mark.parametrize(("kind", "text"), sorted(WARNINGS.items()))
def test_warnings_classify_as_their_kind(kind: str, text: str) -> None:
    assert classify(text, warning=True) == kind
    assert classify(text, warning=False) == UNKNOWN


def test_variant_wordings_classify() -> None:
    assert classify("only Tensors of floating point dtype can require gradients",
                    warning=False) == "non_float_requires_grad"
    assert classify("attempting to assign a gradient of size '[3]' to a tensor of size '[2]'.",
                    warning=False) == "assigned_grad_mismatch"
    assert classify("Inference tensors do not track version counter.",
                    warning=False) == "inference_tensor_in_autograd"


def test_older_wording_still_classifies() -> None:
    # torch 1.x: "... but the buffers have already been freed"
    assert classify("Trying to backward through the graph a second time, but the buffers have "
                    "already been freed. Specify retain_graph=True when calling backward the "
                    "first time.", warning=False) == "backward_twice"
    assert classify("Only Tensors of floating point dtype can require gradients",
                    warning=False) == "non_float_requires_grad"


def test_unrelated_text_is_unknown() -> None:
    assert classify("something else went wrong", warning=False) == UNKNOWN


def test_build_path_suffix_is_dropped() -> None:
    text = normalise_text(WARNINGS["nonleaf_grad_access"])
    assert text.endswith("autograd.backward().")


def test_every_kind_is_documented_in_the_case_format() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "case-format.md").read_text()
    missing = [k.name for k in KINDS if f"| `{k.name}`" not in doc]
    assert missing == []
