"""The closed vocabularies of the case format: feature names, devices and dtypes.

Every name a case file may use in `features`, `devices` or `dtypes` is listed here and
nowhere else; the loader rejects anything else and lists these as the valid choices.
"""

from __future__ import annotations

# Feature families, each with one line saying what a case tagged with it exercises.
FEATURES: dict[str, str] = {
    "leaf": "leaf / non-leaf status and requires_grad propagation",
    "requires_grad": "setting and reading requires_grad, requires_grad_()",
    "grad_accumulation": "accumulation of .grad across backward calls, zeroing it",
    "nonleaf_grad": ".grad of non-leaf tensors and its warning",
    "retain_grad": "retain_grad() on intermediate tensors",
    "retain_graph": "freeing saved tensors after backward, retain_graph=True",
    "backward_gradient": "backward(gradient=...) as a vector-Jacobian product",
    "autograd_grad": "torch.autograd.grad and its options",
    "higher_order": "create_graph=True and derivatives of derivatives",
    "version_counter": "_version bumps of in-place operations",
    "inplace": "in-place operations and their autograd checks",
    "views": "views, their bases and in-place operations through them",
    "hooks": "tensor and node hooks",
    "custom_function": "torch.autograd.Function subclasses",
    "grad_mode": "no_grad, enable_grad, set_grad_enabled, inference_mode",
    "grad_fn": "grad_fn node names and graph structure",
    "data": "the .data attribute, detach()",
    "nn": "torch.nn modules and parameters",
    "legacy": "legacy APIs such as torch.autograd.Variable",
    "devices": "device placement, device labels and cross-device errors",
    "dtypes": "dtype rules for gradients",
    "broadcasting": "gradients through broadcasting",
    "matmul": "matrix products and their gradients",
    "reductions": "sum, mean and other reductions",
    "signed_zero": "IEEE signed zeros in values and gradients",
    "forward_ad": "forward-mode AD: dual levels, dual tensors, tangents through ops, views and "
                  "in-place ops",
    "ops": "one op of the table: forward, backward, saved tensors and grad_fn name",
    "backward_options": "backward()'s gradient, inputs=, retain_graph and create_graph options",
    "anomaly_mode": "torch.autograd.detect_anomaly / set_detect_anomaly: NaN check, forward trace",
    "gradcheck": "torch.autograd.gradcheck and gradgradcheck",
    "checkpoint": "torch.utils.checkpoint: checkpoint and checkpoint_sequential, selective "
                  "checkpointing (create_selective_checkpoint_contexts)",
    "functional": "torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp",
    "complex": "complex dtypes: complex leaves and grads (conjugate Wirtinger), real/imag "
               "views, conj, abs/angle/polar",
    "printing": "str() of a tensor: torch's number modes (integer, fixed, scientific), "
                "summarised large tensors, line wrapping and the suffixes (dtype, device, "
                "grad_fn, requires_grad)",
    "errors": "the case checks that an error is raised",
    "warnings": "the case checks that a warning is issued",
}

DEVICES: tuple[str, ...] = ("cpu", "cuda")
DTYPES: tuple[str, ...] = ("float32", "float64")
DEFAULT_DEVICES: tuple[str, ...] = ("cpu", "cuda")
DEFAULT_DTYPES: tuple[str, ...] = ("float32",)


def parse_devices(value: str) -> tuple[str, ...]:
    """A `--devices` value (`cpu`, `cpu,cuda`); ValueError naming the choices otherwise."""
    chosen = tuple(d.strip() for d in value.split(",") if d.strip())
    unknown = [d for d in chosen if d not in DEVICES]
    if unknown or not chosen:
        raise ValueError(f"--devices {value}: unknown device {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(DEVICES)}, comma-separated")
    return chosen
