"""torch.fft: its functions are registry rows (`fft.<name>`, reference_engine/registry.py),
whose forwards live in ops/ (ops/fft_shifts.py); the facade sets each one here."""
