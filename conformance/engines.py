"""Engines: modules with torch's shape, and the few things the harness asks of them.

The harness never special-cases an engine. Real torch, `reference_engine` and any third
engine are all reached the same way: dotted API paths resolved by attribute lookup, and
the observation protocol below (`_version`, `_is_view()`, `grad_fn`, ...), which is
torch's own.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from conformance import isolation

TORCH = "torch"
DEFAULT_ENGINE = "reference_engine"


class MissingAPI(AttributeError):
    """The engine has nothing at an API path: it lacks that API (the verdict `unsupported`),
    as opposed to an AttributeError its own code raised while computing an attribute."""

    def __init__(self, path: str, error: AttributeError) -> None:
        super().__init__(str(error))
        self.path = path
        self.error = error


def lacks(obj: Any, name: str) -> bool:
    """Whether `obj` has no attribute `name` at all, after `getattr(obj, name)` raised
    AttributeError: a name found statically (a method, a property, a slot, an instance
    attribute) means the engine's own code raised, e.g. inside a property."""
    try:
        inspect.getattr_static(obj, name)
    except AttributeError:
        return True
    return False


@dataclass(frozen=True)
class Engine:
    name: str
    module: ModuleType

    def resolve(self, path: str) -> Any:
        """The object at an API path such as `torch.nn.Linear`; MissingAPI if the engine has
        nothing there."""
        obj: Any = self.module
        for part in path.split(".")[1:]:
            try:
                obj = getattr(obj, part)
            except AttributeError as error:
                if lacks(obj, part):
                    raise MissingAPI(path, error) from None
                raise
        return obj

    def dtype(self, name: str) -> Any:
        return getattr(self.module, name)

    def is_tensor(self, value: object) -> bool:
        return bool(self.module.is_tensor(value))

    def tensor(self, values: np.ndarray, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Any:
        return self.module.tensor(values, dtype=dtype, device=device,
                                  requires_grad=requires_grad)

    def no_grad(self) -> contextlib.AbstractContextManager[Any]:
        return self.module.no_grad()

    @contextlib.contextmanager
    def defaults(self, device: str, dtype: str) -> Iterator[None]:
        """Make `dtype` the default floating dtype and `device` the default device."""
        m = self.module
        old_dtype = m.get_default_dtype()
        m.set_default_dtype(self.dtype(dtype))
        # cpu is every engine's default already; torch's default-device mode costs a
        # function-mode dispatch on every op, so it is only installed when it changes
        # something.
        if device != "cpu":
            m.set_default_device(device)
        try:
            yield
        finally:
            if device != "cpu":
                m.set_default_device(None)
            m.set_default_dtype(old_dtype)

    def global_state(self) -> dict[str, object]:
        """The engine's process-global settings a program could change (isolation.SETTINGS
        that the engine has), by name."""
        return isolation.read(self.module)

    def restore_global_state(self, before: dict[str, object]) -> list[isolation.StateChange]:
        """Set back what differs from `before` (a `global_state()`); what differed."""
        return isolation.restore(self.module, before)

    def device_available(self, device: str) -> bool:
        if device == "cpu":
            return True
        cuda = getattr(self.module, "cuda", None)
        return bool(cuda is not None and cuda.is_available())


def load_engine(name: str, directory: Path | None = None) -> Engine:
    """The engine importable as `name` (a module path: torch, reference_engine, ...).

    As with `python -m`, a module in `directory` (the working directory, by default) is
    importable too; that directory joins `sys.path` only when the module is not importable
    otherwise and is there, so an ordinary run's imports are left alone."""
    try:
        module = _import_from(name, Path.cwd() if directory is None else directory)
    except Exception as e:  # ImportError, or anything the module raises while importing
        raise ValueError(f"cannot import engine {name!r}: {type(e).__name__}: {e}. Pass an "
                         "importable module with torch's API, e.g. --engine reference_engine "
                         "(a module in the working directory, or on PYTHONPATH)") from None
    return Engine(name, module)


def _import_from(name: str, directory: Path) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        top = name.split(".")[0]
        here = directory.resolve()
        missing_here = e.name == top and ((here / top).is_dir() or (here / f"{top}.py").is_file())
        if not missing_here or str(here) in sys.path:
            raise
    sys.path.insert(0, str(here))
    return importlib.import_module(name)
