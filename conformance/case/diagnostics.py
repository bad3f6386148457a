"""The error a user sees for bad input: which file, which line, what is wrong, what to do."""

from __future__ import annotations

# The longest message or fix shown in full; the library's own texts are far shorter.
MAX_SHOWN = 400


def shorten(text: str, limit: int = MAX_SHOWN) -> str:
    """`text`, or its beginning and end around a note of how much was left out."""
    if len(text) <= limit:
        return text
    head, tail = text[:limit * 3 // 4], text[-(limit // 8):]
    return f"{head}... [{len(text) - len(head) - len(tail)} characters left out] ...{tail}"


class CaseError(Exception):
    """A case file or program that cannot be accepted. Never a crash, never execution."""

    def __init__(self, message: str, *, file: str = "<program>", line: int | None = None,
                 fix: str | None = None) -> None:
        # a message may echo what the file holds (a 60,000-character name): bounded here,
        # once for every message
        self.message = shorten(message)
        self.file = file
        self.line = line
        self.fix = None if fix is None else shorten(fix)
        super().__init__(str(self))

    def at(self, file: str, line_offset: int) -> CaseError:
        """The same error placed in a file whose program starts after `line_offset` lines."""
        line = None if self.line is None else self.line + line_offset
        return CaseError(self.message, file=file, line=line, fix=self.fix)

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        text = f"{where}: {self.message}"
        return f"{text}\n  fix: {self.fix}" if self.fix else text
