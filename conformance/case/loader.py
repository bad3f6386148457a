"""Loading case files: YAML with line numbers, checked against the case format contract.

The format is documented in docs/case-format.md. Every problem is a CaseError naming the
file, the line and the fix: nothing else escapes `load_case`, whatever the file holds
(tests/conformance/test_hostile_files.py feeds it hostile inputs).
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path

import yaml

from conformance.case import language, vocabulary
from conformance.case import program as ir
from conformance.case.diagnostics import CaseError

REQUIRED = ("description", "features", "program")
OPTIONAL = ("devices", "dtypes", "seed", "source")
# Limits a case file must keep (documented in docs/case-format.md, "Loading limits"). Case
# files are a few KiB (the library's largest: about 2 KiB); the limits keep a hostile or mistaken
# file from exhausting time, memory or the stack, and make the verdict the same in every
# process, however deep its stack. PyYAML's scanner reads about 64 KiB of the costliest YAML
# per second (a 1 MiB file of keys: 17 to 22 s, in every xdist worker), hence 64 KiB.
MAX_CASE_BYTES = 64 << 10
MAX_NESTING = 100  # levels of statements and expressions in a program
MAX_SEED = 2**64 - 1
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISSOCK, "a socket"))


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
        raise _fail(path, node, f"`{key}` must be a string",
                    f"write text after `{key}:`, without a YAML tag")
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
        if name in names:
            raise _fail(path, item, f"duplicate {key[:-1]} `{name}` in `{key}`",
                        f"list each {key[:-1]} once")
        names.append(name)
    return tuple(names)


def _kind_of_file(mode: int) -> str:
    return next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")


def read_case_text(path: str | Path, name: str | None = None) -> str:
    """The text of the case file at `path` (named `name` in errors; default `path`).

    Only a regular file (a symlink to one is fine) of at most MAX_CASE_BYTES of UTF-8 is read.
    Anything else is refused from its stat, before it is opened: opening a FIFO or a device
    for reading may block forever or have effects. The descriptor is checked again after
    opening (O_NONBLOCK: a file swapped for a FIFO in between cannot block the open)."""
    name = str(path) if name is None else name
    fix = "a case is a regular UTF-8 text file ending in .yaml"
    if "::" in Path(path).name:  # pytest reads `::` in a node id as the item separator
        raise CaseError("a case file's name must not contain `::`: its item ids and rerun "
                        "lines could not be read back", file=name, fix="rename the file")
    data = b""
    try:
        info = os.stat(path)
        if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_CASE_BYTES:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                         | getattr(os, "O_CLOEXEC", 0))
            with os.fdopen(fd, "rb") as f:
                info = os.fstat(f.fileno())
                if stat.S_ISREG(info.st_mode):
                    data = f.read(MAX_CASE_BYTES + 1)
    except OSError as e:
        dangling = e.errno == errno.ENOENT and os.path.islink(path)
        reason = "it is a symlink to a missing file" if dangling else (e.strerror or str(e))
        raise CaseError(f"cannot read the case file: {reason}", file=name,
                        fix=fix) from None
    if not stat.S_ISREG(info.st_mode):
        raise CaseError(f"not a case file: it is {_kind_of_file(info.st_mode)}", file=name,
                        fix=fix)
    if info.st_size > MAX_CASE_BYTES or len(data) > MAX_CASE_BYTES:
        raise CaseError(f"the file has {max(info.st_size, len(data))} bytes, over the limit "
                        f"of {MAX_CASE_BYTES} bytes for a case file", file=name,
                        fix="split it into cases of one behaviour each")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CaseError(f"the file is not UTF-8: byte 0x{data[e.start]:02x} at offset "
                        f"{e.start} cannot be decoded", file=name,
                        line=data.count(b"\n", 0, e.start) + 1,
                        fix="save the file as UTF-8") from None


def _compose(path: str, text: str) -> yaml.Node | None:
    """The YAML node tree of `text`, every failure a CaseError."""
    fix = "check indentation, and write the program as a block: `program: |`"
    try:
        return _file_lines(text, yaml.compose(text, Loader=yaml.SafeLoader))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        raise CaseError(f"malformed YAML: {e.problem or e}", file=path,
                        # a problem found at the end of the file is on its last line
                        line=None if mark is None else min(
                            text.count("\n", 0, mark.index) + 1,
                            max(text.count("\n", 0, len(text.rstrip("\n"))) + 1, 1)),
                        fix=fix) from None
    except yaml.reader.ReaderError as e:  # a character YAML does not allow
        char = f"#x{e.character:04x}" if isinstance(e.character, int) else repr(e.character)
        raise CaseError(f"malformed YAML: character {char} is not allowed",
                        file=path, line=text.count("\n", 0, e.position) + 1,
                        fix="remove control characters from the file") from None
    except yaml.YAMLError as e:
        raise CaseError(f"malformed YAML: {e}", file=path, fix=fix) from None
    except (RecursionError, MemoryError):
        raise CaseError("the YAML nests too deeply to be read", file=path,
                        fix="a case file is a flat mapping: description, features, program, "
                            "...") from None


# PyYAML (YAML 1.1) also breaks lines at NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR, which a
# quoted scalar or a comment may hold; an editor, Python and the file's readers count only
# "\n": every mark's line is counted again so (a program's lines were one off after one).
_OTHER_BREAKS = ("\x85", "\u2028", "\u2029")


def _file_lines(text: str, root: yaml.Node | None) -> yaml.Node | None:
    if root is None or not any(c in text for c in _OTHER_BREAKS):
        return root
    stack = [root]
    while stack:
        node = stack.pop()
        for mark in (node.start_mark, node.end_mark):
            mark.line = text.count("\n", 0, mark.index)
        if isinstance(node, yaml.MappingNode):
            stack.extend(n for pair in node.value for n in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return root


def _parse_program(path: str, source_text: str, offset: int) -> ir.Program:
    """The program's IR, every failure a CaseError placed in the file."""
    try:
        # SyntaxWarnings (e.g. an invalid escape in a string) would turn into errors under
        # `-W error`: a case must load the same way under every warning filter.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = language.parse(source_text, MAX_NESTING)
    except CaseError as e:
        raise e.at(path, offset) from None
    except (SyntaxError, ValueError) as e:  # anything else ast.parse refuses
        line = getattr(e, "lineno", None)
        raise CaseError(f"syntax error: {getattr(e, 'msg', None) or e}", file=path,
                        line=None if line is None else line + offset,
                        fix="the program must be valid Python syntax") from None
    line = _too_deep_at(program)  # the IR's own count, which the parser's check stays within
    if line is not None:
        raise CaseError(f"the program nests more than {MAX_NESTING} levels deep", file=path,
                        line=line + offset if line else None,
                        fix="split deep expressions into several assignments")
    return program


def _too_deep_at(program: ir.Program) -> int | None:
    """The line of a statement where the program nests deeper than MAX_NESTING
    (0 if it has none), or None. Iterative: the IR may be deeper than the stack allows."""
    stack: list[tuple[object, int, int]] = [(program, 0, 0)]
    while stack:
        node, depth, line = stack.pop()
        if depth > MAX_NESTING:
            return line
        if isinstance(node, tuple):
            stack.extend((child, depth, line) for child in node)
        elif dataclasses.is_dataclass(node):
            line = getattr(node, "line", 0) or line
            stack.extend((getattr(node, f.name), depth + 1, line)
                         for f in dataclasses.fields(node))
    return None


def _seed(path: str, node: yaml.Node) -> int:
    # YAML 1.1 reads 0x1F, 0o17, 017, 1_000, +5 and 1:20 as integers too; a seed is written
    # one way only, so that the number a reader sees is the number the harness uses.
    fix = f"write a decimal integer from 0 to {MAX_SEED}, e.g. `seed: 7`"
    if not isinstance(node, yaml.ScalarNode) or node.tag != "tag:yaml.org,2002:int":
        raise _fail(path, node, "`seed` must be an integer", fix)
    if not _DECIMAL.fullmatch(node.value) or len(node.value) > len(str(MAX_SEED)) \
            or int(node.value) > MAX_SEED:
        raise _fail(path, node, f"`seed: {node.value[:40]}` is not a decimal integer from 0 to "
                    f"{MAX_SEED}", fix)
    return int(node.value)


def _program_line_offset(node: yaml.ScalarNode) -> int:
    # A block scalar (`program: |`) starts on the line after its indicator; any other
    # scalar on the line of its mark.
    return node.start_mark.line + (1 if node.style in ("|", ">") else 0)


def load_case(path: str | Path, text: str | None = None) -> Case:
    """The case in `path`; CaseError if the file breaks the case format."""
    path = str(path)
    if text is None:
        text = read_case_text(path)
    root = _compose(path, text)
    if not isinstance(root, yaml.MappingNode):
        raise _fail(path, root, "a case file must be a YAML mapping",
                    f"start with `description:`; required keys: {', '.join(REQUIRED)}")
    fields: dict[str, yaml.Node] = {}
    for key_node, value_node in root.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise _fail(path, key_node, "a key must be a plain name",
                        f"valid keys: {', '.join(REQUIRED + OPTIONAL)}")
        key = key_node.value
        if key not in REQUIRED and key not in OPTIONAL:
            raise _fail(path, key_node, f"unknown key `{key}`",
                        f"valid keys: {', '.join(REQUIRED + OPTIONAL)}")
        if key in fields:
            raise _fail(path, key_node, f"duplicate key `{key}`", "keep one of them")
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
    if program_node.style != "|" and "\n" in source_text.rstrip("\n"):
        # a quoted scalar's lines (`"a\nb"`, or folded across the file) are not the file's
        raise _fail(path, program_node, "a quoted program of several lines has no place in "
                    "the file for its lines", "write the program as a literal block: "
                    "`program: |`")
    offset = _program_line_offset(program_node)
    program = _parse_program(path, source_text, offset)
    if not program.body:
        raise _fail(path, program_node, "the program is empty",
                    "write the behaviour's statements under `program: |`")

    seed = _seed(path, fields["seed"]) if "seed" in fields else 0
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
