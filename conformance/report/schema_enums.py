"""The report schema's lists of verdicts, written from the verdict vocabulary.

`schema/conformance.schema.json` is a published file: README links it, and a report's reader
validates against it without this package. So it keeps its enums written out, readable in
the file, rather than filled in when it is loaded. Its two lists that name verdicts are not
written by hand, though: `python -m conformance.report.schema_enums` rewrites them from
`run/verdicts.py` (`$defs.verdict`: every verdict; an item's `status`: `ITEM_STATUSES`), and
`--check` (run by tests/test_verdicts.py) fails while the file is not current. Adding a
verdict edits verdicts, the runner and README, then runs this.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from conformance.run.verdicts import ITEM_STATUSES, Verdict

SCHEMA = Path(__file__).resolve().parent / "schema" / "conformance.schema.json"
COMMAND = "python -m conformance.report.schema_enums"


def enums() -> dict[str, list[str]]:
    """Each generated enum, by the JSON key that holds it (each key holds one in the file)."""
    return {"verdict": [v.value for v in Verdict], "status": list(ITEM_STATUSES)}


def rewrite(text: str) -> str:
    """`text` (the schema) with each generated enum's list written from the vocabulary; the
    rest of the file byte for byte as it was."""
    for key, values in enums().items():
        pattern = re.compile(r'("' + key + r'": \{"enum": )\[[^\]]*\]')
        if len(pattern.findall(text)) != 1:
            raise ValueError(f'the schema has not exactly one `"{key}": {{"enum": [...]`: '
                             f"update {__name__} with it")
        listed = json.dumps(values)
        text = pattern.sub(lambda m: m.group(1) + listed, text)  # noqa: B023 (called here)
    return text


def main(argv: list[str] | None = None) -> int:
    """Rewrite the schema's enums; with `--check`, only say whether they are current
    (exit 1 if not)."""
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    text = SCHEMA.read_text(encoding="utf-8")
    current = rewrite(text)
    if current == text:
        print(f"{SCHEMA.name}: enums current")
        return 0
    if check:
        print(f"{SCHEMA.name}: its verdict enums are stale; run `{COMMAND}`")
        return 1
    SCHEMA.write_text(current, encoding="utf-8")
    print(f"{SCHEMA.name}: enums rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
