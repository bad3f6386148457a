"""Known divergences: an expectations file lists where an engine is known to differ.

The file (by default `expectations/<engine>.yaml`) is a YAML mapping with one key, `known`,
a list of entries. An entry names case items by an id pattern, or generated-program
divergences by field and statement patterns, with optional conditions and a required reason:

```yaml
known:
  - items: "cases/higher_order/abs_*.yaml::*"   # fnmatch over item ids
    devices: [cpu]                              # optional
    dtypes: [float64]                           # optional
    torch: ">=2.13,<2.14"                       # optional version specifier
    reason: torch returns an efficient zero tensor; the engine returns no gradient
  - generated: {field: "*.signed_zero", statement: "* = *.amax(*"}
    reason: ...
```

A listed item is reported as `known` (an expected failure, never a pass). A listed item that
now passes, and an entry that matches nothing in a run, are reported so the list cannot rot.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from conformance import vocabulary
from conformance.diagnostics import CaseError

ENTRY_KEYS = ("items", "generated", "devices", "dtypes", "torch", "reason")


@dataclass(frozen=True)
class Known:
    index: int  # position in the file, to name the entry
    line: int
    reason: str
    items: str | None = None
    field: str | None = None  # for generated programs
    statement: str | None = None
    devices: tuple[str, ...] | None = None
    dtypes: tuple[str, ...] | None = None
    torch: str | None = None

    def where(self, path: str) -> str:
        return f"{path}:{self.line}"

    def _conditions(self, device: str, dtype: str, torch_version: str) -> bool:
        if self.devices is not None and device not in self.devices:
            return False
        if self.dtypes is not None and dtype not in self.dtypes:
            return False
        if self.torch is not None:
            release = Version(torch_version.split("+")[0])
            if release not in SpecifierSet(self.torch):
                return False
        return True

    def matches_item(self, item_id: str, device: str, dtype: str, torch_version: str) -> bool:
        return self.items is not None and fnmatch.fnmatchcase(item_id, self.items) and \
            self._conditions(device, dtype, torch_version)

    def matches_generated(self, field: str, statement: str, device: str, dtype: str,
                          torch_version: str) -> bool:
        if self.field is None and self.statement is None:
            return False
        return (self.field is None or fnmatch.fnmatchcase(field, self.field)) and \
            (self.statement is None or fnmatch.fnmatchcase(statement, self.statement)) and \
            self._conditions(device, dtype, torch_version)


@dataclass(frozen=True)
class Expectations:
    path: str
    known: tuple[Known, ...]

    def for_item(self, item_id: str, device: str, dtype: str, torch_version: str
                 ) -> Known | None:
        return next((k for k in self.known
                     if k.matches_item(item_id, device, dtype, torch_version)), None)

    def for_generated(self, field: str, statement: str, device: str, dtype: str,
                      torch_version: str) -> Known | None:
        return next((k for k in self.known if k.matches_generated(
            field, statement, device, dtype, torch_version)), None)


NONE = Expectations("<none>", ())


def _fail(path: str, node: yaml.Node, message: str, fix: str | None = None) -> CaseError:
    return CaseError(message, file=path, line=node.start_mark.line + 1, fix=fix)


def _strings(path: str, node: yaml.Node, key: str, valid: tuple[str, ...]
             ) -> tuple[str, ...]:
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise _fail(path, node, f"`{key}` must be a non-empty list")
    values = tuple(str(v.value) for v in node.value)
    for v, n in zip(values, node.value, strict=True):
        if v not in valid:
            raise _fail(path, n, f"unknown {key[:-1]} `{v}`", f"valid: {', '.join(valid)}")
    return values


def load(path: str | Path, shown: str | None = None) -> Expectations:
    """The expectations in `path`; CaseError naming file and line when malformed. `shown`
    is how messages name the file (e.g. relative to the project root), by default `path`."""
    source = Path(path)
    path = str(path) if shown is None else shown
    try:
        root = yaml.compose(source.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError) as e:
        raise CaseError(f"cannot read the expectations file: {e}", file=path) from None
    if root is None:
        return Expectations(path, ())
    if not isinstance(root, yaml.MappingNode) or [k.value for k, _ in root.value] != ["known"]:
        raise CaseError("an expectations file is a mapping with the single key `known`",
                        file=path, line=1, fix="start with `known:` and a list of entries")
    entries = root.value[0][1]
    if not isinstance(entries, yaml.SequenceNode):
        raise _fail(path, entries, "`known` must be a list of entries")
    known = []
    for index, entry in enumerate(entries.value):
        if not isinstance(entry, yaml.MappingNode):
            raise _fail(path, entry, "each entry is a mapping", f"keys: {', '.join(ENTRY_KEYS)}")
        fields = {k.value: v for k, v in entry.value}
        for k, _ in entry.value:
            if k.value not in ENTRY_KEYS:
                raise _fail(path, k, f"unknown key `{k.value}`", f"keys: {', '.join(ENTRY_KEYS)}")
        if "reason" not in fields or not str(fields["reason"].value).strip():
            raise _fail(path, entry, "every entry needs a `reason`")
        if ("items" in fields) == ("generated" in fields):
            raise _fail(path, entry, "an entry names either `items` or `generated`")
        generated: dict[str, str] = {}
        if "generated" in fields:
            node = fields["generated"]
            if not isinstance(node, yaml.MappingNode) or not node.value:
                raise _fail(path, node, "`generated` maps `field` and/or `statement` to "
                                        "patterns")
            generated = {k.value: str(v.value) for k, v in node.value}
            if not set(generated) <= {"field", "statement"}:
                raise _fail(path, node, "`generated` takes `field` and `statement` only")
        torch_spec = None
        if "torch" in fields:
            torch_spec = str(fields["torch"].value)
            try:
                SpecifierSet(torch_spec)
            except InvalidSpecifier:
                raise _fail(path, fields["torch"], f"invalid version range `{torch_spec}`",
                            "write it like >=2.13,<2.14") from None
        known.append(Known(
            index=index, line=entry.start_mark.line + 1, reason=str(fields["reason"].value),
            items=str(fields["items"].value) if "items" in fields else None,
            field=generated.get("field"), statement=generated.get("statement"),
            devices=_strings(path, fields["devices"], "devices", vocabulary.DEVICES)
            if "devices" in fields else None,
            dtypes=_strings(path, fields["dtypes"], "dtypes", vocabulary.DTYPES)
            if "dtypes" in fields else None,
            torch=torch_spec,
        ))
    return Expectations(path, tuple(known))


def default_path(root: Path, engine: str) -> Path:
    return root / "expectations" / f"{engine}.yaml"


def find_default(engine: str, roots: Iterable[Path]) -> Path | None:
    """The first `expectations/<engine>.yaml` that exists under one of `roots`."""
    return next((p for p in (default_path(r, engine) for r in roots) if p.is_file()), None)
