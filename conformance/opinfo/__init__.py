"""PyTorch's OpInfo database as a source of ops to check: the op map and the OpInfo check.

- `database`: reading OpInfo (`torch.testing._internal.common_methods_invocations.op_db`)
  from the installed torch; its test-only dependency `expecttest` is in the dev extra.
- `opmap`: the op map, conformance/opinfo/opinfo.yaml, and the table generated from it
  (`python -m conformance.opinfo.opmap`, docs/coverage/opinfo.md): every OpInfo entry that
  supports autograd, covered (by the reference engine's registry row of the same name), todo
  or out of scope.
- `convert`: OpInfo's samples (torch values) as an engine's values, OpInfo's callables on it.
- `check`: one covered entry in one dtype on torch and an engine, as two traces that the
  one comparator (conformance/compare.py) compares, a verdict per sample, forward-mode
  (jvp) step and error input; `plan` (what runs, the program text), `steps` (a sample's
  backward-mode steps on one engine), `jvp` (its forward-mode step).
- `run`: `python -m conformance.opinfo [ENTRY ...] [--engine M]`: the check of the covered
  entries in float32 and float64, and the map's left-out lines gone stale.
- `ids`, `item`: the same check as pytest items (the plugin's `--opinfo`), one per covered
  entry x dtype: their ids, verdicts (decision.decide) and report records.
"""
