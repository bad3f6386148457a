"""PyTorch's compiled autograd as an engine under test: `--engine
conformance.engines.compiled_autograd`.

Torch's whole API is this module's (attribute lookups fall through to `torch`); what
differs is that every statement of the engine side of an item runs with compiled autograd
on (`torch._dynamo.compiled_autograd._enable`): each backward is captured as an FX graph
and run through the backend named by `CONFORMANCE_CA_BACKEND`:

- `none` (the default): the captured graph runs as it is, without `torch.compile`, so what
  is checked is compiled autograd's capture and its runtime (hooks, accumulation, the
  graph's order) alone;
- `eager`, `aot_eager`, `inductor`: the graph goes through `torch.compile` with that
  backend (dynamo traces it, hooks included).

Compiled autograd is switched on per statement (`conformance_statement`), not per item, so
the harness's observation between statements runs under plain torch; the harness also
exempts its observation and hook-event recording from dynamo (engines protocol v2).
Known divergences: expectations/conformance.engines.compiled_autograd.yaml; findings, each
with a plain-torch script: docs/findings/compiled_autograd.md.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch._dynamo import compiled_autograd

BACKENDS = ("none", "eager", "aot_eager", "inductor")
BACKEND_VARIABLE = "CONFORMANCE_CA_BACKEND"


def backend() -> str:
    """The backend named by $CONFORMANCE_CA_BACKEND (default `none`)."""
    name = os.environ.get(BACKEND_VARIABLE, "none").strip() or "none"
    if name not in BACKENDS:
        raise ValueError(f"${BACKEND_VARIABLE}={name!r} is not a backend of the compiled "
                         f"autograd engine; choose one of {', '.join(BACKENDS)}")
    return name


BACKEND = backend()  # checked at import: a bad value is a usage error before anything runs


def _compiler(gm: torch.fx.GraphModule) -> Callable[..., Any]:
    if BACKEND == "none":
        return gm  # the captured graph as it is: an FX GraphModule is callable
    return torch.compile(gm, backend=BACKEND, fullgraph=False, dynamic=True)


# Each item's backward graphs differ from the last item's, and dynamo recompiles a frame at
# most `recompile_limit` times before it silently falls back to running it uncompiled: a
# reset every so many items keeps every graph compiled. Backend `none` compiles nothing, and
# compiled autograd's own cache is keyed by the graph's structure, so it never needs one.
_RESET_EVERY = 4
_items = 0


def conformance_reset() -> None:
    """Before each item's engine side: forget dynamo's compiled frames often enough that no
    frame reaches its recompile limit."""
    global _items
    _items += 1
    if BACKEND != "none" and _items % _RESET_EVERY == 0:
        torch._dynamo.reset()


@contextlib.contextmanager
def conformance_statement() -> Iterator[None]:
    """Around executing (not observing) each statement: compiled autograd on."""
    with compiled_autograd._enable(_compiler):
        yield


def __getattr__(name: str) -> Any:
    # Everything else is torch's: `torch.tensor`, `torch.autograd.grad`, `is_tensor`, ...
    return getattr(torch, name)
