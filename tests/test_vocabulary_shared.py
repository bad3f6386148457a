"""Facts that several modules use are defined once: the kind check, the sizes text, the
multi-output view flag."""
from __future__ import annotations

import pytest

from conformance.case import kinds, language
from conformance.case.diagnostics import CaseError
from conformance.run.interpreter import CaseFailure, Interpreter
from reference_engine import messages
from reference_engine.ops import creation_meta


def test_unknown_kind_is_one_rule() -> None:
    assert kinds.unknown_kind(kinds.ERROR_KINDS[0], warning=False) is None
    assert kinds.unknown_kind(kinds.WARNING_KINDS[0], warning=True) is None
    problem, near = kinds.unknown_kind(kinds.ERROR_KINDS[0] + "x", warning=False) or ("", [])
    assert problem == f"unknown error kind {kinds.ERROR_KINDS[0] + 'x'!r}"
    assert near[0] == kinds.ERROR_KINDS[0]
    assert kinds.unknown_kind(kinds.ERROR_KINDS[0], warning=True) is not None


def test_parser_and_interpreter_word_an_unknown_kind_alike() -> None:
    with pytest.raises(CaseError, match="unknown error kind 'no_such_kind_at_all'"):
        language.parse('with raises("no_such_kind_at_all"):\n    pass\n')
    expectation = Interpreter._expectation
    with pytest.raises(CaseFailure, match=r"^unknown warning kind 'zzz'; valid kinds: "):
        expectation(None, "zzz", warning=True)  # type: ignore[arg-type]


def test_sizes_and_multi_output_flag() -> None:
    assert messages.sizes((2, 3)) == "[2, 3]"
    assert messages.sizes(()) == "[]"
    # the creation meta multi-output views carry names its refusal's reason
    assert creation_meta.MULTI_OUTPUT_NODE in messages.VIEW_INPLACE_REASON
