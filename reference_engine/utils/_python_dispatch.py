"""torch.utils._python_dispatch, the one name of it an observer of the engine uses."""

from .checkpoint_selective import disable_current_modes as _disable_current_modes

__all__ = ["_disable_current_modes"]
