"""The generator probe: the default profile's first N programs (derandomized, the same on
every run) run on torch and the reference engine; prints each diverging program's index, its
first divergent statement and field, and the count.

    python benchmarks/generator_probe.py [N=500] [--sources FILE]

tests/conformance/test_strategies.py::test_default_programs_agree checks the first 250 against
its list of known divergences (KNOWN_DIVERGING); the README states the figure for 500.
"""

from __future__ import annotations

import argparse
import contextlib

from conformance.gen.check import check
from conformance.gen.strategies import sample_programs
from conformance.run.engine import load_engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=500)
    parser.add_argument("--sources", help="also write each diverging program's source here")
    args = parser.parse_args()
    torch, engine = load_engine("torch"), load_engine("reference_engine")
    diverging = 0
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(open(args.sources, "w")) if args.sources else None
        for i, program in enumerate(sample_programs(args.n)):
            checked = check(program, engine, torch)
            d = checked.comparison.divergence
            if d is None:
                continue
            diverging += 1
            lines = checked.source.splitlines()
            statement = lines[d.line - 1].strip() if 0 < d.line <= len(lines) else ""
            print(f"program {i} line {d.line}: {statement}\n  {d.describe()[:300]}")
            if out:
                out.write(f"=== program {i} line {d.line}\n{d.describe()}\n{checked.source}\n")
    print(f"{diverging} of {args.n} programs diverge")


if __name__ == "__main__":
    main()
