"""Sorting and order statistics."""

from __future__ import annotations
