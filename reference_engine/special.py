"""torch.special: its functions are registry rows (`special.<name>`, reference_engine/
registry.py), whose forwards live in ops/; the facade sets each one here."""
