"""Generated programs."""
