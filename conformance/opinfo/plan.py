"""What the OpInfo check runs for one entry in one dtype: OpInfo's calls and the program
text each step is named by (the steps themselves: conformance/opinfo/steps.py and jvp.py)."""

from __future__ import annotations

import contextlib
import functools
import importlib
import sys
import types
import unittest
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

DEVICE = "cpu"


@dataclass(frozen=True)
class Call:
    """One call of the op, as OpInfo gives it: the input, arguments and keyword arguments."""

    input: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    process: Callable[[Any], Any] | None = None  # output_process_fn_grad (None: identity)


@dataclass(frozen=True)
class ErrorCall:
    call: Call
    error_type: type
    error_regex: str


# The steps of one sample, in order (gradgrad's two only where OpInfo supports gradgrad,
# jvp only where it supports forward-mode AD). jvp is a part of its own ("jvp N": run
# whatever the sample's other steps did, judged alone, left out alone in the map).
STEPS = ("forward", "grads", "grads_create_graph", "gradgrad", "saved", "jvp")
JVP = "jvp"
_STEP_TEXT = {
    "grads": "grads = torch.autograd.grad(out, inputs, v, allow_unused=True)",
    "grads_create_graph": "grads = torch.autograd.grad(op(...), inputs, v, allow_unused=True, "
                          "create_graph=True)  # which require grad",
    "gradgrad": "gradgrad = torch.autograd.grad(grads, inputs, v2, allow_unused=True)",
    "saved": "with saved_tensors_hooks(pack, unpack): out = op(...)  # the tensors saved",
    "jvp": "with fwAD.dual_level(): tangents = [fwAD.unpack_dual(o).tangent for o in "
           "op(make_dual(input, seeded tangent) for each input)]",
}


@dataclass
class Plan:
    """What the check runs for one entry and dtype: OpInfo's calls, and the program text each
    step is named by: a fixed block of lines per sample (line numbers from 1), then one line
    per error input."""

    key: str
    name: str  # the op as called: `torch.<OpInfo name>`
    dtype: str
    samples: list[Call]
    errors: list[ErrorCall]
    gradgrad: bool
    seed: int
    forward_ad: bool = False

    @functools.cached_property  # asked for every line of both traces (part_of, step_of)
    def steps(self) -> tuple[str, ...]:
        return tuple(s for s in STEPS if (self.gradgrad or "grad" not in s[4:]) and
                     (self.forward_ad or s != JVP))

    def line(self, sample: int, step: str) -> int:
        return sample * len(self.steps) + self.steps.index(step) + 1

    def error_line(self, index: int) -> int:
        return len(self.samples) * len(self.steps) + index + 1

    def part_of(self, line: int) -> tuple[str, int]:
        """("sample", i), ("jvp", i) (sample i's forward-mode step) or ("error input", j):
        what a program line belongs to."""
        n = len(self.samples) * len(self.steps)
        if line > n:
            return ("error input", line - n - 1)
        index = (line - 1) // len(self.steps)
        return (JVP, index) if self.step_of(line) == JVP else ("sample", index)

    def step_of(self, line: int) -> str:
        """The step a program line runs: one of STEPS, or "error input"."""
        if line > len(self.samples) * len(self.steps):
            return "error input"
        return self.steps[(line - 1) % len(self.steps)]

    @property
    def lines(self) -> list[str]:
        lines = []
        for i, call in enumerate(self.samples):
            for step in self.steps:
                lines.append(f"out = {call_text(self.name, call)}  # sample {i}"
                             if step == "forward" else _STEP_TEXT[step])
        for j, error in enumerate(self.errors):
            lines.append(f"{call_text(self.name, error.call)}  # error input {j}: "
                         f"{error.error_type.__name__} {error.error_regex!r}")
        return lines

    @property
    def program(self) -> str:
        return "\n".join(self.lines) + "\n"


def seed_of(key: str, dtype: str) -> int:
    """The entry's own seed: the samples an item draws do not depend on what ran before."""
    return zlib.crc32(f"{key}:{dtype}".encode())


def plan(op: Any, key: str, dtype: str) -> Plan:
    """OpInfo's samples and error inputs for `op` in `dtype`, drawn under the entry's seed
    (torch's global generator forked, so nothing else sees the draw)."""
    import torch

    seed = seed_of(key, dtype)
    with torch.random.fork_rng(devices=[]), _lazy_seeding_without_stacks(), \
            _test_fn_found_without_source():
        torch.manual_seed(seed)
        samples = [Call(s.input, tuple(s.args), dict(s.kwargs), _process(s))
                   for s in op.sample_inputs(DEVICE, getattr(torch, dtype), requires_grad=True)]
        torch.manual_seed(seed)
        errors = [ErrorCall(Call(e.sample_input.input, tuple(e.sample_input.args),
                                 dict(e.sample_input.kwargs)), e.error_type, e.error_regex)
                  for e in (op.error_inputs(DEVICE) if op.error_inputs_func else ())]
    return Plan(key, f"torch.{op.name}", dtype, samples, errors, bool(op.supports_gradgrad),
                seed, bool(op.supports_forward_ad))


# The device modules whose manual_seed_all, before the device is initialised, queues the
# seeding with the caller's stack formatted (`_lazy_call`: traceback.format_stack()).
_LAZY_DEVICES = ("torch.cuda", "torch.xpu", "torch.mtia")
_NO_STACK = types.SimpleNamespace(format_stack=lambda *args, **kwargs: [
    "  (the stack of an OpInfo sample draw: not formatted, conformance/opinfo/plan.py)\n"])


def _lazy_seeding_without_stacks() -> contextlib.AbstractContextManager[None]:
    """OpInfo's sample iterator reseeds torch before every sample (torch.manual_seed), and
    torch.manual_seed queues a seeding of each device not yet initialised with the caller's
    stack formatted, kept only to name where the call came from should that device's later
    initialisation fail: three stacks per sample, formatted and read from the source files,
    about a tenth of a sample-heavy item's time (nn.functional.max_pool2d: 1440 samples). While
    the samples are drawn, those modules format none: every seed is still set and queued as
    before, the CPU generator's draw is the same, only the queued stack is one line."""
    return _replaced(_LAZY_DEVICES, "traceback", _NO_STACK)


@contextlib.contextmanager
def _replaced(modules: tuple[str, ...], name: str, value: object) -> Iterator[None]:
    """`name` in each of `modules` that has it replaced by `value` for the block's time."""
    saved = []
    for module in modules:
        namespace = vars(importlib.import_module(module))
        if name in namespace:
            saved.append((namespace, namespace[name]))
            namespace[name] = value
    try:
        yield
    finally:
        for namespace, original in saved:
            namespace[name] = original


# Where OpInfo's sample and error iterators look for the running unittest test (its
# TrackedInputIter and OpInfo._sample_callback_fn call extract_test_fn once per iterator).
_TEST_FN_USERS = ("torch.testing._internal.common_utils", "torch.testing._internal.opinfo.core")


def _test_fn_of_the_stack() -> Callable[..., Any] | None:
    """torch's common_utils.extract_test_fn, frame for frame the same search, without
    inspect.stack(): that reads the source lines of every frame on the stack and finds each
    frame's module by a scan of sys.modules, 45 % of the profiled time of 70 OpInfo items
    under pytest (a deep stack, thousands of modules; benchmarks/README.md, issue 26), only
    to look at each frame's `self`."""
    try:
        frame = sys._getframe(1)
        while frame is not None:
            self_val = frame.f_locals.get("self")
            if isinstance(self_val, unittest.TestCase):
                *_, cls_name, test_name = self_val.id().rsplit(".", 2)
                if cls_name == type(self_val).__name__ and test_name.startswith("test"):
                    return getattr(self_val, test_name).__func__
            frame = frame.f_back  # type: ignore[assignment]
    except Exception:  # as torch's: no test function found
        pass
    return None


def _test_fn_found_without_source() -> contextlib.AbstractContextManager[None]:
    """While the samples are drawn, OpInfo finds the running test (none here: an OpInfo item
    is no unittest test) by _test_fn_of_the_stack."""
    return _replaced(_TEST_FN_USERS, "extract_test_fn", _test_fn_of_the_stack)


def _process(sample: Any) -> Callable[[Any], Any] | None:
    fn = sample.output_process_fn_grad
    # OpInfo's default is an identity lambda; spare the engine a copy of it
    return None if getattr(fn, "__qualname__", "") == "SampleInput.__init__.<locals>.<lambda>" \
        else fn


def describe(value: Any) -> str:
    """A sample value in a program line: tensors by shape and dtype."""
    import torch

    if isinstance(value, torch.Tensor):
        grad = ", requires_grad" if value.requires_grad else ""
        return f"tensor(size={tuple(value.shape)}, {str(value.dtype).removeprefix('torch.')}{grad})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe(v) for v in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in value.items()) + "}"
    return repr(value)


def call_text(name: str, call: Call) -> str:
    parts = [describe(call.input), *(describe(a) for a in call.args),
             *(f"{k}={describe(v)}" for k, v in call.kwargs.items())]
    return f"{name}({', '.join(parts)})"


