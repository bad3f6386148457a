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
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch._dynamo import compiled_autograd

from conformance.engines import chosen_backend

BACKENDS = ("none", "eager", "aot_eager", "inductor")
BACKEND_VARIABLE = "CONFORMANCE_CA_BACKEND"

# checked at import: a bad value is a usage error before anything runs
BACKEND = chosen_backend(BACKEND_VARIABLE, BACKENDS, "compiled autograd")
# what expectations entries' `backend:` condition is checked against
conformance_backend = BACKEND


# AOT backends (aot_eager, inductor) run the captured backward as one AOTAutograd function,
# so every tensor a `create_graph=True` backward makes has grad_fn CompiledFunctionBackward
# instead of eager's per-op nodes: by design, not a bug, and it would hide every other
# difference in those items. Masked fields are reported (verdict `masked`), never passed.
_AOT_GRAPH = ("AOT backends compile a create_graph backward into one "
              "CompiledFunctionBackward node instead of eager's per-op nodes")
conformance_masks: tuple[tuple[str, str], ...] = (
    (("*.grad_fn", _AOT_GRAPH), ("*.graph", _AOT_GRAPH))
    if BACKEND in ("aot_eager", "inductor") else ())


def _compiler(gm: torch.fx.GraphModule) -> Callable[..., Any]:
    if BACKEND == "none":
        return gm  # the captured graph as it is: an FX GraphModule is callable
    return torch.compile(gm, backend=BACKEND, fullgraph=False, dynamic=True)


def conformance_reset() -> None:
    """Before each run: forget every graph compiled autograd captured (and, with a
    `torch.compile` backend, everything dynamo compiled), so that an item's result never
    depends on the items run before it in the process.

    Both caches are observable. Compiled autograd reuses a captured graph for a later backward
    that its cache key wrongly takes for the same one (findings, 16: `unbind` of a 3-row then
    a 2-row tensor fails with "invalid gradient ... got [3, 2]"), so an item could fail only
    after another. Dynamo runs a code object uncompiled once it was recompiled
    `recompile_limit` times (the harness's hook closures share one code object), and gives
    some warnings once per process (`warn_once`). `torch._dynamo.reset()` clears all of it,
    compiled autograd's cache included; backend `none` only needs compiled autograd's.
    Within one item the caches work as they would in a user's program.
    """
    if BACKEND == "none":
        compiled_autograd.reset()
    else:
        torch._dynamo.reset()


_statement_depth = 0  # conformance_statements being executed, one inside another


@contextlib.contextmanager
def conformance_statement() -> Iterator[None]:
    """Around executing (not observing) each statement: compiled autograd on.

    A statement that runs while another is executing (the body of a custom Function's
    `backward` or of a hook, which torch calls from inside a backward) leaves compiled
    autograd as the outer statement set it: enabling it again there would nest two
    compiled autograd contexts, which no user program does, and would make a reentrant
    backward fail with "Trying to run compiled autograd within another compiled autograd
    call", an error of the harness, not of compiled autograd: compiled autograd runs its
    captured graph (hooks and custom Functions' backwards included) under its own
    `_disable()` (torch/_dynamo/compiled_autograd.py), so a reentrant backward there is
    eager."""
    global _statement_depth
    if _statement_depth:
        yield
        return
    _statement_depth += 1
    try:
        with compiled_autograd._enable(_compiler):
            yield
    finally:
        _statement_depth -= 1


def __getattr__(name: str) -> Any:
    # Everything else is torch's: `torch.tensor`, `torch.autograd.grad`, `is_tensor`, ...
    return getattr(torch, name)
