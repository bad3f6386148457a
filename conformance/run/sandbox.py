"""The API sandbox of the interpreter: a program reaches an engine only through the API
table (`case/api.py`), and stores only into values it made. Paths the engine lacks are noted
on the trace (the verdict `unsupported`)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformance.case import api
from conformance.run.engine import Engine, MissingAPI, lacks
from conformance.run.observe import EngineMade
from conformance.run.trace import Trace


class CaseFailure(Exception):
    """The case's own check failed (assert, assert_close, raises, warns)."""


@dataclass(frozen=True)
class Namespace:
    """A dotted API path that is a namespace (`torch`, `torch.autograd`, ...)."""

    path: str


@dataclass(frozen=True)
class Expectation:
    """What `raises(kind)` / `warns(kind)` / `no_warnings()` evaluate to; only `with` may
    use it. `no_warnings()` is a warning expectation without a kind: none may be issued."""

    warning: bool
    kind: str | None
    # raises(kind, type="Name"): the error's class or one of its bases is named Name
    exception: str | None = None
    # warns(kind, count=N): the block issued exactly N warnings, each of that kind (a
    # test's `len(w) == N` over a block whose warnings it expects all of one kind)
    count: int | None = None

    def describe(self) -> str:
        what = f"kind {self.kind!r}"
        return what if self.exception is None else f"{what} of type {self.exception}"

    def type_differs(self, error_class: type | None) -> bool:
        """Whether an error of `error_class` fails this expectation's `type=`."""
        return self.exception is not None and (error_class is None or self.exception not in
                                               {c.__name__ for c in error_class.__mro__})


class HeldWeakly(dict[int, Any]):
    """Objects by id, held by weak references (one that takes none is held): `id(x) in
    self` only while that very object lives."""

    def add(self, obj: Any) -> None:
        try:
            self[id(obj)] = weakref.ref(obj)
        except TypeError:
            self[id(obj)] = lambda: obj

    def __contains__(self, key: object) -> bool:
        ref = self.get(key)  # type: ignore[call-overload]
        obj = None if ref is None else ref()
        return obj is not None and id(obj) == key


class PlainObject:
    """What `object()` makes in a program: a plain value with no attribute, which (unlike
    an instance of `object` itself) takes weak references, as the instances of the empty
    classes torch's tests store in a node's metadata do (`class Foo: pass`)."""

    __slots__ = ("__weakref__",)


class WeakrefModule:
    """The builtin `weakref` of a program: only `weakref.ref(x)`, Python's weak reference
    (its call gives x, or None once x is freed). The harness keeps none of the program's
    values alive (observe.py holds tensors weakly), so what a weak reference sees freed is
    what the engine freed."""

    __slots__ = ()

    @staticmethod
    def ref(obj: Any) -> weakref.ref[Any]:
        return weakref.ref(obj)


WEAKREF = WeakrefModule()
_WEAKREF_API = api.OBJECT_ATTRIBUTES["weakref module"]


class Scope:
    def __init__(self, parent: Scope | None = None) -> None:
        self.vars: dict[str, Any] = {}
        self.parent = parent

    def get(self, name: str) -> Any:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            scope = scope.parent
        raise CaseFailure(f"name `{name}` is used before it is assigned")


# Values that are Python's own, not an engine's: an AttributeError on them (`.zero_()` on a
# `.grad` that is None) is the behaviour under test, never a missing API.
_PLAIN: frozenset[type] = frozenset(
    {type(None), bool, int, float, complex, str, list, tuple, dict})


class Sandbox:
    """What a program may reach of an engine, and where it may store."""

    # API paths the harness serves itself (harness_builtins.HarnessBuiltins fills it)
    seeded: dict[str, Callable[..., Any]]

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.trace = Trace(engine.name)
        # ctx objects handed to Function methods, by id: they may carry the program's own
        # state. Held weakly: in torch the ctx keeps its node's metadata alive, and a
        # program watches that go (weakref.ref); an id counts only while its very object
        # lives, so a reused id is no ctx.
        self.contexts = HeldWeakly()
        # Names the program stored on its ctx objects (its Function state).
        self.ctx_names: set[str] = set()
        # Tensors the autograd engine made (autograd.grad's results, every tensor once seen as
        # a .grad: observe.observe notes those), by identity (see observe.Observer).
        self.engine_made = EngineMade()
        self._module_class: Any = None  # the engine's nn.Module, once looked up

    def _path(self, path: str) -> Any:
        """The object a program reaches at an API path: a namespace, a harness builtin, or
        the engine's."""
        if path in api.NAMESPACES:
            return Namespace(path)
        if path in self.seeded:
            return self.seeded[path]
        if path == "torch.autograd.grad":
            return self._autograd_grad
        if path in api.FUNCTIONS:
            return self._resolve(path)
        raise CaseFailure(f"`{path}` is not in the supported API")  # checked at load too

    def _autograd_grad(self, *args: Any, **kwargs: Any) -> Any:
        """The engine's autograd.grad, noting which tensors it returned (engine-made)."""
        grads = self._resolve("torch.autograd.grad")(*args, **kwargs)
        for g in grads:
            if g is not None:
                self.engine_made.add(g)
        return grads

    # ---- API the engine lacks (the verdict `unsupported`) ------------------------------
    def _resolve(self, path: str) -> Any:
        """The engine's object at an API path; a path it lacks is noted on the trace, and
        the statement fails with the engine's AttributeError."""
        try:
            return self.engine.resolve(path)
        except MissingAPI as missing:
            self._missing(missing.path)
            raise missing.error from None

    def _attribute(self, obj: Any, attr: str) -> Any:
        """`obj.attr` for an attribute of the API table; noted as missing when an engine
        value lacks it outright (not when its own code raised, nor on None or a number)."""
        try:
            return getattr(obj, attr)
        except AttributeError:
            if type(obj) not in _PLAIN and lacks(obj, attr):
                self._missing(f"{self._owner(obj, attr)}.{attr}")
            raise

    def _owner(self, obj: Any, attr: str) -> str:
        """What an attribute belongs to, named as the API table names it (Tensor, ctx,
        grad_fn, module, ...), so that one missing method counts once across ops."""
        if self.engine.is_tensor(obj):
            return "Tensor"
        if id(obj) in self.contexts:
            return "ctx"
        if isinstance(obj, type):
            return "Function"
        owners = [k for k, names in api.OBJECT_ATTRIBUTES.items()
                  if attr in names and not k.startswith("tensor")]
        return owners[0] if owners else type(obj).__name__

    def _missing(self, path: str) -> None:
        if path not in self.trace.missing_api:
            self.trace.missing_api.append(path)

    def _check_object_attribute(self, obj: Any, attr: str) -> None:
        # The loader checked the name; this guards values the loader could not see.
        if id(obj) in self.contexts:
            # a ctx is also the engine's backward node (torch's y.grad_fn is the ctx): its
            # table and grad_fn's, and the program's own state; never `apply` and the like
            if attr in self.ctx_names or attr in api.OBJECT_ATTRIBUTES["ctx"] or \
                    attr in api.OBJECT_ATTRIBUTES["grad_fn"]:
                return
            raise CaseFailure(f"ctx attribute `{attr}` is not in the supported API")
        if attr not in api.ATTRIBUTES or attr.startswith("__") or isinstance(
                obj, (Namespace, Expectation, Scope)) or (isinstance(obj, WeakrefModule) and
                                                          attr not in _WEAKREF_API):
            raise CaseFailure(f"attribute `{attr}` is not in the supported API")
        if isinstance(obj, type) and attr not in api.OBJECT_ATTRIBUTES["Function class"]:
            # a class's methods called unbound could write onto the class (isolation)
            raise CaseFailure(f"attribute `{attr}` of the class `{obj.__name__}` is not in "
                              "the supported API")

    def _check_attribute_store(self, obj: Any, attr: str) -> None:
        """Isolation: the program sets attributes only on values it made, never on a class,
        namespace or engine object whose change later runs in this process would see."""
        if id(obj) in self.contexts:
            if attr.startswith("_") or attr in api.CTX_ENGINE_MEMBERS or (
                    hasattr(obj, attr) and attr not in self.ctx_names):
                raise CaseFailure(f"cannot set ctx attribute `{attr}`: the name belongs to "
                                  "the engine's ctx; store Function state under another name")
            self.ctx_names.add(attr)
            return
        if attr not in api.SETTABLE:
            raise CaseFailure(f"cannot set attribute `{attr}`; settable: "
                              + ", ".join(sorted(api.SETTABLE)))
        if isinstance(obj, type) or not (self.engine.is_tensor(obj) or self._is_module(obj)):
            raise CaseFailure(f"cannot set `{attr}` on {_describe_object(obj)}: a program "
                              "sets attributes only on its own tensors, modules and ctx")

    def _check_item_store(self, obj: Any, metadata: bool = False) -> None:
        """Items are stored into the program's tensors and lists, and (`metadata`: the
        target is `<value>.metadata`) into a backward node's metadata dict."""
        if metadata and type(obj) is dict:
            return
        if isinstance(obj, type) or not (self.engine.is_tensor(obj) or isinstance(obj, list)):
            raise CaseFailure(f"cannot assign items of {_describe_object(obj)}: a program "
                              "assigns items only of its own tensors and lists, and of a node's "
                              "metadata dict (`y.grad_fn.metadata[k] = v`)")

    def _is_module(self, obj: Any) -> bool:
        if type(obj) in _PLAIN:
            return False
        if self._module_class is None:
            try:
                self._module_class = self.engine.resolve("torch.nn.Module")
            except AttributeError:  # an engine without modules
                self._module_class = ()
        return isinstance(obj, self._module_class)


def _describe_object(obj: Any) -> str:
    if isinstance(obj, type):
        return f"the class `{obj.__name__}`"
    return f"a `{type(obj).__name__}` object"


def resolve_on(module: Any, path: str) -> Any:
    """The object at an API path (`torch.nn.functional.linear`) on `module`, or None."""
    obj = module
    for part in path.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj
