"""torch.autograd.graph: saved-tensor hooks as context managers (torch/autograd/graph.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from . import saved
from .dtypes import device
from .tensor import Tensor

__all__ = ["disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]


class saved_tensors_hooks:  # noqa: N801 (torch's name)
    """Within the block, every tensor saved for backward is kept as `pack_hook(tensor)` and
    given back by `unpack_hook(packed)`; the innermost block's pair wins."""

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        saved.push_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        saved.pop_default_hooks()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 (torch's name)
    """Saved tensors are kept on cpu and moved back to their device when unpacked
    (pin_memory only changes how torch copies, not what is saved)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple[device, Tensor]:
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed: tuple[device, Tensor]) -> Tensor:
            where, tensor = packed
            return tensor.to(where)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Within the block, setting saved-tensor hooks raises RuntimeError(error_message); so
    does entering it while hooks are set. The previous state comes back on exit."""
    previous = saved.disabled_error_message()
    try:
        saved.disable_hooks(error_message)
        yield
    finally:
        if previous is None:
            saved.enable_hooks()
        else:
            saved.disable_hooks(previous, fail_if_non_empty=False)
