"""Engines shipped with the harness, each a module to name with `--engine` (the protocol they
follow is conformance/run/engine.py): `conformance.engines.compiled_autograd` (PyTorch's
compiled autograd) and `conformance.engines.torch_compile` (torch.compile, op by op). Their
dotted names are public: the expectations files are named after them."""

from __future__ import annotations

import os


def chosen_backend(variable: str, backends: tuple[str, ...], engine: str) -> str:
    """The backend named by $`variable` (default: the first of `backends`); a ValueError
    naming the choices for any other. The engines call it at import, so that a bad value is
    a usage error before anything runs."""
    name = os.environ.get(variable, backends[0]).strip() or backends[0]
    if name not in backends:
        raise ValueError(f"${variable}={name!r} is not a backend of the {engine} engine; "
                         f"choose one of {', '.join(backends)}")
    return name
