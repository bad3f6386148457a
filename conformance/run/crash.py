"""What a dead process was running, told from its black box (conformance/run/blackbox.py).

The box itself sits below the limits and the runner (every statement stores its line there);
telling an account needs the case loaded again and the runner's way of naming a line, so it
lives here, above the runner: the plugin's controller and the sentinel of a process without
one both read a box through these functions.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from conformance.case.diagnostics import CaseError
from conformance.case.loader import load_case, read_case_text
from conformance.run.blackbox import DUMP_SUFFIX, Account, account, read
from conformance.run.runner import Item, stopped_at


def crashed_item(account: Account) -> Item | None:
    """The case item that was running, loaded again from its file (None: not a case item,
    or its file cannot be loaded now)."""
    if account.case is None:
        return None
    case_id = str(account.case["id"])
    try:
        case = load_case(case_id, read_case_text(Path(account.case["path"]), case_id))
    except (CaseError, OSError):
        return None
    return Item(case, account.case["device"], account.case["dtype"], account.case.get("file"))


def reason(account: Account) -> str:
    """Where it stopped, on which engine, and why: a case item's line as the runner names it
    (`runner.stopped_at`), a generated program's statement number."""
    if account.line is None:
        return account.cause
    item = crashed_item(account)
    if item is not None:
        return stopped_at(item, account.line, account.engine, account.cause)
    if not account.line:
        where = ""
    elif account.case is not None:  # its file is gone or no longer loads
        where = f" at {account.case['id']}:{account.line + int(account.case['offset'])}"
    elif account.generated:
        where = f" at statement {account.line} (statements numbered in order)"
    else:
        where = f" at line {account.line} of its program"
    return f"stopped{where} on {account.engine}: {account.cause}"


def sentinel() -> None:
    """The sentinel's main: wait for the process to end (the end of the pipe), then tell on
    stderr what it was doing if it died running something (see the module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is for the run, not for it
    path, pid = sys.argv[1], sys.argv[2]
    dump = sys.stdin.buffer.read()  # the watchdog's dump, if any, until the process ends
    try:
        record = read(path, dump.decode(errors="replace"))
        if record is not None and not record.exited and (record.item or record.deadline):
            nodeid = str((record.item or {}).get("nodeid", ""))
            who = f"the process (pid {pid})"
            running = f" while running {nodeid}" if nodeid else ""
            sys.stderr.write(record.dump)
            sys.stderr.write(
                f"autograd-conformance: {who} ended{running}: "
                f"{reason(account(record, nodeid, who, None))}. No report was written (the "
                "run's results ended with it); under xdist (`pytest -n 1`, `autograd-"
                "conformance run`) the item is an error record and the run goes on.\n")
            sys.stderr.flush()
    finally:
        for name in (path, path + DUMP_SUFFIX):
            if os.path.exists(name):
                os.unlink(name)
        os.rmdir(os.path.dirname(path))


