"""Loading case files: YAML with line numbers, checked against the case format contract.

The format is documented in docs/case-format.md. Every problem is a CaseError naming the
file, the line and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from conformance import language, vocabulary
from conformance import program as ir
from conformance.diagnostics import CaseError

REQUIRED = ("description", "features", "program")
OPTIONAL = ("devices", "dtypes", "seed", "source")


@dataclass(frozen=True)
class Case:
    path: str  # as given (relative paths stay relative, for ids and repro commands)
    description: str
    features: tuple[str, ...]
    program: ir.Program
    source_text: str
    devices: tuple[str, ...]
    dtypes: tuple[str, ...]
    seed: int
    source: str | None
    # File line of the program's line 1, minus one: file line = program line + offset.
    line_offset: int


def _fail(path: str, node: yaml.Node | None, message: str, fix: str | None = None) -> CaseError:
    line = None if node is None else node.start_mark.line + 1
    return CaseError(message, file=path, line=line, fix=fix)


def _string(path: str, node: yaml.Node, key: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or node.tag != "tag:yaml.org,2002:str":
        raise _fail(path, node, f"`{key}` must be a string")
    return str(node.value)


def _names(path: str, node: yaml.Node, key: str, valid: dict[str, str] | tuple[str, ...]
           ) -> tuple[str, ...]:
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise _fail(path, node, f"`{key}` must be a non-empty list",
                    f"e.g. `{key}: [{next(iter(valid))}]`")
    names = []
    for item in node.value:
        name = _string(path, item, key)
        if name not in valid:
            raise _fail(path, item, f"unknown {key[:-1]} `{name}`",
                        f"valid {key}: {', '.join(valid)}")
        names.append(name)
    return tuple(names)


def _program_line_offset(node: yaml.ScalarNode) -> int:
    # A block scalar (`program: |`) starts on the line after its indicator; any other
    # scalar on the line of its mark.
    return node.start_mark.line + (1 if node.style in ("|", ">") else 0)


def load_case(path: str | Path, text: str | None = None) -> Case:
    """The case in `path`; CaseError if the file breaks the case format."""
    path = str(path)
    if text is None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise CaseError(f"cannot read the case file: {e}", file=path) from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise CaseError(f"malformed YAML: {getattr(e, 'problem', None) or e}", file=path,
                        line=None if mark is None else mark.line + 1,
                        fix="check indentation, and write the program as a block: "
                            "`program: |`") from None
    if not isinstance(root, yaml.MappingNode):
        raise _fail(path, root, "a case file must be a YAML mapping",
                    f"start with `description:`; required keys: {', '.join(REQUIRED)}")
    fields: dict[str, yaml.Node] = {}
    for key_node, value_node in root.value:
        key = key_node.value
        if key not in REQUIRED and key not in OPTIONAL:
            raise _fail(path, key_node, f"unknown key `{key}`",
                        f"valid keys: {', '.join(REQUIRED + OPTIONAL)}")
        if key in fields:
            raise _fail(path, key_node, f"duplicate key `{key}`")
        fields[key] = value_node
    for key in REQUIRED:
        if key not in fields:
            raise _fail(path, root, f"missing required key `{key}`",
                        "see docs/case-format.md")
    program_node = fields["program"]
    source_text = _string(path, program_node, "program")
    assert isinstance(program_node, yaml.ScalarNode)  # checked by _string
    if program_node.style == ">":
        raise _fail(path, program_node, "a folded (`>`) program loses its line breaks",
                    "write the program as a literal block: `program: |`")
    offset = _program_line_offset(program_node)
    try:
        program = language.parse(source_text)
    except CaseError as e:
        raise e.at(path, offset) from None
    if not program.body:
        raise _fail(path, program_node, "the program is empty")

    seed = 0
    if "seed" in fields:
        node = fields["seed"]
        if not isinstance(node, yaml.ScalarNode) or node.tag != "tag:yaml.org,2002:int":
            raise _fail(path, node, "`seed` must be an integer")
        seed = int(node.value)
    return Case(
        path=path,
        description=_string(path, fields["description"], "description"),
        features=_names(path, fields["features"], "features", vocabulary.FEATURES),
        program=program,
        source_text=source_text,
        devices=_names(path, fields["devices"], "devices", vocabulary.DEVICES)
        if "devices" in fields else vocabulary.DEFAULT_DEVICES,
        dtypes=_names(path, fields["dtypes"], "dtypes", vocabulary.DTYPES)
        if "dtypes" in fields else vocabulary.DEFAULT_DTYPES,
        seed=seed,
        source=_string(path, fields["source"], "source") if "source" in fields else None,
        line_offset=offset,
    )
