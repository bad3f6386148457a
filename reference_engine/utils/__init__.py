"""torch.utils: what of it autograd users reach (activation checkpointing)."""

from . import checkpoint

__all__ = ["checkpoint"]
