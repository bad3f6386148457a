"""The error a user sees for bad input: which file, which line, what is wrong, what to do."""

from __future__ import annotations


class CaseError(Exception):
    """A case file or program that cannot be accepted. Never a crash, never execution."""

    def __init__(self, message: str, *, file: str = "<program>", line: int | None = None,
                 fix: str | None = None) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.fix = fix
        super().__init__(str(self))

    def at(self, file: str, line_offset: int) -> CaseError:
        """The same error placed in a file whose program starts after `line_offset` lines."""
        line = None if self.line is None else self.line + line_offset
        return CaseError(self.message, file=file, line=line, fix=self.fix)

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        text = f"{where}: {self.message}"
        return f"{text}\n  fix: {self.fix}" if self.fix else text
