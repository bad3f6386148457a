"""torch.linalg's functions added for issue 24's linear-algebra family (h27ops), by their
names there: the registry's `linalg.<name>` rows read their forward from this module (the
ones before them: ops/linalg_functions.py)."""

from __future__ import annotations

from . import (
    decompositions_lu,
    decompositions_qr,
    matrix_functions,
    matrix_norms,
    solve_legacy,
    tensor_solve,
)
from . import lu_solve as _lu_solve

qr = decompositions_qr.linalg_qr
matrix_exp = matrix_functions.matrix_exp
vander = solve_legacy.vander
matrix_norm = matrix_norms.matrix_norm
norm = matrix_norms.norm
lu_factor = decompositions_lu.linalg_lu_factor
lu_factor_ex = decompositions_lu.linalg_lu_factor_ex
lu = decompositions_lu.linalg_lu
lu_solve = _lu_solve.linalg_lu_solve
tensorinv = tensor_solve.tensorinv
tensorsolve = tensor_solve.tensorsolve
