"""The one room where an item's verdict is decided, for case items (runner, plugin, the
controller's account of a crashed item), generated programs (generated_suite) and `explain`
(through the runner): from what the run found (a comparison of two traces, or a verdict the
runner gave on its own: skipped, error, case_disagrees_with_torch, unsupported) and the
expectations entries that apply, to the verdict and its reason.

A status (expectations.status_of) an entry allows makes a failure `known`, or leaves a pass
a pass (an intermittent entry); an item listed as failing that passes now is named
(`passes_now`), so that the list cannot rot. What a verdict means to pytest is the verdict's
own (verdicts.Verdict.outcome)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from conformance.run.compare import Comparison
from conformance.run.expectations import Known, status_of
from conformance.run.verdicts import AGREEING, Verdict


@dataclass(frozen=True)
class Decision:
    verdict: str
    reason: str = ""
    status: str | None = None  # before the expectations, as entries name it
    entry: Known | None = None  # the entry that allows the item's status
    passes_now: Known | None = None  # an entry expects a failure, the item passes: it fails

    @property
    def known(self) -> bool:
        """The verdict became `known`: an entry lists this failure."""
        return self.verdict == Verdict.KNOWN.value


def compared(comparison: Comparison, *, strict_messages: bool = True,
             where: Callable[[int], str] = str) -> tuple[str, str]:
    """The verdict of two traces compared, and its reason: a divergence (or, with strict
    messages, a message text that differs) diverges; a difference only in fields the engine
    masks is `masked` (`where(line)` names the statement); else a pass."""
    if comparison.divergence or (comparison.message if strict_messages else None):
        return Verdict.DIVERGES.value, ""
    if comparison.masked is not None and comparison.mask is not None:
        return Verdict.MASKED.value, (
            f"masked by the engine ({comparison.mask.reason}): at "
            f"{where(comparison.masked.line)}, {comparison.masked.describe()}")
    return Verdict.PASS.value, ""


def decide(verdict: str, reason: str = "", entries: Sequence[Known] = (), *,
           timed_out: bool = False, listed_in: str = "") -> Decision:
    """The verdict of an item that ran with `verdict` (and `reason`), given the expectations
    entries that apply to it (in file order; skip entries are handled before it runs) from
    the file `listed_in`."""
    status = status_of(verdict, timed_out)
    if verdict == Verdict.SKIPPED.value:  # never judged by an entry
        return Decision(verdict, reason, status)
    allowing = next((e for e in entries if e.allows(status)), None)
    if allowing is not None:
        if status in AGREEING:  # a pass an intermittent entry allows stays a pass
            return Decision(verdict, reason, status, allowing)
        what = "divergence" if status == Verdict.DIVERGES.value else status
        detail = "" if status == Verdict.DIVERGES.value else f" [{reason}]"
        return Decision(Verdict.KNOWN.value,
                        f"known {what} ({allowing.where(listed_in)}): {allowing.reason}{detail}",
                        status, allowing)
    listed = [e for e in entries if not e.skip]
    if listed and status in AGREEING:
        return Decision(verdict, reason, status, passes_now=listed[0])
    return Decision(verdict, reason, status)
