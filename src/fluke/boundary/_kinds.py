"""Case kinds: a scenario's ``kind:`` tag says what its pass rate estimates.

A **regression** case guards what used to work (its rate should stay near 1), a **frontier**
case probes what does not work yet, an **adversarial** case is built to break the agent, and
a **production** case is a sample of real traffic (the only kind whose rate estimates the rate
in production). One pass rate over several kinds averages different estimands, weighted by
how many cases of each the suite happens to hold: the kinds are reported apart, each version
in the order recorded (the trend), with a warning when a suite mixes them.

>>> rates = kind_rates([("v1", ["kind:regression"], True), ("v1", ["kind:frontier"], False),
...                     ("v2", ["kind:regression"], True), ("v1", [], True)])
>>> [(r.version, r.kind, r.passes, r.runs) for r in rates]
[('v1', 'frontier', 0, 1), ('v1', 'regression', 1, 1), ('v1', 'unlabelled', 1, 1), ('v2', 'regression', 1, 1)]
>>> print(mixed_warning(rates))
the aggregate pass rate mixes 2 case kinds (frontier, regression), which estimate different things; read each kind apart
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence

KINDS = ("regression", "frontier", "adversarial", "production")
#: A scenario's kind comes from this tag prefix.
PREFIX = "kind:"
UNLABELLED = "unlabelled"


def kind_of(tags: Sequence[str]) -> str:
    """The first ``kind:`` tag's value, or 'unlabelled'.

    >>> kind_of(["tool:x", "kind:adversarial"]), kind_of([])
    ('adversarial', 'unlabelled')
    """
    return next((t[len(PREFIX):] for t in tags if t.startswith(PREFIX) and len(t) > len(PREFIX)), UNLABELLED)


@dataclass(frozen=True)
class KindRate:
    version: str
    kind: str
    passes: int
    runs: int
    lo: float
    hi: float

    @property
    def rate(self) -> float:
        return self.passes / self.runs if self.runs else float("nan")


def kind_rates(rows: Iterable[tuple[str, Sequence[str], bool | None]], *, level: float = 0.9) -> list[KindRate]:
    """Pass rate per (version, kind) from ``(version, tags, passed)`` rows, versions in first-seen order.

    The interval is the equal-tailed credible interval under Beta(1, 1); an unknown outcome counts as
    a failure."""
    from scipy import stats

    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    order: dict[str, int] = {}
    for version, tags, passed in rows:
        order.setdefault(version, len(order))
        t = tally[(version, kind_of(tags))]
        t[0] += passed is True
        t[1] += 1
    out = []
    for (version, kind), (k, n) in sorted(tally.items(), key=lambda kv: (order[kv[0][0]], kv[0][1])):
        lo, hi = stats.beta.ppf([(1 - level) / 2, (1 + level) / 2], 1 + k, 1 + n - k)
        out.append(KindRate(version, kind, k, n, float(lo), float(hi)))
    return out


def mixed_warning(rates: Sequence[KindRate]) -> str | None:
    """The warning a suite of several labelled kinds gets (None with one kind or none labelled)."""
    kinds = sorted({r.kind for r in rates if r.kind != UNLABELLED})
    if len(kinds) < 2:
        return None
    return (f"the aggregate pass rate mixes {len(kinds)} case kinds ({', '.join(kinds)}), which estimate different "
            "things; read each kind apart")
