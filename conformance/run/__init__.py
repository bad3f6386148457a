"""Running one item."""
