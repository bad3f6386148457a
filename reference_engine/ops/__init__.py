"""The ops, by family."""
