"""Which factor of a 2 × 2 policy design moved the outcome? (``contrast``)

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.simulate import simulate_support
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "ct.db"))
>>> _ = ledger.ingest(simulate_support(40, seed=3).runs)
>>> result = contrast(ledger, factors="memory,retry")
>>> result.environments, [c.name for c in result.contrasts][:2]
(40, ['memory', 'retry'])
>>> print(result.render())  # doctest: +ELLIPSIS
160 runs, 40 environments: 3 of 7 contrasts of mean passed exclude zero at 95% (memory, ...)
...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import InputError, UsageError
from ..format import fmt_num, fmt_p
from ._document import Column, Span, Table, line
from ._facts import scoped_runs
from ._interval import _ci, outcome_values
from ._result import Result
from ._select import check_level
from ._unknowns import check_unknown, closing_notes


@dataclass(frozen=True)
class ContrastResult(Result):
    """Factorial contrasts paired within each environment (the run's unit), with their t tests."""

    kind = "contrast"
    factors: tuple[str, str]
    outcome: str
    runs: int
    confidence_level: float
    fit: Any                    # fluke.design.FactorialContrasts
    pvalues: tuple[float, ...]  # two-sided t test of each contrast being zero, in the order of fit.contrasts
    unknowns: int = 0           # runs in scope whose outcome.passed is unknown
    unknown: str = "fail"       # what was done with them: "fail" (counted as 0) or "exclude"

    @property
    def contrasts(self) -> tuple:
        return self.fit.contrasts

    @property
    def environments(self) -> int:
        return self.fit.environments

    def payload(self) -> dict[str, Any]:
        fc = self.fit
        return {"factors": list(self.factors), "outcome": self.outcome, "levels": fc.levels,
                "environments": fc.environments, "dropped": fc.dropped, "confidence_level": self.confidence_level,
                "cell_means": fc.cell_means, "contrasts": [vars(c) for c in fc.contrasts],
                "conditional_on": fc.conditional_on, "unknowns": self.unknowns, "unknown_policy": self.unknown}

    def blocks(self) -> list:
        fc, level = self.fit, self.confidence_level
        clear = [c.name for c in fc.contrasts if c.excludes_zero]
        out: list = [line(f"{self.runs} runs, {fc.environments} environments: {len(clear)} of {len(fc.contrasts)} "
                          f"contrasts of mean {self.outcome} exclude zero at {level:.0%}"
                          + (f" ({', '.join(clear)})" if clear else ""), style="bold")]
        if fc.dropped:
            out.append(line(Span("note: ", "warn"), f"{fc.dropped} environments lacked a policy and were left out"))
        rows = [[Span(c.name, "bold") if c.excludes_zero else c.name, fmt_num(c.statistic, 3),
                 fmt_num(c.standard_error, 4), _ci(c.low, c.high), fmt_p(p), str(c.environments)]
                for c, p in zip(fc.contrasts, self.pvalues, strict=True)]
        out.append(Table(f"contrasts of mean {self.outcome}",
                         [Column("contrast", key=True), Column("estimate", "right"), Column("SE", "right"),
                          Column(f"{level:.0%} CI", "right"), Column("p", "right"), Column("envs", "right")],
                         rows, limit=None, more="contrasts",
                         notes=["bold: the interval excludes zero; p = two-sided t test that the contrast is zero, "
                                "on the interval's degrees of freedom"]))
        out.append(Table("cell means",
                         [Column("policy", key=True), Column(f"mean {self.outcome}", "right")],
                         [[k, fmt_num(v, 4)] for k, v in fc.cell_means.items()], limit=None, more="policies",
                         notes=["equal weight per environment"]))
        out.extend(closing_notes(fc.conditional_on, self.unknowns if self.outcome == "passed" else None,
                                 self.unknown))
        return out


def parse_factors(factors: str | Sequence[str]) -> tuple[str, str]:
    """Exactly two condition keys, from ``"memory,retry"`` or a sequence.

    >>> parse_factors("memory, retry")
    ('memory', 'retry')
    """
    names = [f.strip() for f in (factors.split(",") if isinstance(factors, str) else factors) if f.strip()]
    if len(names) != 2:
        raise UsageError(f"factors={factors!r}: give exactly two condition keys, e.g. memory,retry")
    return names[0], names[1]


def contrast(ledger, *, factors: str | Sequence[str], version: str | None = None, condition: str | None = None,
             outcome: str = "passed", confidence_level: float = 0.95, unknown: str = "fail") -> ContrastResult:
    """Each factor's main effect, its effect at each level of the other, and the interaction, paired
    within each environment (the run's unit) with t intervals over environments (G − 1 df) and the
    matching two-sided t test. A run whose ``passed`` is unknown counts as 0 (``unknown="fail"``)
    or is left out (``"exclude"``); the result says how many there were."""
    from ..design import factorial_contrasts
    from ..inference import t_test_pvalue

    names = parse_factors(factors)
    level = check_level(confidence_level, "level")
    unknown = check_unknown(unknown)
    runs = scoped_runs(ledger, version, condition)
    unknowns = sum(1 for r in runs if r.outcome.passed is None)
    y, kept = outcome_values(runs, outcome, unknown)
    if not kept:
        raise InputError(ledger.url, None, None, f"no run in scope has an outcome.{outcome}")
    lacking = [r for r in kept if any(f not in r.condition for f in names)]
    if lacking:
        f = next(f for f in names if f not in lacking[0].condition)
        if len(lacking) == len(kept) and not any(f in r.condition for r in kept):
            held = sorted({k for r in kept for k in r.condition})
            raise InputError(ledger.url, None, f"condition.{f}",
                             f"no run in scope was recorded under condition {f!r}, so there is no factorial study "
                             f"to contrast (the conditions these {len(kept)} runs carry: "
                             f"{', '.join(held) if held else 'none'})",
                             hint="record runs under every combination of the factors, e.g. condition "
                                  f"{f}=on and {f}=off, then name them with --factors")
        raise InputError(ledger.url, f"run {lacking[0].hash[:12]}", f"condition.{f}",
                         f"{len(lacking)} of {len(kept)} runs in scope lack this factor",
                         hint="narrow the scope to the study's runs with --version or --condition")
    try:
        fit = factorial_contrasts(y, [r.sampling_unit for r in kept],
                                  {f: [r.condition[f] for r in kept] for f in names}, confidence_level=level)
    except ValueError as exc:  # the design is not 2 x 2 in scope
        raise InputError(ledger.url, None, "condition", str(exc)) from None
    pvalues = tuple(t_test_pvalue(c.statistic, c.standard_error, c.df) for c in fit.contrasts)
    return ContrastResult(names, outcome, len(kept), level, fit, pvalues, unknowns, unknown)
