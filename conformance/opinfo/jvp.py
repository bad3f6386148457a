"""The forward-mode step of a sample (where OpInfo supports forward AD): every tensor input
that requires grad gets a seeded tangent of its shape and dtype, and the op runs on the
duals (`make_dual(input.detach(), tangent)`) inside `forward_ad.dual_level()`; the step's
value is the tangent of each floating output (`unpack_dual(o).tangent`, None where it has
none), after OpInfo's output processing, compared with torch's by the one comparator.

The step is a part of its own (`jvp N` in the map): it runs whatever the sample's
backward-mode steps did, and its verdict does not hide theirs nor theirs its. An engine
without `torch.autograd.forward_ad` gets the verdict `unsupported` for it (MissingAPI),
never a pass. The tangents come from a stream of their own (the entry's seed, the sample,
1), so what the other steps drew does not change them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.opinfo.convert import engine_callable
from conformance.opinfo.plan import JVP, Call
from conformance.opinfo.steps import Run, apply_op, make_values, tensors, unique, vectors
from conformance.run.engine import Engine


def _substitute(engine: Engine, value: Any, duals: dict[int, Any]) -> Any:
    """`value` with each tensor in `duals` (by identity) replaced by its dual."""
    if engine.is_tensor(value):
        return duals.get(id(value), value)
    if isinstance(value, (list, tuple)):
        items = [_substitute(engine, v, duals) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {k: _substitute(engine, v, duals) for k, v in value.items()}
    return value


def run_jvp(run: Run, fn: Callable[..., Any] | Exception, call: Call, index: int) -> None:
    """Sample `index`'s forward-mode step, as its program line (SampleFailed if it fails)."""
    engine, plan = run.engine, run.plan
    rng = np.random.default_rng([plan.seed, index, 1])

    def jvp() -> dict[str, Any]:
        dual_level, make_dual, unpack_dual = (
            engine.resolve(f"torch.autograd.forward_ad.{name}")
            for name in ("dual_level", "make_dual", "unpack_dual"))
        values = make_values(run, fn, call)
        inputs = unique(t for t in tensors(engine, values) if t.requires_grad)
        seeded = vectors(engine, rng, inputs)
        process = None if call.process is None else engine_callable(engine, call.process)
        with dual_level():
            duals = {id(x): make_dual(x.detach(), t) for x, t in zip(inputs, seeded,
                                                                       strict=True)}
            out = apply_op(fn, _substitute(engine, values, duals))
            if process is not None:
                out = process(out)
            found = [unpack_dual(o).tangent for o in tensors(engine, out)
                     if o.dtype.is_floating_point]
        return {"jvp": found}

    # the tangents are the engine's own results, compared as grads are (engine_made)
    run.step(plan.line(index, JVP), jvp,
             lambda names: [t for t in names["jvp"] if t is not None])
