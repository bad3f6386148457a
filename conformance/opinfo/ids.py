"""The ids of OpInfo items, `opinfo/<entry>::cpu-<dtype>`, apart from the check itself: the
plugin's controller and reports name and recognise them without importing OpInfo, torch or
an engine."""

from __future__ import annotations

import re

PREFIX = "opinfo"
DEVICE = "cpu"  # the check runs on cpu only (check.DEVICE; tests/test_opinfo_items.py)
DTYPES = ("float32", "float64")
FEATURE = "opinfo"  # the report's feature of OpInfo items
ID = re.compile(rf"^{PREFIX}/(?P<key>[\w.\-]+)::{DEVICE}-(?P<dtype>{'|'.join(DTYPES)})$")


def item_id(key: str, dtype: str) -> str:
    return f"{PREFIX}/{key}::{DEVICE}-{dtype}"


def file_of(key: str) -> str:
    """The item's `file` in records: what groups an entry's dtypes, as a case file does."""
    return f"{PREFIX}/{key}"
