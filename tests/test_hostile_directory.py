"""Issue 8's bar, end to end: a directory of hostile and malformed case files beside innocent
ones, run by `autograd-conformance run` with one worker and with two. Every file gets a clean
verdict or collection error, the innocent items pass in both runs with identical verdicts,
and nothing outside the case language runs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.test_cli_run import run

MARKER = "escaped.txt"
INNOCENT = """\
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = (a * a).sum()
b.backward()
assert_close(a.grad, torch.tensor([2.0, 4.0]))
"""
LINEAR = """\
lin = nn.Linear(3, 2)
y = lin(torch.ones(1, 3)).sum()
y.backward()
assert lin.weight.requires_grad
assert lin.weight.grad is not None
"""
NESTED = "x = torch.ones(2)\n" + "".join(
    "    " * depth + f"for i{depth} in range(64):\n" for depth in range(5)) + "    " * 5 + \
    "y = x + 1\n"
# name -> (program, the verdict of its cpu item); None: the file must fail to load
PROGRAMS: dict[str, tuple[str, str | None]] = {
    **{f"innocent_{i}": (INNOCENT, "pass") for i in range(3)},
    "innocent_linear": (LINEAR, "pass"),
    # state a case could change for every later item: rejected at load, or restored
    "pollute_parameter_class": ("nn.Parameter.requires_grad = False\n", None),
    "pollute_grad_mode": ("torch.set_grad_enabled(False)\nx = torch.ones(2)\n", "error"),
    # unbounded work: each ends at its line
    "nested_loops": (NESTED, "error"),
    "huge_pow": ("n = 2 ** 10 ** 10\n", "error"),
    "huge_repetition": ('n = "a" * 10 ** 10\n', "error"),
    "huge_factory": ("x = torch.zeros(100000, 100000)\n", "error"),
    # observed as summaries, not copies: ordinary passes. Copied, the loop's 64 tensors of
    # 600000 elements would pass the trace's 256 MB budget (limits.MAX_TRACE_BYTES) at the
    # 57th and the item would be an error; summarising each costs a pass over its data, so
    # no larger than that
    "large_tensor_in_a_loop": ("x = torch.ones(600000, requires_grad=True)\n"
                               "for i in range(64):\n    y = x * 2\n", "pass"),
    "expanded_view": ("x = torch.ones(1, 1)\ny = x.expand(100000, 100000)\n", "pass"),
    # escapes from the case language
    "escape_import": ("import os\nos.system('touch escaped.txt')\n", None),
    "escape_dunder": ("x = ().__class__.__base__.__subclasses__()\n", None),
    "escape_ctx": ("class Fn(torch.autograd.Function):\n    @staticmethod\n"
                   "    def forward(ctx, x):\n        ctx.apply\n        return x\n"
                   "    @staticmethod\n    def backward(ctx, g):\n        return g\n", None),
}


def _case(program: str, extra: str = "") -> str:
    body = "".join(f"  {line}\n" for line in program.splitlines())
    return f"description: hostile\nfeatures: [leaf]\ndevices: [cpu]\n{extra}program: |\n{body}"


def _hostile_directory(root: Path) -> dict[str, str | None]:
    """Writes the cases; returns each file's name and the verdict of its cpu item."""
    cases = root / "cases"
    cases.mkdir()
    expected: dict[str, str | None] = {}
    for name, (program, verdict) in PROGRAMS.items():
        (cases / f"{name}.yaml").write_text(_case(program))
        expected[f"{name}.yaml"] = verdict
    malformed: dict[str, bytes] = {
        "broken_yaml.yaml": b"description: [unclosed\nprogram: |\n  x = 1\n",
        "hex_seed.yaml": _case("x = 1\n", "seed: 0x1F\n").encode(),
        "latin1.yaml": _case("x = 1\n").replace("hostile", "caf\xe9").encode("latin-1"),
        "too_big.yaml": _case("x = 1\n" * 20000).encode(),
        "python_tag.yaml": b"description: !!python/object/apply:os.system ['touch "
                           b"escaped.txt']\nfeatures: [leaf]\nprogram: |\n  x = 1\n",
    }
    for name, data in malformed.items():
        (cases / name).write_bytes(data)
        expected[name] = None
    os.mkfifo(cases / "fifo.yaml")
    os.symlink(cases / "nowhere.yaml", cases / "dangling.yaml")
    expected["fifo.yaml"] = expected["dangling.yaml"] = None
    return expected


def _verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {Path(r["id"].split("::")[0]).name: r["verdict"] for r in report["items"]}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_hostile_directory_gets_clean_verdicts_and_leaves_innocents_alone(
        tmp_path: Path, workers: str) -> None:
    expected = _hostile_directory(tmp_path)
    # No wall-clock limit: every hostile item ends by a count (statements, bits, elements),
    # and the large innocent ones must pass however loaded the machine is.
    result = run(tmp_path, "run", "--no-generated", "--workers", workers,
                 "--", "--item-timeout", "0")
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "Traceback" not in out and "INTERNALERROR" not in out, out
    report = json.loads((tmp_path / "reports" / "conformance.json").read_text())
    verdicts = _verdicts(report)
    assert verdicts == {name: verdict or "error" for name, verdict in expected.items()}
    for record in report["items"]:
        if expected[Path(record["id"].split("::")[0]).name] is None:  # failed to load
            assert record["device"] is None and record["message"], record
    assert report["status"]["outcome"] == "FAIL"
    assert report["run_info"]["executed"] == report["run_info"]["collected"]
    assert not (tmp_path / MARKER).exists()
    summary = (tmp_path / "reports" / "summary.md").read_text()
    assert summary.startswith(f"**FAIL**: {sum(v != 'pass' for v in verdicts.values())} "
                              f"error ({sum(v is None for v in expected.values())} files "
                              "failed to load)")
