"""torch.linalg's spectral functions (h28ops, issue 24), by their names there: the
registry's `linalg.<name>` rows read their forward from this module (ops/spectral.py
computes them; torch.svd is spectral.svd)."""

from __future__ import annotations

from . import spectral

svd = spectral.linalg_svd
svdvals = spectral.linalg_svdvals
eigh = spectral.linalg_eigh
eigvalsh = spectral.linalg_eigvalsh
cond = spectral.linalg_cond
