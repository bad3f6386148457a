"""Every text the engine raises or warns with lives in reference_engine/messages.py."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import reference_engine as re_
from reference_engine import messages

ENGINE = Path(re_.__file__).resolve().parent


def _literal_texts(path: Path) -> list[str]:
    """`file:line` of each raise or warn whose message is written inline (a string literal or
    f-string), not taken from messages.py. An AssertionError is the engine's own invariant
    (e.g. a registry method also written in tensor.py, at import), not a text torch shows."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        call = None
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and \
                getattr(node.exc.func, "id", None) != "AssertionError":
            call = node.exc
        elif isinstance(node, ast.Call) and getattr(node.func, "attr",
                                                    getattr(node.func, "id", None)) == "warn":
            call = node
        if call is not None and any(
                isinstance(a, ast.JoinedStr)
                or (isinstance(a, ast.Constant) and isinstance(a.value, str))
                for a in call.args):
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_no_engine_text_outside_messages() -> None:
    sources = [p for p in sorted(ENGINE.rglob("*.py")) if p.name != "messages.py"]
    assert sources
    assert [hit for p in sources for hit in _literal_texts(p)] == []


def test_the_scan_sees_an_inline_text(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('import warnings\nraise RuntimeError(f"x {1}")\nwarnings.warn("y")\n'
                     'raise AssertionError("an invariant")\n')
    assert _literal_texts(probe) == ["probe.py:2", "probe.py:3"]


def test_moved_texts_keep_their_wording() -> None:
    x = re_.ones(3)
    with pytest.raises(RuntimeError, match=r"^start \(2\) \+ length \(2\) exceeds dimension "
                                           r"size \(3\)\.$"):
        x.narrow(0, 2, 2)
    with pytest.raises(TypeError, match=r"^len\(\) of a 0-d tensor$"):
        len(re_.tensor(1.0))
    assert messages.split_sizes_wrong_sum(5, 0, [1, 2]) == (
        "split_with_sizes expects split_sizes to sum exactly to 5 (input tensor's size at "
        "dimension 0), but got split_sizes=[1, 2]")
    assert messages.matmul_0d(0, 1) == (
        "both arguments to matmul need to be at least 1D, but they are 0D and 1D")
