"""``believe`` and ``predict``: what the runs let you believe per scenario and about the suite.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "b.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True))
...                    for t in range(5)])
>>> result = believe(ledger)
>>> "What we infer: average rate 0.857" in result.render()
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import UsageError
from ..format import fluke_command, fmt_interval, fmt_prob, fmt_share
from ._cell_posteriors import Beliefs, beliefs, cell_name
from ._document import Column, Table, blank, line, note
from ._result import Result
from ._select import check_level, version_label
from ._unknowns import apply_to_counts, unknown_fields, unknown_note


#: The reset-rate simulation printed beside a change check: fixed, so the output is reproducible.
_RESET_SEED, _RESET_HISTORIES = 2026, 2000


def _summaries(b: Beliefs, *, prior: str, delta: float, touched, odds) -> tuple[str, str | None]:
    prior_summary = b.prior_text[0] if len(set(b.prior_text)) == 1 else f"{prior} (per scenario, see each)"
    if not b.earlier:
        return prior_summary, None
    carried = int(np.sum(b.found.carried))
    span = (
        b.earlier[0]
        if len(b.earlier) == 1
        else f"{len(b.earlier)} earlier versions ({b.earlier[0]} to {b.earlier[-1]})"
    )
    same = b.delta is not None and len(set(np.round(b.delta, 12))) == 1
    text = (f"evidence of {span}, each carry at δ = {delta:g}" if same else
            f"evidence of {span}, δ = {delta:g} for {int(np.sum(b.delta < 1))} scenarios tagged {', '.join(touched)} "
            "and 1 elsewhere")
    text += f"; carried into {carried} of {len(b.cells)} scenarios (the rest are new: declared prior only)"
    if odds is not None:
        text += (f"; change check at prior odds {odds:g}:1 for unchanged, {int(np.sum(b.resets() > 0))} scenarios "
                 "likely changed at least once (their evidence restarts there; the estimates mix both branches)")
    return prior_summary, text + "."


@dataclass(frozen=True)
class BeliefResult(Result):
    """Posteriors per scenario cell, the suite questions and the four-part statements."""

    kind = "believe"
    b: Beliefs
    bar: float
    level: float
    next_m: int
    prior: str
    odds: float | None
    statements: bool
    arrays: dict
    suite: Any
    suite_certify: float
    suite_statement: Any
    per: list
    review: Any = None
    reset: Any = None   # fluke.inference.ResetRate: how often the change check resets an unchanged scenario
    costs: Any = None   # with costs: fluke.analysis.VersionCosts (cost per success, per-run spend, severe failures)

    def payload(self) -> dict[str, Any]:
        b, a, suite, check = self.b, self.arrays, self.suite, self.b.check()
        return {
            "version": b.version, "label": b.label, "bar": self.bar, "level": self.level, "prior": self.prior,
            "carried_from": b.origin, "odds": self.odds, "account": b.account_labels,
            "scenarios": [dict(
                scenario=c[0], condition=c[1], passes=int(b.k[i]), trials=int(b.n[i]), mean=float(a["mean"][i]),
                p_above=float(a["p_above"][i]), interval=[float(a["lo"][i]), float(a["hi"][i])], next_m=self.next_m,
                p_next_all_pass=float(a["p_next"][i]), runs_to_certify=float(a["certify"][i]),
                p_changed=None if check is None else float(check[0][i]),
                surprise=None if check is None else float(check[1][i]),
                since=None if not b.earlier else b.since()[i],
                resets=None if b.odds is None or not b.earlier else int(b.resets()[i]),
                carried=bool(b.found.carried[i]), carried_text=b.carried[i],
                delta=None if b.delta is None else float(b.delta[i]),
                prior=b.prior_text[i], statement=self.per[i].as_dict()) for i, c in enumerate(b.cells)],
            "suite": dict(scenarios=suite.scenarios, average_mean=suite.average_mean, average_sd=suite.average_sd,
                          expected_below=suite.expected_below, below_interval=list(suite.below_interval(0.9)),
                          p_all_clear=suite.p_all_clear, log10_p_all_clear=suite.log10_p_all_clear,
                          expected_failures=suite.expected_failures,
                          failures_interval=list(suite.failures_interval(0.9)),
                          failures_pmf=suite.failures_pmf, runs_to_certify_suite=self.suite_certify),
            "statement": self.suite_statement.as_dict(),
            "review": None if self.review is None else self.review.payload(),
            "reset_rate": None if self.reset is None else dict(
                theta=self.reset.theta, trials=self.reset.trials, versions=self.reset.versions,
                per_version=self.reset.per_version, per_version_se=self.reset.per_version_se,
                any_reset=self.reset.any_reset, any_reset_se=self.reset.any_reset_se,
                histories=self.reset.histories, seed=_RESET_SEED),
            **unknown_fields(b.total_unknowns, b.unknown_policy),
            **({} if self.costs is None else {"costs": self.costs.to_dict()}),
        }

    def _cost_blocks(self) -> list:
        c = self.costs
        if c is None:
            return []
        return [line(c.cost_line()), line(c.per_run_line()), *(line(s.text()) for s in c.severe)]

    def blocks(self) -> list:
        b, a, bar, suite = self.b, self.arrays, self.bar, self.suite
        clear = int(np.sum(a["p_above"] >= 0.95))
        out: list = [line(f"version {b.label}: {clear} of {len(b.cells)} scenario cells clear {bar:g} with "
                          f"P ≥ 0.95; average pass rate {suite.average_mean:.3f} ± {suite.average_sd:.3f}",
                          style="bold")]
        order = sorted(range(len(b.cells)), key=lambda i: (a["p_above"][i], a["mean"][i]))
        prior = b.prior_text[0] if len(set(b.prior_text)) == 1 else "per scenario"
        out.append(Table(
            f"{len(b.cells)} scenarios, {int(b.k.sum())} passes in {int(b.n.sum())} runs; prior {prior} "
            "(least likely to clear the bar first)",
            [Column("scenario", key=True), Column("passed", "right"), Column("next", "right"),
             Column(f"P(θ>{bar:g})", "right"), Column(f"{self.level * 100:g}% CrI", "right"),
             Column(f"P(next {self.next_m})", "right"), Column("certify", "right")],
            [[cell_name(b.cells[i]), fmt_share(int(b.k[i]), int(b.n[i]), 0), f"{a['mean'][i]:.3f}",
              fmt_prob(a["p_above"][i]), fmt_interval(a['lo'][i], a['hi'][i]), fmt_prob(a["p_next"][i]),
              f"{a['certify'][i]:.0f}"] for i in order], more="scenarios"))
        out.append(note(f"next = P(the next run passes); P(θ>{bar:g}) = P(the pass rate clears the bar); CrI = "
                        f"equal-tailed credible interval; P(next {self.next_m}) = P(the next {self.next_m} runs all "
                        f"pass); certify = clean runs still needed for P(θ>{bar:g}) ≥ 0.95."))
        out += self._cost_blocks()
        check = b.check()
        if check is not None:
            out += self._check_blocks(check)
        blo, bhi = suite.below_interval(0.9)
        flo, fhi = suite.failures_interval(0.9)
        out.append(Table(f"suite questions at bar {bar:g}", [Column("question", key=True), Column("answer", "right")], [
            ["average pass rate (posterior mean ± sd)", f"{suite.average_mean:.3f} ± {suite.average_sd:.3f}"],
            [f"scenarios below {bar:g} (expected, 90% range)",
             f"{suite.expected_below:.1f} of {suite.scenarios} ({blo} to {bhi})"],
            [f"P(every scenario above {bar:g})", suite.p_all_clear_text()],
            ["failures in the next full execution (expected, 90% range)",
             f"{suite.expected_failures:.1f} ({flo} to {fhi})"],
            [f"clean runs per scenario to reach P(all above {bar:g}) ≥ 0.95",
             "already" if self.suite_certify == 0 else f"{self.suite_certify:.0f} more each"]], limit=None))
        out.append(line(self.suite_statement.text()))
        out.append(unknown_note(b.total_unknowns, b.unknown_policy))
        if self.statements or len(self.per) <= 3:
            for s in self.per:
                out += [blank(), line(s.text())]
        if self.review is not None:
            out += [blank()] + self.review.blocks()
        return out

    def _check_blocks(self, check, limit: int = 20) -> list:
        b = self.b
        p_changed, surprise = check
        order = sorted(range(len(b.cells)), key=lambda i: -p_changed[i])
        account = len(b.earlier) > 1
        cols = [Column("scenario", key=True), Column("batch", "right"), Column("surprise", "right"),
                Column("P(changed)", "right")] + ([Column("evidence since"), Column("resets", "right")]
                                                  if account else [])
        rows = []
        for i in order:
            row = [cell_name(b.cells[i]), fmt_share(int(b.k[i]), int(b.n[i]), 0),
                   "—" if surprise[i] != surprise[i] else fmt_prob(surprise[i]), f"{p_changed[i]:.3f}"]
            if account:
                row += [b.since()[i].split(" (", 1)[-1].rstrip(")"), str(int(b.resets()[i]))]
            rows.append(row)
        return [Table(f"change check of the latest batch ({int((p_changed >= 0.5).sum())} of {len(b.cells)} "
                      "scenarios reset at P(changed) ≥ 0.5)", cols, rows, limit=limit, more="scenarios"),
                note("surprise = P(a batch this bad or worse | the carried belief).")] + (
                [note(f"False resets: {self.reset.describe()}, seed {_RESET_SEED}.")] if self.reset is not None else [])


@dataclass(frozen=True)
class ReviewResult(Result):
    """Week over week: each scenario against an earlier version (regression set = the clean ones)."""

    kind = "review"
    old: str
    cells: list
    ko: np.ndarray
    no: np.ndarray
    kn: np.ndarray
    nn: np.ndarray
    result: Any

    def payload(self) -> dict[str, Any]:
        r = self.result
        return dict(against=self.old, level=r.level, clean_batch=r.clean_batch, scenarios=[dict(
            scenario=c[0], condition=c[1], old=[int(self.ko[i]), int(self.no[i])],
            new=[int(self.kn[i]), int(self.nn[i])], role="frontier" if r.frontier[i] else "regression",
            p_worse=float(r.p_worse[i]), fisher_worse=float(r.fisher_worse[i]),
            fisher_better=float(r.fisher_better[i]), regressed=bool(r.regressed[i]),
            progressed=bool(r.progressed[i]), graduated=bool(r.graduated[i])) for i, c in enumerate(self.cells)])

    def blocks(self) -> list:
        from ._document import Span

        r = self.result
        rows = []
        order = sorted(range(len(self.cells)), key=lambda i: (-bool(r.regressed[i]), -float(r.p_worse[i])))
        for i in order:
            verdict = Span("regressed", "bad") if r.regressed[i] else Span("progressed", "good") \
                if r.progressed[i] else "—"
            if r.graduated[i]:
                verdict = Span(f"{verdict.text if hasattr(verdict, 'text') else verdict} graduates")
            rows.append([cell_name(self.cells[i]), "frontier" if r.frontier[i] else "regression",
                         fmt_share(int(self.ko[i]), int(self.no[i]), 0), fmt_share(int(self.kn[i]), int(self.nn[i]), 0),
                         fmt_prob(r.p_worse[i]), f"{fmt_prob(r.fisher_worse[i])} / {fmt_prob(r.fisher_better[i])}",
                         verdict])
        return [Table(f"against version {self.old}: {int(r.regressed.sum())} regressed, {int(r.progressed.sum())} "
                      f"progressed, {int(r.graduated.sum())} graduated (regression set = scenarios clean on the old "
                      f"version; flagged at P ≥ {r.level:g}; uniform priors)",
                      [Column("scenario", key=True), Column("set"), Column("old", "right"), Column("new", "right"),
                       Column("P(new worse)", "right"), Column("Fisher p worse / better", "right"),
                       Column("verdict")], rows, more="scenarios"),
                note(r.describe_control()),
                note("A week-over-week comparison says whether a scenario moved, never whether it is above a bar.")]


def review(ledger, b: Beliefs, against: str, clean_batch: int) -> ReviewResult:
    """Compare ``b``'s version with ``against`` scenario by scenario (the weekly review)."""
    from .. import inference as inf
    from ..errors import SelectorError

    old = ledger.resolve_version(against)
    counts = {(r.scenario, r.condition): r for r in ledger.counts(version=old)}
    idx = [i for i, c in enumerate(b.cells) if c in counts]
    if not idx:
        raise SelectorError(f"--against: version {old[:12]} shares no scenario with version {b.version[:12]}")
    ko = np.array([counts[b.cells[i]].passes for i in idx], float)
    no = np.array([apply_to_counts(counts[b.cells[i]].trials, 0, counts[b.cells[i]].unknowns, b.unknown_policy)[0]
                   for i in idx], float)
    result = inf.review_week(ko, no, b.k[idx], b.n[idx], frontier=ko < no, clean_batch=clean_batch)
    return ReviewResult(version_label(ledger, old), [b.cells[i] for i in idx], ko, no, b.k[idx], b.n[idx], result)


def believe(ledger, *, version: str | None = None, prior: str = "uniform", family_prefix: str = "",
            carry_from: str | None = None, account: bool = False, delta: float = 0.5, touched: tuple = (),
            odds: float | None = None, bar: float = 0.9, level: float = 0.9, next_m: int = 8,
            statements: bool = False, against: str | None = None, clean_batch: int = 10,
            unknown: str = "fail", costs: bool = False, cost: Any = "usd", spec: Any = None) -> BeliefResult:
    """Posteriors per scenario, the suite questions and the four-part statements for one version.

    ``unknown``: a run whose outcome is unknown is a failed trial (``"fail"``) or left out (``"exclude"``).
    ``costs`` adds the version's cost per success, its spend, latency and tokens per run (``cost``
    chooses the spend's keys) and, with ``spec``, its runs breaking a check of each severity with an
    exact upper bound (:func:`fluke.analysis.version_costs`; the version's runs are streamed once).
    """
    from .. import inference as inf

    check_level(bar, "bar")
    check_level(level, "level")
    if next_m < 1:
        raise UsageError(f"next={next_m!r} must be at least 1")
    b = beliefs(ledger, version=version, prior=prior, carry_from=carry_from, delta=delta, touched=tuple(touched),
                odds=odds, family_prefix=family_prefix, account=account, unknown=unknown)
    rev = review(ledger, b, against, clean_batch) if against else None
    one = b.found  # one posterior feeds every line: the table, certification and the suite
    lo, hi = one.interval(level)
    arrays = dict(lo=lo, hi=hi, p_above=one.p_above(bar), mean=one.mean, p_next=one.p_next_all_pass(next_m),
                  certify=one.runs_to_certify(bar=bar, level=0.95))
    suite = one.suite(bar=bar)
    suite_certify = one.suite_runs_to_certify(bar=bar, level=0.95)
    prior_summary, carried_summary = _summaries(b, prior=prior, delta=delta, touched=touched, odds=odds)
    suite_stmt = inf.suite_statement(suite, b.k, b.n, version=b.label, prior=prior_summary, carried=carried_summary)
    per = inf.scenario_statements([cell_name(c) for c in b.cells], b.k, b.n, b.belief, version=b.label,
                                  prior=b.prior_text, bar=bar, level=level, carried=b.carried)
    reset = None
    if odds is not None and b.earlier:
        # the reset rule looks at every version: say how often it fires on a scenario that did not change,
        # at this suite's average rate and batch size, over as many versions as this account holds
        reset = inf.reset_rate(float(np.clip(suite.average_mean, 0, 1)), max(1, int(np.median(b.n))),
                               len(b.earlier) + 1, odds=odds, delta=delta, rng=np.random.default_rng(_RESET_SEED),
                               histories=_RESET_HISTORIES)
    spent = None
    if costs or spec is not None:
        from ._decide import load_any_spec, version_costs
        from ._unknowns import check_unknown

        loaded = load_any_spec(spec)
        spent = version_costs(ledger, b.version, b.label, cost=cost, spec=loaded, unknown=str(check_unknown(unknown)))
    return BeliefResult(b, bar, level, next_m, prior, odds, statements, arrays, suite, suite_certify, suite_stmt,
                        per, rev, reset, spent)


@dataclass(frozen=True)
class PredictionResult(Result):
    """Predictions recorded in the ledger before the next batch runs."""

    kind = "predict"
    version: str
    label: str
    made_at: str
    digests: tuple[str, ...]
    unknowns: int = 0
    unknown_policy: str = "fail"
    ledger: str | None = None  # its URL, so that the hint names it

    def payload(self) -> dict[str, Any]:
        return {"version": self.version, "made_at": self.made_at, "predictions": len(self.digests),
                "digests": list(self.digests), **unknown_fields(self.unknowns, self.unknown_policy)}

    def blocks(self) -> list:
        return [line(f"recorded {len(self.digests)} predictions for version {self.label} at {self.made_at}; after "
                     f"the next batch is ingested, score them with: {fluke_command(self.ledger, 'calibration')}"),
                unknown_note(self.unknowns, self.unknown_policy)]


def predict(ledger, *, version: str | None = None, prior: str = "uniform", family_prefix: str = "",
            carry_from: str | None = None, account: bool = False, delta: float = 0.5, touched: tuple = (),
            odds: float | None = None, unknown: str = "fail") -> PredictionResult:
    """Record each scenario's probability that its next run passes (scored later by ``calibration``),
    a run whose outcome is unknown counted as a failure (``unknown="fail"``) or left out (``"exclude"``)."""
    from ..ledger import utcnow

    b = beliefs(ledger, version=version, prior=prior, carry_from=carry_from, account=account, delta=delta,
                touched=tuple(touched), odds=odds, family_prefix=family_prefix, want_tags=True, unknown=unknown)
    made_at = utcnow()
    mean = b.belief.mean
    digests = tuple(ledger.put_document("prediction", dict(
        version=b.version, scenario=c[0], condition=c[1], probability=float(mean[i]), made_at=made_at,
        prior=b.prior_text[i], family=b.families[i], carried=b.carried[i],
        evidence=dict(passes=int(b.k[i]), trials=int(b.n[i]), unknowns=int(b.unknowns[i]),
                      unknown_policy=b.unknown_policy))) for i, c in enumerate(b.cells))
    return PredictionResult(b.version, b.label, made_at, digests, b.total_unknowns, b.unknown_policy,
                            getattr(ledger, "url", None))
