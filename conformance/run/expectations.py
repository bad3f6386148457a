"""Known divergences: an expectations file says how an engine is known to behave on items.

The file (by default `expectations/<engine>.yaml`) is a YAML mapping with one key, `known`,
a list of entries. An entry names case items by an id pattern, or generated-program
divergences by field and statement patterns, with optional conditions and a required reason:

```yaml
known:
  - items: "cases/higher_order/abs_*.yaml::*"   # fnmatch over item ids
    devices: [cpu]                              # optional conditions: the item's device,
    dtypes: [float64]                           #   its dtype,
    torch: ">=2.13,<2.14"                       #   torch's release (a version specifier),
    python: ">=3.12"                            #   Python's,
    platform: linux                             #   sys.platform (one or a list),
    engine_version: "<0.4"                      #   the engine's __version__,
    backend: inductor                           #   its `conformance_backend` (one or a list)
    reason: torch returns an efficient zero tensor; the engine returns no gradient
  - items: "cases/hooks/slow_*.yaml::*"
    status: timeout                             # expected: diverges (default), error,
    reason: the engine's hook dispatch is slow  #   timeout, unsupported, or a list
  - items: "cases/views/unfold_*.yaml::*"
    skip: true                                  # never run (the engine hangs or crashes)
    reason: unfold crashes the engine
  - generated: {field: "*.signed_zero", statement: "* = *.amax(*"}
    reason: ...
```

An item's *status* is its verdict before the file is consulted, except that an `error` the
item time limit caused is `timeout`. `decision.decide` is the one rule that maps it through
the entries that apply to the item: a status an entry allows makes the item `known` (an expected
failure, never a pass), or leaves a pass a pass (`status: [pass, diverges]`: intermittent);
an item listed as failing that passes now fails naming the entry, so the list cannot rot.
Entries with `skip: true` are checked before an item runs: it is `skipped` with the reason.
"""

from __future__ import annotations

import fnmatch
import importlib
import platform
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from conformance.case import vocabulary
from conformance.case.diagnostics import CaseError
from conformance.run.verdicts import AGREEING, TIMEOUT, Verdict, statuses

ENTRY_KEYS = ("items", "generated", "status", "skip", "devices", "dtypes", "torch", "python",
              "platform", "engine_version", "backend", "reason")
# The statuses an entry may expect (verdicts.Verdict.expectable). `pass` only beside another
# (an intermittent item).
STATUSES = statuses(v for v in Verdict if v.expectable)
DEFAULT_STATUSES: tuple[str, ...] = (Verdict.DIVERGES.value,)
# Version conditions: the entry key and the Environment attribute it is checked against.
VERSION_KEYS = ("torch", "python", "engine_version")


@dataclass(frozen=True)
class Environment:
    """The run's facts that entries' conditions test besides each item's device and dtype
    (as a report's run_info records them)."""
    torch: str | None
    python: str
    platform: str
    engine_version: str | None = None
    # the engine module's `conformance_backend`: what it runs a case with, where it has a
    # choice (torch.compile's aot_eager or inductor), which decides what it gets wrong
    backend: str | None = None
    # else the engine module's name, to read its backend from when an entry's `backend:`
    # condition is first checked (a run's expectations are loaded before the engine is
    # imported, and loading them imports nothing)
    engine: str | None = None

    @staticmethod
    def current(engine_version: str | None = None, engine: str | None = None
                ) -> Environment:
        """This process's: the installed torch (read without importing it), Python and
        platform; `engine`'s backend is read when first needed."""
        try:
            torch: str | None = metadata.version("torch")
        except metadata.PackageNotFoundError:
            torch = None
        return Environment(torch, platform.python_version(), sys.platform, engine_version,
                           engine=engine)

    def engine_backend(self) -> str | None:
        return self.backend if self.engine is None else declared_backend(self.engine)


def declared_backend(engine: str) -> str | None:
    """The `conformance_backend` of the engine module `engine` (imported if it is not yet);
    None if it declares none or cannot be imported (it then meets no backend condition)."""
    try:
        module = sys.modules.get(engine) or importlib.import_module(engine)
    except Exception:
        return None
    backend = getattr(module, "conformance_backend", None)
    return None if backend is None else str(backend)


def _release(version: str | None) -> Version | None:
    """The release `version` is or leads to: without local part, pre- or dev-release
    (2.13.0+cpu and 2.14.0.dev20260101 count as 2.13.0 and 2.14.0, so a nightly meets the
    range of its release); None if it is no version."""
    try:
        return None if version is None else Version(Version(version).base_version)
    except InvalidVersion:
        return None


def status_of(verdict: str, timed_out: bool = False) -> str:
    """An item's status, as entries name it (see the module docstring)."""
    return TIMEOUT if verdict == Verdict.ERROR.value and timed_out else verdict


@dataclass(frozen=True)
class Known:
    index: int  # position in the file, to name the entry
    line: int  # its first line (the `- ` of the list item), 1-based
    end: int  # its last line holding any of its text
    reason: str
    items: str | None = None
    field: str | None = None  # for generated programs
    statement: str | None = None
    statuses: tuple[str, ...] = DEFAULT_STATUSES
    skip: bool = False
    devices: tuple[str, ...] | None = None
    dtypes: tuple[str, ...] | None = None
    torch: str | None = None
    python: str | None = None
    platform: tuple[str, ...] | None = None
    engine_version: str | None = None
    backend: tuple[str, ...] | None = None

    def where(self, path: str) -> str:
        return f"{path}:{self.line}"

    @property
    def generated_entry(self) -> bool:
        return self.items is None

    def expects(self) -> str:
        """What the entry expects, as messages say it: `diverges`, `error or timeout`."""
        return "skip" if self.skip else " or ".join(self.statuses)

    def allows(self, status: str) -> bool:
        # masked: the engine differs only in fields it declares it does not match, a pass
        status = Verdict.PASS.value if status in AGREEING else status
        return not self.skip and status in self.statuses

    def _conditions(self, device: str, dtype: str, env: Environment) -> bool:
        if self.devices is not None and device not in self.devices:
            return False
        if self.dtypes is not None and dtype not in self.dtypes:
            return False
        if self.platform is not None and env.platform not in self.platform:
            return False
        if self.backend is not None and env.engine_backend() not in self.backend:
            return False  # an engine without a backend meets no backend condition
        for key in VERSION_KEYS:
            spec = getattr(self, key)
            if spec is None:
                continue
            version = _release(getattr(env, key))
            # an unknown or unparsable version meets no range
            if version is None or version not in SpecifierSet(spec):
                return False
        return True

    def applies_to_item(self, item_id: str, device: str, dtype: str, env: Environment
                        ) -> bool:
        return self.items is not None and fnmatch.fnmatchcase(item_id, self.items) and \
            self._conditions(device, dtype, env)

    def matches_generated(self, field: str, statement: str, device: str, dtype: str,
                          env: Environment) -> bool:
        if self.field is None and self.statement is None:
            return False
        return (self.field is None or fnmatch.fnmatchcase(field, self.field)) and \
            (self.statement is None or fnmatch.fnmatchcase(statement, self.statement)) and \
            self._conditions(device, dtype, env)


@dataclass(frozen=True)
class Expectations:
    path: str
    known: tuple[Known, ...]
    # the run the entries' conditions are checked against
    environment: Environment = Environment(None, "", "")

    def under(self, environment: Environment) -> Expectations:
        return replace(self, environment=environment)

    def applying(self, item_id: str, device: str, dtype: str) -> tuple[Known, ...]:
        """The entries that apply to a case item (pattern and conditions), in file order."""
        return tuple(k for k in self.known
                     if k.applies_to_item(item_id, device, dtype, self.environment))

    def skipping(self, item_id: str, device: str, dtype: str) -> Known | None:
        """The first `skip: true` entry that applies to the item: it must not run."""
        return next((k for k in self.applying(item_id, device, dtype) if k.skip), None)

    def for_item(self, item_id: str, device: str, dtype: str) -> Known | None:
        """The first entry that applies to a case item."""
        return next(iter(self.applying(item_id, device, dtype)), None)

    def for_generated(self, field: str, statement: str, device: str, dtype: str
                      ) -> Known | None:
        return next((k for k in self.known if k.matches_generated(
            field, statement, device, dtype, self.environment)), None)


NONE = Expectations("<none>", ())


def _fail(path: str, node: yaml.Node, message: str, fix: str | None = None) -> CaseError:
    return CaseError(message, file=path, line=node.start_mark.line + 1, fix=fix)


def _strings(path: str, node: yaml.Node, key: str, valid: tuple[str, ...] | None,
             one: bool = False) -> tuple[str, ...]:
    """A list of names (`one`: or a single name), each among `valid` when given."""
    if one and isinstance(node, yaml.ScalarNode) and str(node.value).strip():
        nodes: list[yaml.Node] = [node]
    elif isinstance(node, yaml.SequenceNode) and node.value:
        nodes = list(node.value)
    else:
        raise _fail(path, node, f"`{key}` must be a {'name or a ' if one else ''}"
                                "non-empty list")
    for n in nodes:
        if not (isinstance(n, yaml.ScalarNode) and n.tag == "tag:yaml.org,2002:str"):
            raise _fail(path, n, f"`{key}` lists names", "write each as a string")
        if valid is not None and n.value not in valid:
            singular = key if one else key[:-1]  # status, platform; devices, dtypes
            raise _fail(path, n, f"unknown {singular} `{n.value}`",
                        f"valid: {', '.join(valid)}")
    return tuple(str(n.value) for n in nodes)


def _text(path: str, node: yaml.Node, key: str) -> str:
    """A pattern or a name: a non-empty YAML string (`items: 5` names no item id)."""
    if not (isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str"
            and str(node.value).strip()):
        raise _fail(path, node, f"`{key}` must be a non-empty string",
                    'quote it, e.g. items: "cases/ops/exp_*.yaml::*"')
    return str(node.value)


def _specifier(path: str, node: yaml.Node, key: str) -> str:
    spec = str(node.value) if isinstance(node, yaml.ScalarNode) else ""
    try:
        SpecifierSet(spec)
    except InvalidSpecifier:
        spec = ""
    if not spec.strip():
        raise _fail(path, node, f"invalid version range for `{key}`: `{node.value}`",
                    "write it like >=2.13,<2.14") from None
    return spec


def _last_line(node: yaml.Node, lines: list[str]) -> int:
    """The last line (0-based) holding text of `node`: a block collection's end mark lies
    past trailing comment lines, a block scalar's past trailing blank lines."""
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and not node.flow_style:
        children = [n for pair in node.value for n in pair] \
            if isinstance(node, yaml.MappingNode) else node.value
        return max(_last_line(n, lines) for n in children)
    end = node.end_mark
    line = end.line if end.column > 0 else end.line - 1
    while line > node.start_mark.line and line < len(lines) and not lines[line].strip():
        line -= 1
    return max(line, node.start_mark.line)


def _entry(path: str, index: int, entry: yaml.Node, lines: list[str]) -> Known:
    if not isinstance(entry, yaml.MappingNode):
        raise _fail(path, entry, "each entry is a mapping", f"keys: {', '.join(ENTRY_KEYS)}")
    fields = {k.value: v for k, v in entry.value}
    for k, _ in entry.value:
        if k.value not in ENTRY_KEYS:
            raise _fail(path, k, f"unknown key `{k.value}`", f"keys: {', '.join(ENTRY_KEYS)}")
    if "reason" not in fields or not str(fields["reason"].value).strip():
        raise _fail(path, entry, "every entry needs a `reason`")
    if not str(fields["reason"].value).replace("\n", " ").isprintable():
        # it is printed as the item's xfail reason and written into summary.md: an escape
        # sequence there redraws the terminal, a carriage return hides what precedes it
        raise _fail(path, fields["reason"], "the `reason` holds a control character",
                    "write the reason as plain text (line breaks are allowed)")
    if ("items" in fields) == ("generated" in fields):
        raise _fail(path, entry, "an entry names either `items` or `generated`")
    generated: dict[str, str] = {}
    if "generated" in fields:
        node = fields["generated"]
        if not isinstance(node, yaml.MappingNode) or not node.value:
            raise _fail(path, node, "`generated` maps `field` and/or `statement` to patterns")
        generated = {k.value: _text(path, v, f"generated.{k.value}") for k, v in node.value}
        if not set(generated) <= {"field", "statement"}:
            raise _fail(path, node, "`generated` takes `field` and `statement` only")
        for key in ("status", "skip"):
            if key in fields:
                raise _fail(path, fields[key], f"`{key}` is for `items` entries: a generated "
                                               "entry lists divergences only")
    skip = False
    if "skip" in fields:
        node = fields["skip"]
        if node.tag != "tag:yaml.org,2002:bool":
            raise _fail(path, node, "`skip` is true or false")
        skip = yaml.constructor.SafeConstructor.bool_values[str(node.value).lower()]
        if skip and "status" in fields:
            raise _fail(path, fields["status"], "a skipped item never runs: it has no status",
                        "remove `status` or `skip`")
    statuses: tuple[str, ...] = DEFAULT_STATUSES
    if "status" in fields:
        statuses = _strings(path, fields["status"], "status", STATUSES, one=True)
        if set(statuses) == {Verdict.PASS.value}:
            raise _fail(path, fields["status"], "an entry expecting only `pass` expects "
                        "nothing", "list `pass` beside the failing statuses of an "
                        "intermittent item, e.g. [pass, diverges]")
    devices, dtypes = (_strings(path, fields[k], k, v) if k in fields else None for k, v in
                       (("devices", vocabulary.DEVICES), ("dtypes", vocabulary.DTYPES)))
    versions = {k: _specifier(path, fields[k], k) for k in VERSION_KEYS if k in fields}
    return Known(
        index=index, line=entry.start_mark.line + 1, end=_last_line(entry, lines) + 1,
        reason=str(fields["reason"].value),
        items=_text(path, fields["items"], "items") if "items" in fields else None,
        field=generated.get("field"), statement=generated.get("statement"),
        statuses=statuses, skip=skip, devices=devices, dtypes=dtypes,
        platform=_strings(path, fields["platform"], "platform", None, one=True)
        if "platform" in fields else None,
        backend=_strings(path, fields["backend"], "backend", None, one=True)
        if "backend" in fields else None, **versions)


def loads(text: str, path: str, environment: Environment | None = None, *,
          empty_ok: bool = True) -> Expectations:
    """The expectations in `text` (the file `path`); CaseError naming file and line when
    malformed. A text with no YAML document (empty, or only comments) holds no entries when
    `empty_ok` (a file `--write-expectations` is to fill), else it is an error."""
    env = environment or Environment.current()
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        raise CaseError(f"cannot read the expectations file: {e}", file=path) from None
    if root is None and empty_ok:
        return Expectations(path, (), env)
    if root is None:  # a run's file: empty by mistake (cut short, not yet written)
        raise CaseError("the expectations file holds no YAML document (it is empty or only "
                        "comments)", file=path, line=1,
                        fix="write `known: []` for no known divergences, list entries "
                            "under `known:`, or fill it with --write-expectations")
    if not isinstance(root, yaml.MappingNode) or [k.value for k, _ in root.value] != ["known"]:
        raise CaseError("an expectations file is a mapping with the single key `known`",
                        file=path, line=1, fix="start with `known:` and a list of entries")
    entries = root.value[0][1]
    if isinstance(entries, yaml.ScalarNode) and entries.tag == "tag:yaml.org,2002:null":
        return Expectations(path, (), env)  # `known:` with nothing under it yet
    if not isinstance(entries, yaml.SequenceNode):
        raise _fail(path, entries, "`known` must be a list of entries")
    lines = text.splitlines()
    return Expectations(path, tuple(_entry(path, i, e, lines)
                                    for i, e in enumerate(entries.value)), env)


def load(path: str | Path, shown: str | None = None, environment: Environment | None = None,
         *, empty_ok: bool = False) -> Expectations:
    """The expectations in `path`, their conditions checked against `environment` (default:
    this process's, the engine's version unknown); CaseError naming file and line when
    malformed, or empty unless `empty_ok` (the run fills it with --write-expectations).
    `shown` is how messages name the file (e.g. relative to the project root), by default
    `path`."""
    name = str(path) if shown is None else shown
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CaseError(f"cannot read the expectations file: {e}", file=name) from None
    return loads(text, name, environment, empty_ok=empty_ok)


def default_path(root: Path, engine: str) -> Path:
    return root / "expectations" / f"{engine}.yaml"


def find_default(engine: str, roots: Iterable[Path]) -> Path | None:
    """The first `expectations/<engine>.yaml` that exists under one of `roots`."""
    return next((p for p in (default_path(r, engine) for r in roots) if p.is_file()), None)
