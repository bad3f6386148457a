"""An engine module for plugin tests: real torch whose `exp` is 1% off in value only."""

from __future__ import annotations

from typing import Any

import torch


def exp(x: Any) -> Any:
    out = torch.exp(x)
    out.data.mul_(1.01)  # through .data: same graph, same version, other values
    return out


# Engine protocol v2: a difference in the values of a tensor named `m` is masked (the item's
# verdict is `masked`), so that plugin tests can produce that verdict.
conformance_masks = (("m.values", "a test mask: the values of `m` are declared unmatched"),)


def __getattr__(name: str) -> Any:
    return getattr(torch, name)
