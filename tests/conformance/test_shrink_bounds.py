"""Shrinking in tests is bounded by a count of shrinks, never by wall time (issue 13)."""

from __future__ import annotations

import math

from hypothesis.internal.conjecture import engine

from conformance.gen import profiles


def test_each_profile_bounds_shrinking_by_a_count() -> None:
    before = engine.MAX_SHRINKS, engine.MAX_SHRINKING_SECONDS
    try:
        for name in profiles.PROFILES:
            profiles.bound_shrinking(name)
            assert profiles.SHRINKS[name] == engine.MAX_SHRINKS
        # the profile tests run under has no wall-time bound at all
        profiles.bound_shrinking(profiles.FALLBACK)
        assert math.isinf(engine.MAX_SHRINKING_SECONDS)
    finally:
        profiles.bound_shrinking_to(*before)
