"""Engines: modules with torch's shape, and the few things the harness asks of them.

The harness never special-cases an engine. Real torch, `reference_engine` and any third
engine are all reached the same way: dotted API paths resolved by attribute lookup, and
the observation protocol below (`_version`, `_is_view()`, `grad_fn`, ...), which is
torch's own (with `torch.utils._python_dispatch._disable_current_modes`, where an engine has
it: see `outside_dispatch_modes`).

Engine protocol v2: an engine module may also define, each optional,

- `conformance_context(device, dtype)`: a context manager entered around each of its runs
  (an item's engine side, a generated program's), inside the harness's default dtype and
  device and its isolation guard. Torch the truth never enters one.
- `conformance_statement()`: a context manager entered around executing each simple
  statement (not around observing it, nor around a `with`/`for`/class statement, whose
  inner statements enter it themselves).
- `conformance_reset()`: called before each run, for engines with process-wide caches.
- `conformance_masks`: (field pattern, reason) pairs, fields the engine declares it does not
  match (fnmatch over divergence fields such as `g.grad_fn`); a difference there makes the
  item `masked` (an expected failure naming the reason, never a pass) unless a real
  divergence follows.
- `conformance_backend`: a name, what an expectations entry's `backend:` condition is
  checked against (torch.compile's `aot_eager` or `inductor`).

An engine that defines either context may switch a compiler on in it; when dynamo is loaded
in the process (`torch._dynamo` in sys.modules) the harness's observation and hook-event
recording are then exempt from it (`torch._dynamo.disable`), so that no compiler traces the
harness's own code. The harness never imports torch for this.

The adapters shipped here: `conformance.engines.compiled_autograd` (PyTorch's compiled
autograd) and `conformance.engines.torch_compile` (torch.compile, op by op).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from conformance.run import isolation
from conformance.run.trace import FieldMask

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

    # ---- protocol v2 (optional members of the engine module) -------------------------------
    @cached_property
    def statement_context(self) -> Callable[[], contextlib.AbstractContextManager[Any]] | None:
        """The engine's `conformance_statement`, if it has one."""
        return getattr(self.module, "conformance_statement", None)

    @cached_property
    def masks(self) -> tuple[FieldMask, ...]:
        """The engine's `conformance_masks`, checked by load_engine."""
        declared = getattr(self.module, "conformance_masks", ())
        return tuple(FieldMask(str(field), str(reason)) for field, reason in declared)

    @contextlib.contextmanager
    def run_context(self, device: str, dtype: str) -> Iterator[None]:
        """Around one run: `conformance_reset()` first, the item's default dtype and device,
        then the engine's own `conformance_context(device, dtype)`, if it has these."""
        reset = getattr(self.module, "conformance_reset", None)
        if reset is not None:
            reset()
        context = getattr(self.module, "conformance_context", None)
        with self.defaults(device, dtype), \
                (contextlib.nullcontext() if context is None else context(device, dtype)):
            yield

    @cached_property
    def _disable_current_modes(self) -> Callable[[], contextlib.AbstractContextManager[Any]]:
        try:
            disable: Callable[[], Any] = self.resolve(
                "torch.utils._python_dispatch._disable_current_modes")
        except (MissingAPI, AttributeError):
            return contextlib.nullcontext
        return disable

    def outside_dispatch_modes(self) -> contextlib.AbstractContextManager[Any]:
        """Where the harness reads values inside a program's call (a hook event): torch's
        `torch.utils._python_dispatch._disable_current_modes()`, an engine's the same if it
        has one, so that no dispatch mode the program entered (a selective checkpoint's,
        which asks its policy about every op) sees the harness's reads."""
        return self._disable_current_modes()

    def exempt(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """`function`, exempt from dynamo when this engine may switch a compiler on (it has a
        protocol-v2 context) and dynamo is loaded; else `function` itself (no cost)."""
        has_context = self.statement_context is not None or \
            getattr(self.module, "conformance_context", None) is not None
        dynamo = sys.modules.get("torch._dynamo")
        if not has_context or dynamo is None:
            return function
        disabled: Callable[..., Any] = dynamo.disable(function)
        return disabled

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
    engine = Engine(name, module)
    try:
        masks = engine.masks
    except (TypeError, ValueError):
        masks = ()
    if any(not m.field or not m.reason.strip() for m in masks) or \
            len(masks) != len(getattr(module, "conformance_masks", ())):
        raise ValueError(f"engine {name!r}: `conformance_masks` must be a sequence of (field "
                         "pattern, reason) pairs, each with a non-empty reason, e.g. "
                         "[('*.grad_fn', 'graphs are compiled into one node')]")
    return engine


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
