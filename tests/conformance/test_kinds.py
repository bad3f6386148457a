"""Error and warning kinds classify torch's own messages, and only their own (the samples:
kind_samples.py)."""

from __future__ import annotations

import pytest

from conformance.case.classify import classify, normalise_text
from conformance.case.kinds import KINDS, UNKNOWN
from tests.conformance.kind_samples import MESSAGES, WARNINGS


def test_anomaly_and_gradcheck_texts_are_compared_by_their_head() -> None:
    # the quoted forward stack and the printed Jacobians are not compared; the head is
    trace = WARNINGS["anomaly_forward_trace"]
    assert normalise_text(trace) == normalise_text(trace.replace("an.py", "other.py")) == (
        "Error detected in DivBackward0. Traceback of forward call that caused the error: ...")
    assert normalise_text("Error detected in DivBackward0. No forward pass information "
                          "available.") != normalise_text(trace)
    jac = MESSAGES["gradcheck_jacobian_mismatch"]
    assert normalise_text(jac) == normalise_text(jac.replace("3.", "3.0000"))
    assert normalise_text(jac) != normalise_text(jac.replace("input 0", "input 1"))


def test_checkpoint_debug_text_is_compared_without_its_operator_logs() -> None:
    # torch's text (reference_engine's copy of its template) with logs and stacks filled in
    # as torch fills them; the frame and the closing guidance stay compared (h31cov)
    from reference_engine import messages
    logs = messages.CHECKPOINT_DEBUG_TEMPLATE.format(
        forward_traces="$0: f32[1] = torch._ops.aten.sin.default($1)   (1 of 2 in original)"
                       "\n\n/x/interpreter.py:12:_call\n\n\n",
        recompute_traces="$0: f32[2] = torch._ops.aten.mul.Tensor($1, $2)\n\n\n",
        forward_ops="$0: f32[1] = torch._ops.aten.sin.default($1)",
        recompute_ops="$0: f32[2] = torch._ops.aten.mul.Tensor($1, $2)")
    empty = messages.CHECKPOINT_DEBUG_TEMPLATE.format(
        forward_traces="", recompute_traces="", forward_ops="", recompute_ops="")
    assert normalise_text(logs) == normalise_text(empty) != normalise_text(logs.replace(
        "ERROR: Detected non-determinism", "ERROR: Other"))
    assert "original forward     |\n...\n+---" in normalise_text(logs)
    assert classify(logs, warning=False) == "checkpoint_debug_nondeterminism"


# torch words an error and a warning alike: mark_dirty with a non-input warns for a tensor and
# raises for a view, with one text. error kind -> warning kind.
SAME_TEXT = {"mark_dirty_view_not_input": "mark_dirty_not_input"}


def test_every_kind_has_a_sample() -> None:
    by_type = {k.name for k in KINDS if k.exception}
    # given by identity, not by text: sampled in test_raise_and_with_as.py
    by_type.add("case_raised")
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
    assert classify(text, warning=True) == SAME_TEXT.get(kind, UNKNOWN)


@pytest.mark.parametrize(("kind", "text"), sorted(WARNINGS.items()))
def test_warnings_classify_as_their_kind(kind: str, text: str) -> None:
    assert classify(text, warning=True) == kind
    errors = {w: e for e, w in SAME_TEXT.items()}
    assert classify(text, warning=False) == errors.get(kind, UNKNOWN)


def test_the_0d_wording_of_x_T_is_the_same_kind() -> None:
    assert classify("Tensor.T is deprecated on 0-D tensors. This function is the identity in "
                    "these cases.", warning=True) == "tensor_T_deprecated"


def test_index_put_value_mismatch_is_a_shape_mismatch() -> None:
    assert classify("shape mismatch: value tensor of shape [3] cannot be broadcast to indexing "
                    "result of shape [2, 4]", warning=False) == "shape_mismatch"


def test_index_put_of_another_dtype_is_a_dtype_mismatch() -> None:
    assert classify("Index put requires the source and destination dtypes match, got Float for "
                    "the destination and Double for the source.",
                    warning=False) == "dtype_mismatch"


def test_movedim_lengths_are_a_shape_mismatch() -> None:
    assert classify("movedim: Invalid source or destination dims: source ([0, 1] dims) should "
                    "contain the same number of dims as destination ([0] dims)",
                    warning=False) == "shape_mismatch"


def test_variant_wordings_classify() -> None:
    assert classify("only Tensors of floating point dtype can require gradients",
                    warning=False) == "non_float_requires_grad"
    assert classify("attempting to assign a gradient of size '[3]' to a tensor of size '[2]'.",
                    warning=False) == "assigned_grad_mismatch"
    assert classify("Inference tensors do not track version counter.",
                    warning=False) == "inference_tensor_in_autograd"


def test_view_of_a_no_grad_view_is_the_no_grad_view_kind() -> None:
    assert classify("Output 0 of View is a view of a view which was created in no_grad mode "
                    "and is being modified inplace with grad mode enabled. Given that this use "
                    "case is ambiguous and error-prone, it is forbidden. You can clarify your "
                    "code by moving both the view and the inplace either both inside the "
                    "no_grad block (if you don't want the inplace to be tracked) or both "
                    "outside (if you want the inplace to be tracked).",
                    warning=False) == "no_grad_view_inplace"


def test_torch_func_disables_saved_tensor_hooks_with_its_own_text() -> None:
    assert classify("torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor "
                    "hooks. Please open an issue with your use case.",
                    warning=False) == "saved_tensor_hooks_disabled"


def test_view_of_view_wordings_classify() -> None:
    assert classify("Output 0 of View is a view of a view which was created in inference mode "
                    "and its base or another view of its base has been modified inplace in "
                    "normal mode.", warning=False) == "inference_view_inplace"


def test_internal_overlap_is_the_memory_overlap_kind() -> None:
    assert classify("unsupported operation: more than one element of the written-to tensor "
                    "refers to a single memory location. Please clone() the tensor before "
                    "performing the operation.", warning=False) == "memory_overlap"


def test_older_wording_still_classifies() -> None:
    # torch 1.x: "... but the buffers have already been freed"
    assert classify("Trying to backward through the graph a second time, but the buffers have "
                    "already been freed. Specify retain_graph=True when calling backward the "
                    "first time.", warning=False) == "backward_twice"
    assert classify("Only Tensors of floating point dtype can require gradients",
                    warning=False) == "non_float_requires_grad"
    # torch 2.0's ValueError, which test_autograd.py test_grad_empty_inputs still expects
    assert classify("grad requires non-empty inputs.", warning=False,
                    exception="ValueError") == "grad_empty_inputs"


def test_older_mark_dirty_wording_classifies() -> None:
    # torch 2.0-2.4: the warning for a non-input given to mark_dirty
    assert classify("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not "
                    "an input, there is no need to pass it to mark_dirty().",
                    warning=True) == "mark_dirty_not_input"


def test_unrelated_text_is_unknown() -> None:
    assert classify("something else went wrong", warning=False) == UNKNOWN


def test_build_path_suffix_is_dropped() -> None:
    text = normalise_text(WARNINGS["nonleaf_grad_access"])
    assert text.endswith("autograd.backward().")


def test_object_addresses_are_dropped() -> None:
    # pybind's wrong-argument text quotes the reprs of the call's arguments
    text = ("Invoked with: <torch._C._autograd.SavedTensor object at 0x7f57133999b0>, "
            "<function f.<locals>.g at 0x7f57133a51c0>, 1")
    assert normalise_text(text) == ("Invoked with: <torch._C._autograd.SavedTensor object at "
                                    "0x...>, <function f.<locals>.g at 0x...>, 1")


def test_every_kind_is_documented_in_the_case_format() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "case-format.md").read_text()
    missing = [k.name for k in KINDS if f"| `{k.name}`" not in doc]
    assert missing == []
