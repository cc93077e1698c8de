"""``plan``: how many runs, on how many scenarios, before any run — and where the next runs go.

Three answers, each asked for by its option (the statistics are in :mod:`fluke.design`):

* ``detect`` (points): runs per scenario and version, or scenarios, for the paired stratified
  test to detect that difference (:func:`fluke.design.paired_sample_size`);
* ``bar``: clean runs to certify P(θ > bar) ≥ ``level`` on one scenario and on a suite
  (:func:`fluke.design.certification_plan`), from the ledger's counts when a version is named;
* ``budget``: where the next runs should go, from the ledger's counts: certifying one version's
  suite (with ``bar``), or telling two versions apart (``version`` and ``against``).

With ``seal`` the plan is sealed in the ledger (``fluke unseal`` later decides it on the runs
recorded after).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "plan.db"))
>>> result = plan(ledger, bar=0.9, level=0.95, scenarios=50)
>>> result.certification.single_runs, result.certification.suite_runs
(28, 65)
>>> print(result.render())  # doctest: +ELLIPSIS
certify: 28 clean runs certify one scenario (P(θ > 0.9) ≥ 0.95); 65 clean runs on each of 50 ...
...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from ..errors import UsageError
from ..format import fluke_command, fmt_is, fmt_num, fmt_prob, natural_key
from ._document import Column, Span, Table, blank, line
from ._result import Result
from ._select import check_level, require_runs, version_label
from ._unknowns import apply_to_counts, check_unknown, closing_notes


def _settled(a) -> bool:
    """Whether an allocation cannot move its measure: a probability at 1 (or at 0) now and after."""
    if not a.measure.startswith("P("):
        return False
    return all(min(v, 1 - v) < 0.0005 for v in (a.before, a.after_plan, a.after_even))


@dataclass(frozen=True)
class PlanResult(Result):
    """The answers asked for: a two-version size, a certification count, an allocation, a seal."""

    kind = "plan"
    paired: Any = None            # fluke.design.PairedPlan
    certification: Any = None     # fluke.design.CertificationPlan
    allocation: Any = None        # fluke.design.Allocation
    strata: tuple[str, ...] = ()  # the allocation's scenarios, in its order
    versions: tuple[str, ...] = ()
    sealed: str | None = None
    unknowns: int | None = None   # runs of unknown outcome in the counts read (None: no run was read)
    unknown_policy: str = "fail"
    ledger: str | None = None     # its URL, so that the hint names it

    def payload(self) -> dict[str, Any]:
        import dataclasses

        out: dict[str, Any] = {"versions": list(self.versions), "sealed": self.sealed,
                               "unknowns": self.unknowns, "unknown_policy": self.unknown_policy}
        for name in ("paired", "certification", "allocation"):
            part = getattr(self, name)
            out[name] = None if part is None else dataclasses.asdict(part)
        if self.paired is not None:
            out["paired"]["summary"] = self.paired.summary()
        if self.certification is not None:
            out["certification"]["summary"] = self.certification.summary()
        if self.allocation is not None:
            out["allocation"]["scenarios"] = list(self.strata)
        return out

    def blocks(self) -> list:
        out: list = []
        if self.paired is not None:
            out.append(line(Span("detect: ", "bold"), self.paired.summary()))
        if self.certification is not None:
            c = self.certification
            out.append(line(Span("certify: ", "bold"), c.summary()))
            if c.remaining is not None:
                need = sorted(zip(self.strata, c.remaining, strict=True), key=lambda x: (-x[1], natural_key(x[0])))
                out.append(Table("clean runs each scenario still needs alone (most first)",
                                 [Column("scenario", key=True), Column("runs", "right")],
                                 [[s, "never" if r == float("inf") else f"{r:.0f}"] for s, r in need],
                                 more="scenarios"))
        if self.allocation is not None and _settled(self.allocation):
            a = self.allocation
            if a.before > 0.5:
                why = (f"the decision is settled ({fmt_is(a.measure, a.before)} now, and after them). Spend them on "
                       "another question, or ask a harder one (a higher --bar or --level).")
            else:
                why = (f"they cannot settle the decision ({fmt_is(a.measure, a.before)} now, and after them): it "
                       "needs more runs than this budget, or a bar the scenarios can clear.")
            out.append(line(Span("next runs: ", "bold"), f"these {a.budget} runs buy nothing; {why}"))
        elif self.allocation is not None:
            a = self.allocation
            rows = sorted(
                ((s, r) for s, r in zip(self.strata, a.runs, strict=True) if r),
                key=lambda x: (-x[1], natural_key(x[0])),
            )
            out.append(line(Span("next runs: ", "bold"),
                            f"{a.budget} runs to {a.decision}: {len(rows)} of {len(a.runs)} scenarios get some"))
            out.append(Table("where the next runs go", [Column("scenario", key=True), Column("runs", "right")],
                             [[s, str(r)] for s, r in rows], more="scenarios"))
            fmt = fmt_prob if a.measure.startswith("P(") else (lambda x: fmt_num(x, 3))
            out.append(line(f"expected gain, {a.measure}: now {fmt(a.before)}; after these runs "
                            f"{fmt(a.after_plan)}; after the same runs spread evenly {fmt(a.after_even)}"
                            + (f" (Monte Carlo over the posterior predictive, {a.draws} draws, seed {a.seed})"
                               if a.draws else "")))
        if self.sealed:
            out.append(line("sealed: ", Span(self.sealed, "bold"), "; decide it later with ",
                            Span(fluke_command(self.ledger, "unseal", self.sealed[:12]), "code")))
        if not out:
            out.append(line("nothing to plan: give --detect POINTS, --bar RATE, or --budget RUNS"))
        return out + [blank()] + closing_notes(self.conditional_on(), self.unknowns, self.unknown_policy)

    def conditional_on(self) -> list[str]:
        parts = []
        if self.paired is not None:
            source = (" (per-scenario posterior means from the ledger, uniform prior)" if self.versions else "")
            how = ("exact McNemar power (one run per arm)" if self.paired.runs_per_scenario == 1
                   else "the CMH normal approximation")
            parts.append(f"pass rate {self.paired.rate:.3g} for the first version{source}, {how}, "
                         "independent runs, the same scenarios for both versions; the limit "
                         f"{self.paired.limit_rests_on()}")
        if self.certification is not None:
            parts.append(f"prior {self.certification.prior} per scenario, scenarios independent, clean runs")
        if self.allocation is not None:
            parts.append("the counts in the ledger now; rates as their posterior means (uniform prior)")
        return parts


def _counts(
    ledger, version: str, scenario, condition, unknown: str
) -> tuple[dict[tuple[str, str], tuple[int, int]], int]:
    """``{(scenario, condition): (passes, trials)}`` under the unknown-outcome policy, and the unknowns."""
    rows = list(ledger.counts(version=version, scenario=scenario, condition=condition))
    out = {}
    for r in rows:
        trials, passes = apply_to_counts(r.trials, r.passes, r.unknowns, unknown)
        out[(r.scenario, r.condition)] = (passes, trials)
    return out, sum(r.unknowns for r in rows)


def _name(key: tuple[str, str]) -> str:
    return key[0] if not key[1] else f"{key[0]} {key[1]}"


def plan(ledger=None, *, detect: float | None = None, rate: float | None = None, scenarios: int | None = None,
         runs: int | None = None, bar: float | None = None, level: float = 0.95, budget: int | None = None,
         version: str | None = None, against: str | None = None, scenario: str | None = None,
         condition: str | None = None, alpha: float = 0.05, power: float = 0.8, draws: int = 2000,
         seed: int = 0, seal: bool = False, unknown: str = "fail") -> PlanResult:
    """Plan runs: ``detect`` points between two versions, certify at ``bar``, or allocate ``budget`` runs.

    Counts read from the ledger (with ``version``) take a run whose outcome is unknown as a failed
    trial (``unknown="fail"``) or leave it out (``"exclude"``), and the result says how many."""
    from ..design import (allocate_certification, allocate_difference, certification_plan,
                          paired_sample_size)

    check_level(alpha, "alpha")
    check_level(power, "power")
    check_level(level, "level")
    unknown = check_unknown(unknown)
    unknowns = None
    if bar is not None:
        check_level(bar, "bar")
    if against and not version:
        raise UsageError("--against needs --version (the two versions to tell apart)")
    counts_a = counts_b = None
    names: list[str] = []
    if version:
        if ledger is None:
            raise UsageError("naming a version needs a ledger")
        require_runs(ledger)
        va = ledger.resolve_version(version)
        counts_a, unknowns = _counts(ledger, va, scenario, condition, unknown)
        chosen = [va]
        if against:
            vb = ledger.resolve_version(against)
            counts_b, more = _counts(ledger, vb, scenario, condition, unknown)
            unknowns += more
            chosen.append(vb)
        names = [version_label(ledger, v) for v in chosen]
    paired = cert = alloc = None
    strata: tuple[str, ...] = ()
    if detect is not None:
        if rate is None and counts_a:
            # posterior means (uniform prior): a scenario seen once is not a certain pass or failure
            per = [(k + 1) / (n + 2) for k, n in (counts_a[key] for key in sorted(counts_a))]
            given = sum(per) / len(per) if runs else per
            paired = paired_sample_size(detect, given, scenarios=None if runs else len(per), runs=runs,
                                        alpha=alpha, power=power)
        else:
            if rate is None:
                raise UsageError("--detect needs --rate (the expected pass rate) or --version (rates from the ledger)")
            if (scenarios is None) == (runs is None):
                raise UsageError("--detect needs --scenarios (to plan runs per scenario) or --runs (to plan scenarios)")
            paired = paired_sample_size(detect, rate, scenarios=scenarios, runs=runs, alpha=alpha, power=power)
    if bar is not None and budget is None:
        if counts_a:
            keys = sorted(counts_a, key=lambda k: (natural_key(k[0]), k[1]))
            cert = certification_plan(bar=bar, level=level, passes=[counts_a[k][0] for k in keys],
                                      trials=[counts_a[k][1] for k in keys])
            strata = tuple(_name(k) for k in keys)
        else:
            cert = certification_plan(bar=bar, level=level, scenarios=scenarios or 1)
    if budget is not None:
        if not counts_a:
            raise UsageError("--budget needs --version: the allocation starts from the runs the ledger holds")
        if counts_b is not None:
            keys = sorted(set(counts_a) & set(counts_b), key=lambda k: (natural_key(k[0]), k[1]))
            if not keys:
                raise UsageError("the two versions share no scenario to allocate runs over")
            alloc = allocate_difference([counts_a[k][0] for k in keys], [counts_a[k][1] for k in keys],
                                        [counts_b[k][0] for k in keys], [counts_b[k][1] for k in keys], budget)
        else:
            if bar is None:
                raise UsageError("--budget with one version allocates runs to certify it: give --bar too "
                                 "(or --against VERSION to tell two versions apart)")
            keys = sorted(counts_a, key=lambda k: (natural_key(k[0]), k[1]))
            alloc = allocate_certification([counts_a[k][0] for k in keys], [counts_a[k][1] for k in keys], budget,
                                           bar=bar, level=level, draws=draws, seed=seed)
        strata = tuple(_name(k) for k in keys)
    sealed = None
    if seal:
        sealed = _seal(ledger, version, bar, level, paired, cert, alloc, strata, unknown)
    return PlanResult(paired, cert, alloc, strata, tuple(names), sealed, unknowns, unknown,
                      getattr(ledger, "url", None))


def _seal(ledger, version, bar, level, paired, cert, alloc, strata, unknown) -> str:
    """Seal the plan: the decision is the version's pass rate, its lower bound above the bar."""
    from ..design import seal_rule as put_seal

    if ledger is None or bar is None:
        raise UsageError("--seal needs a ledger and --bar: the sealed decision is 'the pass rate's lower bound "
                         "clears the bar'")
    rule: dict[str, Any] = {
        "name": f"plan: pass rate above {bar:g}",
        "decision": {"statistic": "mean", "outcome": "passed", "unit": "scenario", "bound": "lower", "above": bar,
                     "confidence_level": level, "unknown": str(unknown)},
        "notes": "; ".join(p.summary() for p in (paired, cert) if p is not None)
                 + ("" if alloc is None else f"; next {alloc.budget} runs: "
                    + ", ".join(f"{s}: {r}" for s, r in zip(strata, alloc.runs, strict=True) if r)),
    }
    if version:
        rule["scope"] = {"version": ledger.resolve_version(version)}
    return put_seal(ledger, yaml.safe_dump(rule, sort_keys=False, allow_unicode=True))
