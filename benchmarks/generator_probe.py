"""The generator probe: the default profile's first N programs (derandomized, the same on
every run) run on torch and an engine (default: the reference engine), compared with the
engine's `conformance_masks`; prints each diverging program's index, its first divergent
statement and field, and the counts.

    python benchmarks/generator_probe.py [N=500] [--start K] [--seed S] [--engine NAME]
        [--sources FILE]

With --seed S, the first N programs hypothesis draws from seed S instead of the `default`
profile's derandomized ones: another sample of the same distribution (the default probe
is one fixed sample, which the fixes of the engine were made on; the tests that run
generated programs under other profiles, seeds or settings draw others).

tests/conformance/test_strategies.py::test_default_programs_agree checks the first 250 against
its list of known divergences (KNOWN_DIVERGING); the README states the figure for 500. With
`--engine conformance.engines.torch_compile` it is the campaign of
docs/findings/torch_compile.md ("Generated programs").
"""

from __future__ import annotations

import argparse
import contextlib

from conformance.gen.program_check import SIGNED_ZERO, check
from conformance.gen.strategies import COMPLEX, FORWARD, WEIGHTED, sample_programs
from conformance.run.engine import load_engine

TABLES = {"default": WEIGHTED, "FORWARD": FORWARD, "COMPLEX": COMPLEX}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=500)
    parser.add_argument("--start", type=int, default=0,
                        help="skip the first K of the N programs (to split a long probe)")
    parser.add_argument("--seed", type=int,
                        help="draw from this hypothesis seed, not the default profile's "
                             "derandomized programs")
    parser.add_argument("--engine", default="reference_engine")
    parser.add_argument("--sources", help="also write each diverging program's source here")
    parser.add_argument("--table", choices=tuple(TABLES), default="default",
                        help="FORWARD: the forward-mode table's programs (every action a "
                             "dual-level block), not the default mix's; COMPLEX: the complex "
                             "chains' table (weight 0 in the default mix)")
    parser.add_argument("--each", action="store_true",
                        help="print every program's verdict (pass, masked, diverges) as it ends")
    args = parser.parse_args()
    torch, engine = load_engine("torch"), load_engine(args.engine)
    diverging = masked = 0
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(open(args.sources, "w")) if args.sources else None
        for i, program in enumerate(sample_programs(args.n, actions=TABLES[args.table],
                                                    seed=args.seed)):
            if i < args.start:
                continue
            checked = check(program, engine, torch)
            d = checked.comparison.divergence
            if d is None:
                mask = checked.comparison.mask
                engine_masked = mask is not None and mask != SIGNED_ZERO
                masked += engine_masked
                if args.each:
                    print(f"program {i}: {'masked' if engine_masked else 'pass'}", flush=True)
                continue
            diverging += 1
            lines = checked.source.splitlines()
            statement = lines[d.line - 1].strip() if 0 < d.line <= len(lines) else ""
            print(f"program {i} line {d.line}: {statement}\n  {d.describe()[:300]}", flush=True)
            if out:
                out.write(f"=== program {i} line {d.line}\n{d.describe()}\n{checked.source}\n")
                out.flush()
    checked_count = args.n - args.start
    print(f"{diverging} of {checked_count} programs diverge"
          + (f", {masked} differ only in fields the engine masks" if masked else ""))


if __name__ == "__main__":
    main()
