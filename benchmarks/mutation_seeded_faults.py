"""The engine faults of issue 20 point 7 that the case library let survive, each injected by
hand into a scratch copy of this tree, with the case written to kill it: the case must fail
on the faulty copy and pass on the clean one. (The seventh gap, a hook handle used as a
context manager, is helper interp's case cases/hooks/handle_as_context_manager.yaml.)

    python benchmarks/mutation_seeded_faults.py [NAME-SUBSTRING]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent
FAULTS = [
    ("parameters skips own", "reference_engine/nn/__init__.py",
     "yield from (p for p in self._parameters.values() if p is not None)",
     "yield from (p for p in self._parameters.values() if p is None)",
     "cases/nn/module_parameters_are_weight_then_bias.yaml"),
    ("zero_grad keeps grads", "reference_engine/nn/__init__.py",
     "                p.grad = None\n                continue",
     "                continue",
     "cases/nn/module_zero_grad_sets_grads_to_none.yaml"),
    ("zero_grad(False) does not zero", "reference_engine/nn/__init__.py",
     "            inplace_ops.zero_(p.grad)", "            pass",
     "cases/nn/module_zero_grad_set_to_none_false_zeroes_in_place.yaml"),
    ("cat names the wrong tensor", "reference_engine/ops/joining.py",
     "t.shape[k], i))", "t.shape[k], i - 1))",
     "cases/ops/cat_size_mismatch_names_tensor_and_dim.yaml"),
    ("cat names the wrong dim", "reference_engine/ops/joining.py",
     "messages.cat_sizes(d, first.shape[k]", "messages.cat_sizes(k, first.shape[k]",
     "cases/ops/cat_size_mismatch_names_tensor_and_dim.yaml"),
    ("cross_entropy 1-d uses dim 1", "reference_engine/nn/functional.py",
     "dim = 0 if input.ndim == 1 else 1", "dim = 1",
     "cases/ops/cross_entropy_unbatched.yaml"),
    ("argmax of 0-d along dim keeps a dim", "reference_engine/ops/extremes.py",
     "    if keepdim and self.ndim:\n        idx = np.expand_dims(idx, d)",
     "    if keepdim:\n        idx = np.expand_dims(idx, d)",
     "cases/ops/argmax_argmin_with_dim_of_0d.yaml"),
    ("argmax of 0-d along dim: dim range of a 1-d", "reference_engine/ops/extremes.py",
     "    d = common.wrap_dim(dim, self.ndim)\n    data = self._data.reshape(1)",
     "    d = common.wrap_dim(dim, max(self.ndim, 2))\n    data = self._data.reshape(1)",
     "cases/ops/argmax_argmin_with_dim_of_0d.yaml"),
    ("mask counts as one index tensor", "reference_engine/views_indexing.py",
     "k += a.ndim", "k += 1",
     "cases/views/index_out_of_bounds_after_mask.yaml"),
    ("expanded inference alias read-only", "reference_engine/ops/basic/views.py",
     "    if not data.flags.writeable and src._data.flags.writeable:",
     "    if not data.flags.writeable and src._data.flags.writeable and 0 not in data.strides:",
     "cases/grad_mode/inference_tensor_inplace_on_size_one_expand.yaml"),
    ("expanded inference alias read-only (fill_)", "reference_engine/ops/basic/views.py",
     "    if not data.flags.writeable and src._data.flags.writeable:",
     "    if not data.flags.writeable and src._data.flags.writeable and 0 not in data.strides:",
     "cases/grad_mode/inference_tensor_fill_on_expand_writes_then_errors.yaml"),
]
work = Path(tempfile.mkdtemp()) / "tree"
shutil.copytree(SRC, work, ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "reports"))
chosen = [f for f in FAULTS if not sys.argv[1:] or sys.argv[1] in f[0]]
for name, file, old, new, case in chosen:
    target = work / file
    original = target.read_text()
    assert original.count(old) == 1, (name, original.count(old))
    target.write_text(original.replace(old, new))
    faulty = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             case], cwd=work, capture_output=True, text=True)
    target.write_text(original)
    clean = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", case],
                           cwd=work, capture_output=True, text=True)
    why = next((ln.strip() for ln in faulty.stdout.splitlines()
                if ln.strip().startswith("field")), "")
    verdict = "killed" if faulty.returncode and not clean.returncode else "NOT KILLED"
    print(f"{verdict}: {name} ({case})\n    {why[:200]}", flush=True)
