"""torch.masked: its functions are registry rows (`masked.<name>`, reference_engine/
registry.py), whose forwards live in ops/masked_reductions.py; the facade sets each one here.
(ops/masked.py is another module: masked_select and masked_scatter.)"""
