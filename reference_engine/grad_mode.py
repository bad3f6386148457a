"""Grad mode: a process-wide switch that decides whether ops record graph nodes."""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

_state = {"enabled": True, "inference": False}

F = TypeVar("F", bound=Callable[..., Any])


def is_grad_enabled() -> bool:
    return _state["enabled"]


def _set(mode: bool) -> None:
    _state["enabled"] = bool(mode)


def is_inference_mode_enabled() -> bool:
    return _state["inference"]


def is_recording() -> bool:
    """Whether ops record graph nodes: grad mode on and not inside inference mode (where even
    enable_grad does not make torch record)."""
    return _state["enabled"] and not _state["inference"]


class _GradModeContext:
    """Base for the context managers; each also works as a function decorator, like torch."""

    _mode: bool

    def __enter__(self) -> None:
        self._prev = is_grad_enabled()
        _set(self._mode)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        _set(self._prev)

    def __call__(self, fn: F) -> F:
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = is_grad_enabled()
            _set(mode)
            try:
                return fn(*args, **kwargs)
            finally:
                _set(prev)
        return wrapper  # type: ignore[return-value]


class _NoParamDecorator(_GradModeContext):
    """torch's _NoParamDecoratorContextManager: `no_grad(func)` is `no_grad()(func)`."""

    def __new__(cls, orig_func: Any = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecorator):
    _mode = False


class enable_grad(_NoParamDecorator):
    _mode = True


class set_grad_enabled(_GradModeContext):
    """Switches immediately (so the plain call form works) and restores on __exit__."""

    def __init__(self, mode: bool) -> None:
        self._prev = is_grad_enabled()
        self._mode = bool(mode)
        _set(self._mode)

    def __enter__(self) -> None:
        pass

    def __call__(self, fn: F) -> F:
        _set(self._prev)   # used as a decorator: undo the switch made by __init__
        return super().__call__(fn)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        _set(self._prev)


class inference_mode:
    """torch.inference_mode(mode=True): c10::InferenceMode sets inference mode to `mode` and
    grad mode to `not mode` (so inference_mode(False) enables grad), restoring both on exit.
    Tensors created inside are inference tensors (see tensor.InferenceVersionCounter)."""

    def __new__(cls, mode: Any = True) -> Any:
        # torch's bare decorator form, inference_mode(func): anything but a bool is the
        # function to decorate with inference mode enabled.
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        self._prev = (_state["enabled"], _state["inference"])
        _state["enabled"], _state["inference"] = not self.mode, self.mode

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        _state["enabled"], _state["inference"] = self._prev

    def __call__(self, fn: F) -> F:
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]
