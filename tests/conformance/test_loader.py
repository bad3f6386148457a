"""Loading case files: the format contract and its error messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.case.diagnostics import CaseError
from conformance.case.language import parse, to_source
from conformance.case.loader import load_case

GOOD = """\
description: A leaf
features: [leaf]
source: docs
program: |
  x = torch.ones(2, requires_grad=True)
  assert x.is_leaf
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "case.yaml"
    path.write_text(text)
    return path


def test_good_case_and_defaults(tmp_path: Path) -> None:
    case = load_case(write(tmp_path, GOOD))
    assert case.features == ("leaf",)
    assert case.devices == ("cpu", "cuda")
    assert case.dtypes == ("float32",)
    assert case.seed == 0
    assert case.source == "docs"
    # program line 1 is file line 5
    assert case.program.body[0].line + case.line_offset == 5


def test_explicit_devices_dtypes_seed(tmp_path: Path) -> None:
    case = load_case(write(tmp_path, GOOD + "devices: [cpu]\ndtypes: [float64, float32]\n"
                                            "seed: 7\n"))
    assert case.devices == ("cpu",)
    assert case.dtypes == ("float64", "float32")
    assert case.seed == 7


@pytest.mark.parametrize(
    ("text", "line", "message", "fix"),
    [
        ("description: x\nfeatures: [leaf\nprogram: |\n  x = 1\n", 3, "malformed YAML",
         "indentation"),
        (GOOD + "colour: blue\n", 7, "unknown key `colour`", "valid keys"),
        (GOOD.replace("[leaf]", "[leaves]"), 2, "unknown feature `leaves`", "retain_graph"),
        (GOOD.replace("[leaf]", "[]"), 2, "non-empty list", None),
        (GOOD.replace("assert x.is_leaf", "assert x.is_leaf("), 6, "syntax error", None),
        (GOOD.replace("assert x.is_leaf", "x.is_leef"), 6, "attribute `is_leef`", "is_leaf"),
        (GOOD.replace("description: A leaf\n", ""), 1, "missing required key `description`",
         None),
        (GOOD + "devices: [tpu]\n", 7, "unknown device `tpu`", "cpu, cuda"),
        (GOOD + "dtypes: [float8]\n", 7, "unknown dtype `float8`", "float32"),
        (GOOD + "seed: many\n", 7, "`seed` must be an integer", None),
        (GOOD + "source: docs\n", 7, "duplicate key `source`", None),
        ("- a\n- b\n", 1, "must be a YAML mapping", "description"),
        (GOOD.replace("program: |", "program: >"), 4, "folded", "literal block"),
        # a seed is a plain decimal integer: YAML 1.1 reads all these as integers too
        # (0o17 and '7' are strings to YAML 1.1, 7.0 a float)
        *[(GOOD + f"seed: {seed}\n", 7, "`seed", "decimal integer from 0 to")
          for seed in ("0x1F", "0o17", "017", "1_000", "+5", "0b1", "-3", "1:20",
                       str(2**64), "9" * 5000, "'7'", "7.0")],
        (GOOD + "devices: [cpu, cuda, cpu]\n", 7, "duplicate device `cpu`", "once"),
        (GOOD + "dtypes: [float64, float64]\n", 7, "duplicate dtype `float64`", "once"),
        (GOOD.replace("[leaf]", "[leaf, views, leaf]"), 2, "duplicate feature `leaf`", "once"),
        ("? [description]\n: x\n", 1, "a key must be a plain name", "valid keys"),
        ("description: a\x00b\n", 1, "character #x0000 is not allowed", "control"),
        (GOOD.replace("assert x.is_leaf", "y = " + "-" * 101 + "x"), 6,
         "nests more than 100 levels deep", "split"),
    ],
)
def test_bad_files_name_file_line_and_fix(tmp_path: Path, text: str, line: int, message: str,
                                          fix: str | None) -> None:
    path = write(tmp_path, text)
    with pytest.raises(CaseError) as info:
        load_case(path)
    err = info.value
    assert err.file == str(path)
    assert err.line == line, str(err)
    assert message in err.message
    if fix is not None:
        assert err.fix is not None and fix in err.fix


def test_largest_seed_and_deepest_program_load(tmp_path: Path) -> None:
    # the limits' edges: what is documented as allowed loads
    case = load_case(write(tmp_path, GOOD.replace("assert x.is_leaf", "y = " + "-" * 96 + "x")
                           + f"seed: {2**64 - 1}\n"))
    assert case.seed == 2**64 - 1


def test_single_line_program(tmp_path: Path) -> None:
    case = load_case(write(tmp_path, "description: d\nfeatures: [leaf]\n"
                                     "program: 'x = torch.ones(1)'\n"))
    assert case.program.body[0].line + case.line_offset == 3


def test_every_case_in_the_library_loads() -> None:
    root = Path(__file__).resolve().parents[2] / "cases"
    files = sorted(root.rglob("*.yaml"))
    assert files, "the case library is empty"
    for f in files:
        case = load_case(f)
        assert case.source, f"{f} has no source:"
        # the printer and the parser agree on every program in the library
        assert parse(to_source(case.program)) == case.program, f

