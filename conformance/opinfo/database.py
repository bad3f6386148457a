"""OpInfo's database, read from the installed torch.

`torch.testing._internal.common_methods_invocations.op_db` is torch's own table of ops (one
OpInfo per op and variant: its function, method and in-place forms, sample inputs, error
inputs, supported dtypes, which autograd modes it supports). It lives in torch's test
utilities, which import `expecttest` (a test-only package torch does not install): the
dev extra installs it, and without it every use here is one OpInfoUnavailable naming that
install.
"""

from __future__ import annotations

import functools
import importlib
import warnings
from typing import Any

OPINFO_MODULE = "torch.testing._internal.common_methods_invocations"
INSTALL_HINT = "pip install expecttest (it is in the dev extra: pip install -e '.[dev]')"
# The families of the map, by the namespace of an entry's name (`torch` for no namespace:
# torch's functions and Tensor methods). A name in another namespace is an error (a new
# namespace in a new torch is to be placed here, not folded into `torch`).
FAMILIES: tuple[str, ...] = ("torch", "nn.functional", "linalg", "fft", "masked", "special",
                             "sparse")


class OpInfoUnavailable(RuntimeError):
    """OpInfo cannot be read here: its test-only dependency is missing, or this torch has no
    such database."""


@functools.cache
def op_db() -> tuple[Any, ...]:
    """Every OpInfo entry of the installed torch, in its order."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = importlib.import_module(OPINFO_MODULE)
    except ModuleNotFoundError as e:
        if e.name == "expecttest":
            raise OpInfoUnavailable(f"OpInfo ({OPINFO_MODULE}) needs the test-only package "
                                    f"expecttest, which is not installed: {INSTALL_HINT}"
                                    ) from None
        raise OpInfoUnavailable(f"this torch has no OpInfo database: {e}") from None
    return tuple(module.op_db)


def key(op: Any) -> str:
    """An entry's key: its name, and `.variant` for a variant (`max.binary`), as torch's
    OpInfo names it (`full_name`)."""
    return str(op.full_name)


def supports_autograd(op: Any) -> bool:
    """Whether the entry supports some mode of autograd: the map's entries."""
    return bool(op.supports_autograd or op.supports_forward_ad or op.supports_gradgrad)


@functools.cache
def autograd_entries() -> dict[str, Any]:
    """The entries that support autograd, by key, in OpInfo's order."""
    entries: dict[str, Any] = {}
    for op in op_db():
        if supports_autograd(op):
            if key(op) in entries:
                raise OpInfoUnavailable(f"OpInfo lists {key(op)} twice")
            entries[key(op)] = op
    return entries


def family_of_key(key: str) -> str:
    """The family of a map key (an entry's name, with `.variant`): by its namespace prefix,
    `torch` for none (a torch function's name has no dot; `max.binary` is a variant)."""
    return next((f for f in FAMILIES[1:] if key.startswith(f + ".")), "torch")


def family(name: str) -> str:
    """The family of an entry by its name (OpInfo's `name`, without the variant): its
    namespace (`linalg.solve` -> `linalg`), `torch` for none. ValueError for a namespace not
    in FAMILIES."""
    for prefix in FAMILIES[1:]:
        if name.startswith(prefix + "."):
            return prefix
    if "." in name and not name.startswith("torch.ops."):  # an ATen op is torch's
        raise ValueError(f"OpInfo entry {name}: namespace `{name.rpartition('.')[0]}` is not "
                         f"one of the map's families ({', '.join(FAMILIES)}); add it to "
                         "FAMILIES")
    return "torch"
