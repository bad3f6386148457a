"""Real reports validate against the documented JSON Schema; junit XML carries properties."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

# pytester's in-process runs drop the modules they imported; torch must be imported once.
import torch

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "conformance" / "report" / "schema"
                     / "conformance.schema.json").read_text())
CASE = """\
description: exp and its grad
features: [ops, grad_fn]
source: test
dtypes: [float32, float64]
program: |
  a = torch.tensor([1.0, 2.0], requires_grad=True)
  b = torch.exp(a)
  b.sum().backward()
"""


def make(pytester: pytest.Pytester) -> None:
    for name, text in {"exp.yaml": CASE, "double.yaml": CASE.replace("torch.exp(a)", "a * 2"),
                       "broken.yaml": CASE.replace("b.sum()", "b.sum("),
                       # only a field the engine masks differs: masked
                       "masked.yaml": CASE.replace("b = torch.exp(a)", "m = torch.exp(a)")
                       .replace("b.sum()", "a.sum()"),
                       # torch itself breaks this case's assert: case_disagrees_with_torch
                       "wrong.yaml": CASE + "  assert_close(a.grad, a)\n",
                       # the engine lacks torch.amin: unsupported
                       "lacking.yaml": CASE.replace("torch.exp(a)", "torch.amin(a)")
                       .replace("dtypes: [float32, float64]", "dtypes: [float32]")}.items():
        path = pytester.path / "cases" / "f" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_schema_is_itself_valid() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_a_report_with_every_verdict_validates(pytester: pytest.Pytester) -> None:
    make(pytester)
    (pytester.path / "known.yaml").write_text(
        "known:\n  - items: 'cases/f/exp.yaml::cpu-float64'\n    reason: listed\n"
        "  - items: 'cases/f/exp.yaml::cpu-float64'\n    reason: stale\n")  # the first has it
    pytester.runpytest("cases", "--engine", "tests.conformance.engine_lacks_api",
                       "--conformance-report", "out", "--expectations", "known.yaml",
                       "--continue-on-collection-errors", "--junitxml", "junit.xml")
    report = json.loads((pytester.path / "out" / "conformance.json").read_text())
    jsonschema.validate(report, SCHEMA)
    verdicts = {r["verdict"] for r in report["items"]}
    assert verdicts == set(SCHEMA["$defs"]["verdict"]["enum"])  # every verdict
    # broken.yaml failed to load: an error record with its file and line, no device
    broken = [r for r in report["items"] if r["file"] == "cases/f/broken.yaml"]
    assert [(r["verdict"], r["device"], r["line"]) for r in broken] == [("error", None, 8)]
    assert report["status"]["outcome"] == "FAIL"
    assert report["run_info"]["collected"] == report["run_info"]["executed"] == 18
    assert report["missing_api"] == {"torch.amin": 1}
    # the engine forwards every other name, __version__ included, to torch
    assert report["run_info"]["engine_version"] == torch.__version__
    assert report["expectations"]["unmatched"] == [{"line": 4, "reason": "stale"}]
    # pytest's own junit XML carries feature, device and dtype per case item
    tree = ET.parse(pytester.path / "junit.xml")
    props = {(c.get("name"), p.get("name"), p.get("value"))
             for c in tree.iter("testcase") for p in c.iter("property")}
    assert ("cpu-float32", "device", "cpu") in props
    assert ("cpu-float64", "dtype", "float64") in props
    assert ("cpu-float32", "features", "ops,grad_fn") in props


def test_schema_rejects_a_report_missing_run_info() -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema_version": 2, "items": [], "generated": {},
                             "expectations": {}}, SCHEMA)
