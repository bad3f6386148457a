"""The interpreter's guards and budgets (conformance.limits): statements counted, calls of the
program's own functions nested, and every operation on a tensor refused before it runs when it
would go beyond an element limit (conformance.predict), the run's live tensors counted."""

from __future__ import annotations

import contextlib
import gc
import math
import operator
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from conformance.case import api
from conformance.case import program as ir
from conformance.run import changes, functional, limits, predict, value_sizes
from conformance.run.blackbox import LineStore
from conformance.run.engine import Engine
from conformance.run.sandbox import Sandbox, resolve_on


class OperationLimits(Sandbox):
    """The bounds of one run, checked as it goes."""

    line = LineStore()  # the program line running, kept in the black box too

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        # Statements executed, and the program line running (named when a whole-run limit
        # ends the run).
        self.executed = 0
        self.line = 0
        self.depth = 0  # program-defined calls running, nested (limits.MAX_CALL_DEPTH)
        # Tensors the run's operations made, by id: (a weak reference, elements), and their
        # elements in all (freed ones are taken off when that goes beyond the limit).
        self._live: dict[int, tuple[weakref.ref[Any], int]] = {}
        self.live = 0
        # What the running statement has done so far (conformance.changes): each call is
        # reported here, on the value actually called.
        self.effects = changes.Effects()

    def _count(self, line: int) -> None:
        """One more statement (or lambda evaluation) executed, at program line `line`."""
        self.line = line
        self.executed += 1
        if self.executed > limits.MAX_STATEMENTS:
            raise limits.RunLimit(f"the run executed more than {limits.MAX_STATEMENTS} "
                                  "statements (loops multiply: count the iterations)", line)

    @contextlib.contextmanager
    def _nested_call(self, source: str) -> Iterator[None]:
        if self.depth >= limits.MAX_CALL_DEPTH:
            raise limits.LimitRefused(
                f"calls of the program's own functions nest more than {limits.MAX_CALL_DEPTH} "
                f"deep (at {source}): a lambda or method that calls itself without end?")
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def _item(self, obj: Any, index: Any) -> Any:
        """`obj[index]`, refused before it runs when it would make a tensor beyond the
        element limit (an advanced index, a list of indices)."""
        if not self.engine.is_tensor(obj):
            return obj[index]
        self._limit("indexing", returns(operator.getitem), [obj, index])
        return self._check_made(obj[index], (obj,))

    def _set_item(self, obj: Any, index: Any, value: Any) -> None:
        """`obj[index] = value`: refused as `obj[index]` would be (the value is broadcast
        to its shape)."""
        if self.engine.is_tensor(obj):
            self._limit("an indexed assignment", returns(_indexed), [obj, index, value])
        obj[index] = value

    # ---- per-operation limits (conformance.limits) ------------------------------------
    def _binary(self, op: Callable[[Any, Any], Any], symbol: str, left: Any, right: Any
                ) -> Any:
        """`op(left, right)`, refused before it computes anything beyond a limit."""
        if symbol == "**":
            limits.check_pow(left, right)
        elif symbol == "*":
            limits.check_repeat(left, right)
        if self.engine.is_tensor(left) or self.engine.is_tensor(right):
            self._limit(f"`{symbol}`", returns(op), [left, right])
            return self._check_made(op(left, right), (left, right))
        return limits.check_result(op(left, right))

    def _check_call(self, func_e: ir.Expr, func: Any, args: list[Any],
                    kwargs: dict[str, Any]) -> list[Any]:
        """Refuse the call before it runs when it would go beyond a limit; the arguments to
        call it with (a function given to jacobian or hessian is bounded: functional)."""
        path = api.api_path(func_e)
        owner = getattr(func, "__self__", None)
        is_method = owner is not None and self.engine.is_tensor(owner)
        # a tensor's new_* method is a factory too (`x.new_zeros(n, n)`), named by its name
        sized = path if path is not None else func_e.attr if is_method and isinstance(
            func_e, ir.Attribute) and func_e.attr in api.SIZED_METHODS else None
        if sized is not None:
            count = factory_elements(sized, args, kwargs)
            if count is not None:
                limits.check_elements(count, f"`{sized}(...)`" if path is not None
                                      else f"`Tensor.{sized}(...)`")
        name = path or (func_e.attr if is_method and isinstance(func_e, ir.Attribute) else "")
        if name:  # an op whose result's size is in its operands' values
            limits.check_elements(value_sizes.elements(
                name, [owner, *args] if is_method else args, kwargs, self.engine.is_tensor),
                f"the call `{name.rsplit('.', 1)[-1]}(...)`")
        self.effects.call(func_e, path, is_method, args, kwargs)
        operands = args
        if is_method:
            operands = [owner, *args]
        elif not path and self._is_module(func) and hasattr(func, "weight"):
            operands = [*args, func.weight, getattr(func, "bias", None)]

        def operation() -> Callable[..., Any] | None:
            """torch's callable for the call, given `operands` (predict.largest_made)."""
            torch = predict.torch_module()
            if is_method:
                return getattr(torch.Tensor, func_e.attr, None) if isinstance(
                    func_e, ir.Attribute) else None
            if path:
                return None if path in self.seeded else resolve_on(torch, path)
            # nn.Linear, the table's one module class, is F.linear of its parameters
            return torch.nn.functional.linear if operands is not args else None

        self._limit("the call", operation, operands, kwargs)
        self._check_passed_modules([*args, *kwargs.values()])
        return functional.bounded(path, args, kwargs, self.engine.is_tensor)

    def _check_passed_modules(self, operands: list[Any]) -> None:
        """A module given to a call (`checkpoint(m, x)`, `checkpoint_sequential([m1, m2], 1,
        x)`) is called inside the engine, where no statement of the program is checked.
        nn.Linear, the table's one module class that makes more than its input, gives rows *
        out_features elements, and a chain of them keeps the rows: at most the largest
        tensor operand's elements over the smallest in_features. Refused before the call
        when that bound is beyond the element limit."""
        weights, largest, stack = [], 0, list(operands)
        while stack:
            v = stack.pop()
            if isinstance(v, (list, tuple)):
                stack.extend(v)
            elif self.engine.is_tensor(v):
                largest = max(largest, math.prod(v.shape))
            elif self._is_module(v) and len(getattr(getattr(v, "weight", None), "shape",
                                                    ())) == 2:
                weights.append(tuple(v.weight.shape))  # (out_features, in_features)
        if weights:
            rows = largest // max(min(n for _, n in weights), 1)
            limits.check_elements(rows * max(m for m, _ in weights),
                                  "the output of an nn.Linear the call is given")

    def _limit(self, what: str, operation: Callable[[], Callable[..., Any] | None],
               args: list[Any], kwargs: dict[str, Any] | None = None) -> None:
        """Refuse, before it runs, an operation (operator, index or call) on a tensor beyond
        the element limit, or one that would make such a tensor (conformance.predict):
        `operation()` is torch's callable for it, run on meta tensors standing for `args` and
        `kwargs` when their sizes allow a result beyond the limit (None: none to run)."""
        kwargs = kwargs or {}
        big, bound, tensors = predict.scan([*args, *kwargs.values()], self.engine.is_tensor)
        if big is not None:
            raise limits.LimitRefused(
                f"{what} on a tensor of shape {list(big)} ({math.prod(big)} elements); the "
                f"case language allows {limits.MAX_TENSOR_ELEMENTS} per tensor and operates "
                "on none beyond it (a larger view, such as an `expand`, can be made and "
                "observed)")
        if bound <= limits.MAX_TENSOR_ELEMENTS or not tensors:
            return
        torch_operation = operation()
        operands = [*args, *kwargs.values()]
        made = None if torch_operation is None else predict.largest_made(
            torch_operation, args, kwargs, self.engine.is_tensor)
        count, complete = (0, False) if made is None else (made[0], made[2])
        if not complete:  # torch needed data, or an operand has no meta counterpart
            count = max(count, predict.broadcast_elements(operands, self.engine.is_tensor))
        if count > limits.MAX_TENSOR_ELEMENTS:
            shapes = ", ".join(str(list(s)) for s in predict.shapes(
                operands, self.engine.is_tensor))
            limits.check_elements(count, f"{what} on tensors of shapes {shapes}")

    def _check_made(self, value: Any, operands: Sequence[Any] = ()) -> Any:
        """`value`, what an operation on `operands` returned. Its new tensors (not views, not
        an operand returned by an in-place op; in a tuple or list too; a module's parameters)
        count among the run's live tensors while they live (limits.MAX_LIVE_ELEMENTS), and
        one beyond the element limit, which nothing before the operation foretold, ends
        there."""
        items = value if isinstance(value, (tuple, list)) else (value,)
        for item in items:
            if self.engine.is_tensor(item):
                if not any(item is o for o in operands):
                    self._made(item)
            elif self._is_module(item):
                for p in (getattr(item, "weight", None), getattr(item, "bias", None)):
                    if p is not None:
                        self._made(p)
        return value

    def _made(self, t: Any) -> None:
        """Count a tensor an operation made among the run's live ones (weakly held: a freed
        one is taken off when the count would go beyond the limit)."""
        count = math.prod(t.shape)
        if count == 0 or t._is_view():
            return
        limits.check_elements(count, "a tensor an operation made")
        key = id(t)
        known = self._live.get(key)
        if known is not None:
            if known[0]() is t:  # returned again (a module's parameter)
                return
            self.live -= known[1]  # the id of a tensor freed since
        self._live[key] = (weakref.ref(t), count)
        self.live += count
        if self.live > limits.MAX_LIVE_ELEMENTS:
            self._forget_freed()
        if self.live > limits.MAX_LIVE_ELEMENTS:
            gc.collect()  # what only reference cycles keep is not the program's
            self._forget_freed()
        if self.live > limits.MAX_LIVE_ELEMENTS:
            raise limits.RunLimit(
                f"the program's tensors hold more than {limits.MAX_LIVE_ELEMENTS} elements "
                "at once (those its operations made and it keeps; views and in-place results "
                "are not new): keep fewer or smaller tensors", self.line)

    def _forget_freed(self) -> None:
        for key, (ref, count) in list(self._live.items()):
            if ref() is None:
                del self._live[key]
                self.live -= count


LEGACY_CLASSES = frozenset(f"torch.{n}Tensor" for n in (
    "Float", "Double", "Half", "BFloat16", "Byte", "Char", "Short", "Int", "Long", "Bool"))


def factory_elements(path: str, args: list[Any], kwargs: dict[str, Any]) -> int | None:
    """How many elements a tensor factory call would allocate, when its sizes say so (`path`
    a function's dotted path, or a SIZED Tensor method's name)."""
    if path == "new_tensor":
        path = "torch.tensor"   # its data, as torch.tensor's
    if path in LEGACY_CLASSES:  # torch.FloatTensor(2, 3) is sized, FloatTensor([1.0]) data
        path = "torch.zeros" if all(isinstance(a, int) for a in args) else "torch.tensor"
    try:
        if path in api.SIZED_FACTORIES or path in api.SIZED_METHODS:
            # full's and new_full's size, then a value; empty_strided's, then strides
            first = path in ("torch.full", "new_full", "torch.empty_strided")
            size: Any = args[:1] if first else args
            size = kwargs.get("size", size)
            if len(size) == 1 and isinstance(size[0], (tuple, list)):
                size = size[0]
            return math.prod(max(int(n), 0) for n in size)
        if path == "torch.arange":
            bounds = [float(a) for a in args[:3]]
            start, end, step = (0.0, bounds[0], 1.0) if len(bounds) == 1 else \
                (bounds[0], bounds[1], bounds[2] if len(bounds) == 3 else 1.0)
            return max(math.ceil((end - start) / step), 0) if step else None
        if path == "torch.linspace":
            return max(int(kwargs.get("steps", args[2] if len(args) > 2 else 0)), 0)
        if path == "torch.nn.Linear":
            return max(int(args[0]), 0) * max(int(args[1]), 0)
        if path in ("torch.tensor", "torch.as_tensor"):
            # nested sequences may repeat one list many times: `[[0.0] * n] * n` is small
            # in Python and n * n elements in a tensor; a range is not materialised either
            data, count = (args[0] if args else kwargs.get("data")), 1
            while isinstance(data, (list, tuple, range)):
                length = -((data.start - data.stop) // data.step) if isinstance(
                    data, range) else len(data)
                count *= max(length, 0)
                if length <= 0 or isinstance(data, range):
                    break
                data = data[0]
            return count
    except (TypeError, ValueError, IndexError, OverflowError):
        return None  # the engine reports malformed sizes itself
    return None


def returns(operation: Callable[..., Any]) -> Callable[[], Callable[..., Any]]:
    """An operation torch has as it is (an operator), for OperationLimits._limit."""
    return lambda: operation


def _indexed(obj: Any, index: Any, value: Any) -> Any:
    """What `obj[index] = value` broadcasts the value to: `obj[index]`."""
    return obj[index]
