"""The harness's builtins in a program: `raises`, `warns`, `assert_close`, and the random
values every engine must see identically (`torch.rand`, `torch.manual_seed`, nn.Linear's
initial parameters, ...), drawn from the harness's own seeded generator."""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.case import api, kinds
from conformance.run import limits
from conformance.run.compare import tolerances
from conformance.run.engine import Engine
from conformance.run.operation_limits import OperationLimits
from conformance.run.sandbox import WEAKREF, CaseFailure, Expectation, PlainObject
from conformance.run.tensor_read import tensor_values


class HarnessBuiltins(OperationLimits):
    """The names a program has besides the API table's."""

    def __init__(self, engine: Engine, seed: int) -> None:
        super().__init__(engine)
        self.seed = seed
        self._rng: np.random.Generator | None = None  # made on first use (it is not cheap)
        self.builtins: dict[str, Any] = {
            "raises": lambda kind, type=None: self._expectation(kind, warning=False,
                                                                exception=type),
            "warns": lambda kind, count=None: self._expectation(kind, warning=True,
                                                               count=count),
            "no_warnings": lambda: Expectation(True, None),
            "assert_close": self._assert_close,
            "range": range, "len": len, "float": float, "int": int, "object": PlainObject,
            "weakref": WEAKREF,
            "str": str, "repr": repr, "isinstance": isinstance, "slice": slice,
            # the exception classes a program may raise or derive its own from
            **{name: getattr(builtins, name) for name in api.EXCEPTIONS},
        }
        # The API paths the harness serves itself (api.SEEDED), each by its method here of
        # the path's last name (`torch.nn.Linear`: _linear).
        self.seeded: dict[str, Callable[..., Any]] = {
            path: getattr(self, "_" + path.rpartition(".")[2].lower()) for path in api.SEEDED}

    @property
    def rng(self) -> np.random.Generator:
        if self._rng is None:
            self._rng = np.random.default_rng(self.seed)
        return self._rng

    @rng.setter
    def rng(self, generator: np.random.Generator) -> None:
        self._rng = generator

    # ---- harness builtins ------------------------------------------------------------
    def _expectation(self, kind: Any, *, warning: bool, exception: Any = None,
                     count: Any = None) -> Expectation:
        unknown = kinds.unknown_kind(kind, warning=warning)
        if unknown:
            problem, near = unknown
            valid = kinds.WARNING_KINDS if warning else kinds.ERROR_KINDS
            raise CaseFailure(problem + (f"; did you mean {', '.join(near)}?" if near else
                                         f"; valid kinds: {', '.join(valid)}"))
        if exception is not None and exception not in api.RAISED_TYPES:
            raise CaseFailure(f"unknown exception class {exception!r} for raises(type=...); "
                              f"valid: {', '.join(sorted(api.RAISED_TYPES))}")
        if count is not None and (type(count) is not int or count < 1):
            raise CaseFailure(f"warns(kind, count=...) takes a positive int; got {count!r}")
        return Expectation(warning, kind, exception, count)

    def _assert_close(self, actual: Any, expected: Any, rtol: float | None = None,
                      atol: float | None = None) -> None:
        for v in (actual, expected):
            if self.engine.is_tensor(v):
                limits.check_elements(math.prod(v.shape), "assert_close's copy of a tensor")
        a, b = self._as_array(actual), self._as_array(expected)
        default_rtol, default_atol = tolerances(str(a.dtype))
        rtol = default_rtol if rtol is None else rtol
        atol = default_atol if atol is None else atol
        if a.shape != b.shape:
            raise CaseFailure(f"assert_close: shapes differ: {a.shape} vs {b.shape}")
        if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=False):
            raise CaseFailure(f"assert_close: {a.tolist()} is not close to {b.tolist()} "
                              f"(rtol={rtol}, atol={atol})")

    def _as_array(self, value: Any) -> np.ndarray:
        if self.engine.is_tensor(value):
            return tensor_values(value)
        return np.asarray(value)

    # ---- values every engine must see identically ------------------------------------
    def _factory(self, draw: Callable[[tuple[int, ...]], np.ndarray], size: tuple[Any, ...],
                 dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Any:
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        shape = tuple(int(n) for n in size)
        values = draw(shape)
        if dtype is None:
            dtype = self.engine.module.get_default_dtype()
        if "complex" in str(dtype):
            # torch draws both parts: rand uniformly in [0, 1) each, randn a standard
            # complex normal (each part of variance 1/2)
            scale = np.sqrt(0.5) if draw == self.rng.standard_normal else 1.0
            values = (values + 1j * draw(shape)) * scale
        return self.engine.tensor(values, dtype=dtype, device=device,
                                  requires_grad=requires_grad)

    def _rand(self, *size: Any, **kwargs: Any) -> Any:
        return self._factory(self.rng.random, size, **kwargs)

    def _randn(self, *size: Any, **kwargs: Any) -> Any:
        return self._factory(self.rng.standard_normal, size, **kwargs)

    def _like(self, draw: Callable[[tuple[int, ...]], np.ndarray], t: Any,
              **kwargs: Any) -> Any:
        kwargs.setdefault("dtype", t.dtype)
        kwargs.setdefault("device", t.device)
        return self._factory(draw, tuple(t.shape), **kwargs)

    def _rand_like(self, t: Any, **kwargs: Any) -> Any:
        return self._like(self.rng.random, t, **kwargs)

    def _randn_like(self, t: Any, **kwargs: Any) -> Any:
        return self._like(self.rng.standard_normal, t, **kwargs)

    def _manual_seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(int(seed))

    def _linear(self, *args: Any, **kwargs: Any) -> Any:
        module = self._resolve("torch.nn.Linear")(*args, **kwargs)
        # Same distribution as torch's default init, drawn from the harness generator.
        bound = 1.0 / math.sqrt(module.in_features) if module.in_features else 0.0
        with self.engine.no_grad():
            for p in (module.weight, module.bias):
                if p is not None:
                    values = self.rng.uniform(-bound, bound, tuple(p.shape))
                    p.copy_(self.engine.tensor(values, dtype=p.dtype, device=p.device))
        return module
