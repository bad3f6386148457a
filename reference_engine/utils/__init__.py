"""torch.utils: what of it autograd users reach (activation checkpointing)."""

from . import _python_dispatch, checkpoint

__all__ = ["_python_dispatch", "checkpoint"]
