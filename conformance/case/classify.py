"""How a raised error or a warning is named in a trace: its text as compared between engines
(build paths, addresses and run-dependent dumps removed), its exception's builtin class, and
its canonical kind, looked up in the table of kinds.py."""

from __future__ import annotations

import hashlib
import re

from conformance.case.kinds import KINDS, UNKNOWN

# torch appends where in its C++ build a warning was raised; that is a build artefact,
# not part of the message.
_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)\s*$")
# An object's default repr names its address ("<function f at 0x7f...>", which pybind's
# wrong-argument errors quote): that differs between any two runs, torch's own included.
_ADDRESS = re.compile(r" at 0x[0-9a-f]+>")


# Anomaly mode's warning quotes the Python stack of a forward call: under the harness those
# are the interpreter's frames (file paths, line numbers), not the case's; its head is kept.
_FORWARD_TRACE = re.compile(r"(Traceback of forward call that (caused the error|induced the "
                            r"previous calculation):)\n.*", re.DOTALL)

# gradcheck's Jacobian mismatch prints both Jacobians: finite differences whose last digits
# depend on rounding, in the engine's own tensor format; its head is kept.
_JACOBIANS = re.compile(r"(with respect to input \d+,)\nnumerical:.*", re.DOTALL)


# checkpoint's debug text lists the operators each pass ran, with their Python stacks (under
# the harness, the interpreter's frames); its frame and closing guidance are kept.
_CHECKPOINT_LOGS = re.compile(r"(\|\s+1\. Stack traces of the operators that ran in the "
                              r"original forward\s+\|\n)[\s\S]*?(\n\+-+\+\n ERROR: Detected "
                              r"non-determinism)")


def normalise_text(text: str) -> str:
    """The message as compared between engines: build-path suffixes, object addresses,
    anomaly mode's quoted forward stacks, gradcheck's printed Jacobians and checkpoint
    debug mode's operator logs removed."""
    text = _FORWARD_TRACE.sub(r"\1 ...", _TRIGGERED.sub("", text))
    text = _JACOBIANS.sub(r"\1 numerical: ... analytical: ...", text)
    text = _CHECKPOINT_LOGS.sub(r"\1...\2", text)
    return _ADDRESS.sub(" at 0x...>", text).strip()


def text_of(raised: BaseException | Warning | str) -> str:
    """`str(raised)`, or, where that fails (an engine's exception or warning whose `__str__`
    raises, recurses or returns no string), a text naming what happened: the harness must
    report the engine's error, not crash on it. Always a plain str: a subclass's overridden
    methods (strip, splitlines) are the engine's code too."""
    try:
        text = str.__str__(str(raised))
    except Exception as e:
        return (f"<the {type(raised).__name__}'s str() raised "
                f"{type(e).__name__} (the engine's message cannot be read)>")
    return text


# What a trace keeps of a message: an engine's 10 MB message went whole into the trace, the
# terminal and all three report files (50 MB). A message is classified whole and normalised
# before it is cut: checkpoint's debug error is longer than this until normalise_text drops
# its operator logs, and its kind is named after them.
MESSAGE_LIMIT = 10_000


def bounded(text: str) -> str:
    """`text`, or its first MESSAGE_LIMIT characters and a note of how many were cut, with a
    digest of the whole: two long messages that differ only after the cut still differ."""
    if len(text) <= MESSAGE_LIMIT:
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return (f"{text[:MESSAGE_LIMIT]}... <{len(text) - MESSAGE_LIMIT:,} more characters cut; "
            f"sha256 of the whole message {digest}>")


def exception_name(error: BaseException) -> str:
    """The name of `error`'s nearest builtin exception class: what traces record and compare,
    so that an engine's own subclass (dynamo's TorchRuntimeError, torch's _LinAlgError) is
    the RuntimeError it is."""
    return next(c.__name__ for c in type(error).__mro__ if c.__module__ == "builtins")


def classify(text: str, *, warning: bool, exception: str | None = None) -> str:
    """The canonical kind of an error or warning: by its message's pattern, else (for
    errors) by the Python exception type, else "unknown"."""
    for kind in KINDS:
        if kind.warning == warning and kind.matches(text):
            return kind.name
    if exception is not None and not warning:
        for kind in KINDS:
            if kind.exception == exception:
                return kind.name
    return UNKNOWN
