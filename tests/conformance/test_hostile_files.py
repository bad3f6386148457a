"""Loading never crashes: hostile and malformed case files each get a clean error naming the
file (and the line where known), in `load_case`, `autograd-conformance check` and pytest
collection (with and without xdist), and nothing in them runs.

The hostile files are made in tmp_path by `make_hostile`: none is kept in the repository.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

# pytester's in-process runs drop the modules they imported; torch must be imported once.
import torch  # noqa: F401
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.case.diagnostics import CaseError
from conformance.case.loader import MAX_CASE_BYTES, load_case, read_case_text
from conformance.cli import main

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "conformance" / "report" / "schema"
                     / "conformance.schema.json").read_text())
GOOD = """\
description: a leaf
features: [leaf]
source: test
devices: [cpu]
program: |
  x = torch.ones(2, requires_grad=True)
  assert x.is_leaf
"""
# A file a hostile case would create if anything in it ran.
MARKER = "pwned"


def _with_program(statement: str) -> str:
    return GOOD.replace("assert x.is_leaf", statement.replace("\n", "\n  "))


# name -> (text or None for a special file, a fragment of the message, the line or None)
HOSTILE_TEXTS: dict[str, tuple[str | bytes, str, int | None]] = {
    "big.yaml": ("#" * (2 << 20), f"over the limit of {MAX_CASE_BYTES} bytes", None),
    "latin1.yaml": (GOOD.replace("a leaf", "caf\xe9").encode("latin-1"),
                    "not UTF-8: byte 0xe9", 1),
    "latin1_line6.yaml": (_with_program("assert x.is_leaf  # \xe9").encode("latin-1"),
                          "not UTF-8", 7),
    "empty.yaml": ("", "a case file must be a YAML mapping", None),
    "nul.yaml": ("description: a\x00b\n", "character #x0000 is not allowed", 1),
    "deep_yaml.yaml": ("description: " + "[" * 5000 + "]" * 5000 + "\n",
                       "the YAML nests too deeply", None),
    "deep_mapping.yaml": ("description: " + "{a: " * 5000 + "b" + "}" * 5000 + "\n",
                          "the YAML nests too deeply", None),
    "deep_block.yaml": ("- " * 5000 + "x\n",
                        "the YAML nests too deeply", None),
    "deep_program.yaml": (_with_program("y = " + "-" * 5000 + "x"),
                          "nests more than 100 levels deep", 7),
    "long_chain.yaml": (_with_program("y = x" + "+x" * 20000),
                        "nests more than 100 levels deep", 7),
    "deep_across_lines.yaml": (_with_program("z = 1\ny = (\n" + "-" * 5000 + "x)"),
                               "nests more than 100 levels deep", 9),
    # a quoted program's lines are not the file's (issue 20: an error at line 7 of 5)
    "quoted_program.yaml": (GOOD.replace("program: |\n  x = torch.ones(2, requires_grad=True)"
                                         "\n  assert x.is_leaf\n",
                                         'program: "x = torch.ones(2)\\ny = x *\\n"\n'),
                            "a quoted program of several lines", 5),
    "nul_in_program.yaml": (GOOD.replace("program: |\n  x = torch.ones(2, requires_grad=True)"
                                         "\n  assert x.is_leaf\n",
                                         'program: "x = torch.ones(2)\\0"\n'),
                            "the program contains a null character", 5),
    # YAML 1.1 also breaks lines at U+2028, U+2029 and NEL; the file's lines are "\n"'s
    # (round four: each moved every later line one down, past the end of the file)
    "line_separator_in_description.yaml": (
        GOOD.replace("a leaf", "\"a\u2028b\"").replace("assert x.is_leaf", "y = x.foo()"),
        "attribute `foo` is not in the supported API", 7),
    "nel_in_description.yaml": (
        GOOD.replace("a leaf", "\"a\x85b\u2029c\"").replace("assert x.is_leaf", "y = x.foo("),
        "syntax error", 7),
    "line_separator_in_program.yaml": (_with_program("x = 1  # a\u2028b\ny = 2"),
                                       "malformed YAML", 8),
    "long_name.yaml": (_with_program("y = " + "q" * 60_000), "unknown name `qqq", 7),
    "deep_parens.yaml": (_with_program("y = " + "(" * 5000 + "x" + ")" * 5000),
                         "syntax error: too many nested parentheses", 7),
    "deep_with.yaml": (_with_program("".join("  " * i + "with torch.no_grad():\n"
                                             for i in range(150)) + "  " * 150 + "pass"),
                       "syntax error: too many levels of indentation", 107),
    "seed_hex.yaml": (GOOD + "seed: 0x1F\n", "`seed: 0x1F` is not a decimal integer", 8),
    "seed_negative.yaml": (GOOD + "seed: -1\n", "`seed: -1` is not a decimal integer", 8),
    "seed_huge.yaml": (GOOD + "seed: " + "9" * 5000 + "\n", "is not a decimal integer", 8),
    "duplicate_devices.yaml": (GOOD.replace("[cpu]", "[cpu, cpu]"),
                               "duplicate device `cpu`", 4),
    "duplicate_dtypes.yaml": (GOOD + "dtypes: [float64, float32, float64]\n",
                              "duplicate dtype `float64`", 8),
    "key_list.yaml": ("? [description]\n: x\n", "a key must be a plain name", 1),
    "python_tag.yaml": (f"description: !!python/object/apply:os.system ['touch {MARKER}']\n"
                        "features: [leaf]\nprogram: |\n  x = 1\n",
                        "`description` must be a string", 1),
    # which of its names is refused first is the case language's business
    "import.yaml": (_with_program(f"__import__('os').system('touch {MARKER}')"), "", 7),
    "dunder.yaml": (_with_program("y = x.__class__"), "`__class__`", 7),
    "two_documents.yaml": (GOOD + "---\n" + GOOD, "malformed YAML", 8),
}


def make_hostile(directory: Path) -> dict[str, tuple[str, int | None]]:
    """Write the hostile files and one good case into `directory`; return each hostile
    file's expected message fragment and line."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "good.yaml").write_text(GOOD)
    expected: dict[str, tuple[str, int | None]] = {}
    for name, (content, message, line) in HOSTILE_TEXTS.items():
        data = content.encode() if isinstance(content, str) else content
        (directory / name).write_bytes(data)
        expected[name] = (message, line)
    os.mkfifo(directory / "fifo.yaml")  # reading it would block forever
    expected["fifo.yaml"] = ("it is a FIFO", None)
    (directory / "dangling.yaml").symlink_to("missing.yaml")
    expected["dangling.yaml"] = ("symlink to a missing file", None)
    (directory / "loop.yaml").symlink_to("loop.yaml")
    expected["loop.yaml"] = ("cannot read the case file", None)
    if os.path.exists("/dev/zero"):  # endless: reading it would never finish
        (directory / "zero.yaml").symlink_to("/dev/zero")
        expected["zero.yaml"] = ("it is a character device", None)
    (directory / "folder.yaml").mkdir()  # a directory named like a case: walked, not read
    return expected


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, dict[str, tuple[str, int | None]]]:
    directory = tmp_path / "cases" / "hostile"
    return directory, make_hostile(directory)


def test_load_case_raises_only_case_errors(
        hostile: tuple[Path, dict[str, tuple[str, int | None]]]) -> None:
    directory, expected = hostile
    assert load_case(directory / "good.yaml").seed == 0
    for name, (message, line) in expected.items():
        with pytest.raises(CaseError) as info:
            load_case(directory / name)
        err = info.value
        assert err.file == str(directory / name)
        assert message in err.message, (name, str(err))
        assert err.line == line, (name, str(err))
        assert err.fix, name
    assert not (Path.cwd() / MARKER).exists()


def test_what_a_file_holds_is_echoed_in_bounded_length(tmp_path: Path) -> None:
    """A 60,000-character name is shown by its beginning and end (issue 20: in full)."""
    for text in (_with_program("y = " + "q" * 60_000),
                 GOOD.replace("[leaf]", "[" + "f" * 60_000 + "]")):
        path = tmp_path / "long.yaml"
        path.write_text(text)
        with pytest.raises(CaseError) as info:
            load_case(path)
        shown = str(info.value)
        assert len(shown) < 1500, len(shown)
        assert "characters left out" in shown


def test_non_regular_files_are_refused_before_they_are_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    # were it opened for reading, this would wait forever for a writer
    with pytest.raises(CaseError, match="FIFO"):
        read_case_text(fifo, "cases/fifo.yaml")
    with pytest.raises(CaseError, match="directory"):
        read_case_text(tmp_path)


def test_a_case_file_named_with_the_item_separator_is_refused(tmp_path: Path) -> None:
    # pytest reads `::` in a node id as the item separator: its rerun line could not work
    named = tmp_path / "a::b.yaml"
    named.write_text(GOOD)
    with pytest.raises(CaseError, match="must not contain `::`"):
        read_case_text(named)


def test_a_file_at_the_size_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "limit.yaml"
    path.write_text(GOOD + "#" * (MAX_CASE_BYTES - len(GOOD)))
    assert load_case(path).features == ("leaf",)
    path.write_text(GOOD + "#" * (MAX_CASE_BYTES - len(GOOD) + 1))
    with pytest.raises(CaseError, match="over the limit"):
        load_case(path)


# Pieces of case files, programs and YAML, in any order: whatever they make, load_case
# returns a Case or raises a CaseError, nothing else.
FRAGMENTS = [
    "description: d\n", "features: [leaf]\n", "features: [", "devices: [cpu, cuda]\n",
    "dtypes: [float64]\n", "seed: ", "0x1F", "-1", "7", "source: s\n", "program: |\n",
    "program: >\n", "program: ", "  x = torch.ones(2, requires_grad=True)\n",
    "  y = x * 2\n", "  y.sum().backward()\n", "  with raises(\"backward_twice\"):\n",
    "      pass\n", "  for i in range(3):\n", "  class Fn(torch.autograd.Function):\n",
    "    @staticmethod\n", "    def forward(ctx, a):\n", "        return a\n",
    "lambda g: g", "(", ")", "[", "]", "{", "}", ":", ",", "- ", "? ", "&a ", "*a ",
    "!!python/object/apply:os.system ", "!!binary ", "%YAML 1.1\n", "---\n", "...\n",
    "\t", " ", "\n", "#", "'", "\"", "\\", "\x00", "\x85", "\ufeff", "\udcff", "x" * 3,
    "__class__", "__import__('os')", "1e400", "9" * 5000, "\u2028", "\r",
]


@settings(max_examples=300, database=None, derandomize=True, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=40)
       .map("".join))
def test_any_text_loads_or_is_a_case_error(text: str) -> None:
    try:
        load_case("fuzz.yaml", text)
    except CaseError as e:
        assert e.file == "fuzz.yaml"
        assert e.message


@settings(max_examples=100, database=None, derandomize=True, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_read_or_are_a_case_error(data: bytes) -> None:
    from tempfile import TemporaryDirectory

    with TemporaryDirectory() as directory:
        path = Path(directory, "bytes.yaml")
        path.write_bytes(data)
        try:
            load_case(path)
        except CaseError as e:
            assert e.file == str(path)


def test_check_reports_every_file_and_a_summary(
        hostile: tuple[Path, dict[str, tuple[str, int | None]]],
        capsys: pytest.CaptureFixture[str]) -> None:
    directory, expected = hostile
    assert main(["check", str(directory.parent)]) == 1
    out, err = capsys.readouterr()
    total = len(expected) + 1
    assert out.strip().splitlines()[-1] == f"1 of {total} case files are valid"
    for name, (message, line) in expected.items():
        where = f"{directory / name}:{line}:" if line else f"{directory / name}:"
        assert f"{where} " in err and message in err, name
    assert "good.yaml" not in err
    assert "folder.yaml" not in err
    assert "internal error" not in err and "Traceback" not in err


def test_check_names_a_missing_path_and_an_empty_directory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "none.yaml")]) == 1
    assert "none.yaml: cannot read the case file" in capsys.readouterr().err
    assert main(["check", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "0 of 0 case files are valid" in out and "no case files" in err


def _assert_clean_run(result: pytest.RunResult, root: Path,
                      expected: dict[str, tuple[str, int | None]]) -> None:
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1, errors=len(expected))
    out = result.stdout.str()
    assert "Traceback" not in out and "INTERNALERROR" not in out
    for name in expected:
        assert f"ERROR collecting cases/hostile/{name}" in out, name
    report = json.loads((root / "out" / "conformance.json").read_text())
    jsonschema.validate(report, SCHEMA)
    records = {r["id"]: r for r in report["items"]}
    assert records.pop("cases/hostile/good.yaml::cpu-float32")["verdict"] == "pass"
    assert set(records) == {f"cases/hostile/{name}" for name in expected}
    for name, (message, line) in expected.items():
        record = records[f"cases/hostile/{name}"]
        assert record["verdict"] == "error"
        assert record["file"] == f"cases/hostile/{name}"
        assert record["line"] == line, name
        assert message in record["message"], name
    summary = (root / "out" / "summary.md").read_text()
    assert summary.startswith(
        f"**FAIL**: {len(expected)} error ({len(expected)} files failed to load), 1 pass "
        "of 1 collected; 1 executed; pytest exit status 1")
    assert not (root / MARKER).exists()


def test_pytest_collects_every_hostile_file_as_a_clean_error(pytester: pytest.Pytester
                                                             ) -> None:
    expected = make_hostile(pytester.path / "cases" / "hostile")
    result = pytester.runpytest("cases", "--engine", "torch", "--conformance-report", "out",
                                "--continue-on-collection-errors")
    _assert_clean_run(result, pytester.path, expected)


def test_pytest_xdist_collects_every_hostile_file_as_a_clean_error(pytester: pytest.Pytester
                                                                   ) -> None:
    # the workers collect; their failed collections reach the controller's report
    expected = make_hostile(pytester.path / "cases" / "hostile")
    result = pytester.runpytest_subprocess("cases", "--engine", "torch", "-n", "2",
                                           "--conformance-report", "out",
                                           "--continue-on-collection-errors")
    _assert_clean_run(result, pytester.path, expected)
