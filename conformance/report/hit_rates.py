"""The hit-rate table: how many generated programs exercised each feature, error kind, op,
API and gradient path (the keys gen.program_check.hits finds in one program). Counted by the
generated-program suite, merged across xdist workers and report merges, shown at the end of
a run and kept in `conformance.json` under `generated`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class HitRates:
    """Counts of what generated programs exercised, for the hit-rate table."""

    programs: int = 0
    counts: Counter[str] = field(default_factory=Counter)

    def __repr__(self) -> str:  # short: hypothesis prints it in a failing example's arguments
        return f"HitRates(programs={self.programs}, {len(self.counts)} counts)"

    def record(self, found: set[str]) -> None:
        self.programs += 1
        self.counts.update(found)

    def merge(self, other: HitRates) -> None:
        self.programs += other.programs
        self.counts.update(other.counts)

    def rate(self, key: str) -> float:
        return self.counts[key] / self.programs if self.programs else 0.0

    def as_dict(self) -> dict[str, object]:
        return {"programs": self.programs, "counts": dict(sorted(self.counts.items()))}

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> HitRates:
        counts = d.get("counts", {})
        assert isinstance(counts, dict)
        programs = d.get("programs", 0)
        assert isinstance(programs, int)
        return cls(programs, Counter({str(k): int(v) for k, v in counts.items()}))

    def one_line(self) -> str:
        """The table in one line: how many programs, how many rates, the lowest."""
        if not self.counts:
            return f"{self.programs} generated programs"
        low = min(sorted(self.counts), key=self.rate)
        return (f"{self.programs} generated programs: {len(self.counts)} hit rates, the "
                f"lowest {low} {self.rate(low):.1%}")

    def table(self) -> str:
        """One row per key, grouped by kind (feature, error, op, api, grad, ...), sorted."""
        lines = [f"generated programs: {self.programs}", f"{'hit':<44} {'rate':>7}"]
        group = None
        for key in sorted(self.counts, key=lambda k: (k.partition(":")[0] if ":" in k
                                                       else "", k)):
            prefix = key.partition(":")[0] if ":" in key else ""
            if prefix != group:
                group = prefix
                lines.append(f"-- {prefix or 'runs'}")
            lines.append(f"{key:<44} {self.rate(key):>7.1%}")
        return "\n".join(lines)
