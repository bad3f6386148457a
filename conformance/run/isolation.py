"""Process-global engine state: read it around every run, restore it, name what changed.

Items share a process (and, under xdist, a worker), so a program that leaves grad mode off
would change the verdict of whatever runs after it. Every run of a program is wrapped in
`guard`: it records each setting below before the run, and afterwards restores any that
changed and reports them, so that the item that changed them fails and no other item sees
the change.

The table is engine-generic: each setting is reached through API paths on the engine's
module (torch's own names), and a setting whose paths an engine lacks is skipped for that
engine, so third engines without, say, anomaly mode still work. A setting without a way to
write it is still checked; the report then says it could not be restored.

Not listed, on purpose: random generators (a program's random values are served by the
harness, `harness_builtins.HarnessBuiltins.seeded`, so an engine's own generator decides nothing a
case observes) and warn-once flags (they cannot be reset; every run is under warn-always
instead, `interpreter.warn_always`, which gives those warnings every time).
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol, cast

from conformance.run import threads

Resolve = Callable[[str], Any]


def _on_off(value: object) -> str:
    return "enabled" if value else "disabled"


def _plain(value: object) -> str:
    return f"at {value}"


def _hooks(value: object) -> str:
    return "empty" if value is None else "with a (pack, unpack) pair on top"


@dataclass(frozen=True)
class Setting:
    name: str
    reads: tuple[str, ...]  # API paths that must all exist for the setting to be checked
    read: Callable[[Resolve], object]
    writes: tuple[str, ...] = ()  # paths `write` needs; none: it cannot be restored
    write: Callable[[Resolve, object], None] | None = None
    show: Callable[[object], str] = _plain


def _set_default_device(r: Resolve, value: object) -> None:
    # torch installs a device mode for any non-None default, which costs every later op a
    # dispatch; cpu is restored as "no default device", as the process started.
    r("torch.set_default_device")(None if str(value) == "cpu" else value)


def _pop_saved_tensor_hooks(r: Resolve, value: object) -> None:
    # A program can only push pairs it leaves on the stack; pop them until the pair that was
    # on top before the run is on top again (bounded: a program can push only so many).
    top = "torch._C._autograd._top_saved_tensors_default_hooks"
    for _ in range(1000):
        if r(top)(True) is None or r(top)(True) == value:
            return
        r("torch._C._autograd._pop_saved_tensors_default_hooks")()


def _exit_dual_levels(r: Resolve, value: object) -> None:
    """Exit the dual levels a program left open, down to the level before the run (torch
    keeps the current level in the module global `_current_level`; exiting a level drops
    every tangent made under it). The level is read from the module each time: the
    resolver keeps what it looked up, and the level changes as levels are exited."""
    forward_ad = r(_FORWARD_AD)
    for _ in range(1000):   # bounded: a program can enter only so many
        if forward_ad._current_level <= value:
            return
        forward_ad.exit_dual_level()


def _dual_level(value: object) -> str:
    return "with no dual level" if value == -1 else f"at dual level {value}"


_FORWARD_AD = "torch.autograd.forward_ad"
_DUAL_LEVEL = f"{_FORWARD_AD}._current_level"


# Two flags torch reads with two getters and sets with one call, `setter(first, second)`.
_ANOMALY = ("torch.is_anomaly_enabled", "torch.is_anomaly_check_nan_enabled")
_DETERMINISTIC = ("torch.are_deterministic_algorithms_enabled",
                  "torch.is_deterministic_algorithms_warn_only_enabled")


def _flag_of_pair(name: str, reads: tuple[str, str], setter: str, which: int,
                  keyword: str | None = None) -> Setting:
    """The setting of flag `which` (0 or 1) of a pair; restoring it passes the other flag's
    current value back to the setter, by position or, with `keyword`, by that keyword."""
    def write(r: Resolve, value: object) -> None:
        flags = [r(path)() for path in reads]
        flags[which] = value
        if keyword is None:
            r(setter)(*flags)
        else:
            r(setter)(flags[0], **{keyword: flags[1]})

    return Setting(name, reads, lambda r: r(reads[which])(), (setter,), write, _on_off)


_PRINT_OPTIONS = "torch._tensor_str.get_printoptions"

SETTINGS: tuple[Setting, ...] = (
    Setting("the default dtype", ("torch.get_default_dtype",),
            lambda r: r("torch.get_default_dtype")(), ("torch.set_default_dtype",),
            lambda r, v: r("torch.set_default_dtype")(v)),
    Setting("the default device", ("torch.get_default_device",),
            lambda r: r("torch.get_default_device")(), ("torch.set_default_device",),
            _set_default_device),
    # set_grad_enabled switches on construction, so its plain call sets the mode
    Setting("grad mode", ("torch.is_grad_enabled",), lambda r: r("torch.is_grad_enabled")(),
            ("torch.set_grad_enabled",), lambda r, v: r("torch.set_grad_enabled")(v),
            _on_off),
    # only its context manager sets it (no engine has a setter), so it is checked only
    Setting("inference mode", ("torch.is_inference_mode_enabled",),
            lambda r: r("torch.is_inference_mode_enabled")(), show=_on_off),
    _flag_of_pair("anomaly mode", _ANOMALY, "torch.set_anomaly_enabled", 0),
    _flag_of_pair("anomaly mode's NaN check", _ANOMALY, "torch.set_anomaly_enabled", 1),
    _flag_of_pair("deterministic algorithms", _DETERMINISTIC,
                  "torch.use_deterministic_algorithms", 0, "warn_only"),
    _flag_of_pair("deterministic algorithms' warn-only", _DETERMINISTIC,
                  "torch.use_deterministic_algorithms", 1, "warn_only"),
    Setting("the saved-tensor default hooks",
            ("torch._C._autograd._top_saved_tensors_default_hooks",),
            lambda r: r("torch._C._autograd._top_saved_tensors_default_hooks")(True),
            ("torch._C._autograd._pop_saved_tensors_default_hooks",),
            _pop_saved_tensor_hooks, _hooks),
    Setting("forward AD", (_DUAL_LEVEL,), lambda r: r(_DUAL_LEVEL),
            (f"{_FORWARD_AD}.exit_dual_level",), _exit_dual_levels, _dual_level),
    # round five: an engine that set these changed every later item's torch run (a print
    # precision of 2 made each later `str(x)` diverge; one intra-op thread can change a
    # parallel reduction's order). torch reads its print options only through a private
    # getter; an engine without it has nothing checked.
    Setting("the print options", (_PRINT_OPTIONS,), lambda r: r(_PRINT_OPTIONS)(),
            ("torch.set_printoptions",), lambda r, v: r("torch.set_printoptions")(
                **cast(dict[str, Any], v))),
    Setting("the number of intra-op threads", ("torch.get_num_threads",),
            lambda r: r("torch.get_num_threads")(), ("torch.set_num_threads",),
            lambda r, v: r("torch.set_num_threads")(v)),
)


def _resolver(module: ModuleType) -> Resolve:
    """Attribute lookup along an API path on `module`. Each path is looked up once per
    resolver (it is read, checked and read again around every run); a resolver lives for
    one read or restore, so a module changed since is looked up afresh."""
    found: dict[str, Any] = {}

    def resolve(path: str) -> Any:
        obj = found.get(path, _UNSEEN)
        if obj is _UNSEEN:
            obj = module
            for part in path.split(".")[1:]:
                obj = getattr(obj, part)
            found[path] = obj
        return obj
    return resolve


_UNSEEN = object()


def _has(resolve: Resolve, paths: tuple[str, ...]) -> bool:
    try:
        for p in paths:
            resolve(p)
    except AttributeError:
        return False
    return True


def read(module: ModuleType) -> dict[str, object]:
    """Each setting the engine has, by name: its current value."""
    r = _resolver(module)
    return {s.name: s.read(r) for s in SETTINGS if _has(r, s.reads)}


@dataclass(frozen=True)
class StateChange:
    setting: str
    before: object
    after: object
    restored: bool
    text: str = ""  # what changed, for what is not a setting (a thread left running)

    def describe(self) -> str:
        if self.text:
            return self.text
        show = next(s.show for s in SETTINGS if s.name == self.setting)
        text = f"{self.setting} {show(self.after)} (was {show(self.before)})"
        return text if self.restored else f"{text}, which could not be restored"


def restore(module: ModuleType, before: dict[str, object]) -> list[StateChange]:
    """Set back every setting that differs from `before`; what differed."""
    r = _resolver(module)
    after = read(module)
    changes = []
    for s in SETTINGS:
        if s.name not in before or after.get(s.name) == before[s.name]:
            continue
        restored = s.write is not None and _has(r, s.writes)
        if restored:
            assert s.write is not None
            s.write(r, before[s.name])
            restored = read(module).get(s.name) == before[s.name]
        changes.append(StateChange(s.name, before[s.name], after.get(s.name), restored))
    return changes


class Guarded(Protocol):
    """What `guard` needs of an engine (engine.Engine has it; named here so that this module,
    below the engine protocol, does not import it)."""

    def global_state(self) -> dict[str, object]: ...

    def restore_global_state(self, before: dict[str, object]) -> list[StateChange]: ...


# Each engine's settings as its last guarded run left them (after restoring): what the next
# run must start from. Weak: a test's throwaway engine goes with it.
_settled: weakref.WeakKeyDictionary[Guarded, dict[str, object]] = \
    weakref.WeakKeyDictionary()


@contextlib.contextmanager
def guard(engine: Guarded) -> Iterator[list[StateChange]]:
    """Record the engine's settings; on exit restore them, stop the threads the run left
    running (threads.watch) and fill the list with both.

    Before the run, whatever changed since the engine's last guarded run ended (something
    outside any item: a thread the harness could not stop, or one that ended before its
    item did but changed a setting afterwards) is set back first, and not blamed on this
    item: a verdict depends on its own item only."""
    settled = _settled.get(engine)
    if settled is not None:
        engine.restore_global_state(settled)
    before = engine.global_state()
    changes: list[StateChange] = []
    try:
        with threads.watch() as left:
            yield changes
    finally:
        changes.extend(engine.restore_global_state(before))
        changes.extend(StateChange("a thread", None, t.name, t.stopped,
                                   t.describe()) for t in left)
        _settled[engine] = engine.global_state()


def describe(engine: str, changes: list[StateChange]) -> str:
    """'torch left grad mode disabled (was enabled), ...' for an item's report."""
    return f"{engine} left " + "; ".join(c.describe() for c in changes)
