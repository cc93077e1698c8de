"""``decide``: each version's cost, severe failures and expected loss under a declared loss table.

For every version named (default: every version in the ledger) one pass over its runs
(:func:`~fluke.analysis._spend.read_spend`) gives: the cost per success with its interval
clustered by scenario (:func:`fluke.decisions.cost_per_success`), the mean and 95th percentile of
spend, latency and tokens per run, the runs without a recorded cost (counted, never read as
zero), and under a grading spec the runs that broke a check of each severity with their exact
upper bounds. The loss table prices failures, asks, severities and spend; the decision is the
eligible version with the smallest expected loss per task, with the probability that it is the
wrong choice (:func:`fluke.decisions.decide_losses`). With ``sealed`` the table must have been
sealed (``fluke decide TABLE --seal``) before every run it judges.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.simulate import tradeoff_suite, TRADEOFF_SPEC
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "d.db"))
>>> _ = ledger.ingest(tradeoff_suite(scenarios=12, trials=3, seed=4).runs())
>>> table = {"failure": 1.0, "severity": {"hard": 20.0}, "spend": 10.0}
>>> result = decide(ledger, table, spec=TRADEOFF_SPEC)
>>> result.decision.choice == result.versions[0].version, len(result.versions)
(True, 2)
>>> print(result.render())  # doctest: +ELLIPSIS
decision: choose ... (tradeoff-a), expected loss 0.8269 per task; P(wrong choice) = 0.014
...
cost per success (usd): 0.0401 [0.0274, 0.0586] (the spend of all 108 runs over 67 passes)
...
hard: 4 of 108 runs (3.7%), at most 8.3% at 95%
...
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..errors import InputError, UsageError
from ..format import fmt_num, fmt_pct, fmt_prob, fmt_share
from ._document import Column, Heading, Span, Table, blank, line, note
from ._result import Result

#: The ledger document kind of a sealed loss table.
LOSS_SEAL_KIND = "loss_seal"


@dataclass(frozen=True)
class VersionCosts:
    """One version: its runs' pass share, cost per success, per-run spend/latency/tokens and severe failures."""

    version: str
    label: str
    runs: int
    passes: int
    unknown_outcomes: int
    cost_per_success: Any
    spend: Any
    latency: Any
    tokens: Any
    severe: tuple = ()
    cost_keys: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "label": self.label, "runs": self.runs, "passes": self.passes,
                "unknown_outcomes": self.unknown_outcomes, "cost_keys": list(self.cost_keys),
                "cost_per_success": self.cost_per_success.to_dict(), "spend_per_run": self.spend.to_dict(),
                "latency": self.latency.to_dict(), "tokens": self.tokens.to_dict(),
                "severe": [s.to_dict() for s in self.severe]}

    def cost_line(self) -> str:
        """``cost per success 0.052 [0.041, 0.066] (spend of 50 runs over 36 passes; 2 without a cost)``."""
        c = self.cost_per_success
        keys = "+".join(self.cost_keys) or "cost"
        if math.isnan(c.estimate):
            return f"cost per success ({keys}): undefined ({c.reason})"
        lo, hi = c.interval
        ci = f"[{fmt_num(lo, 4)}, {fmt_num(hi, 4)}]" if math.isfinite(lo) else f"(no interval: {c.reason})"
        unknown = f"; {c.unknown_cost:,} without a cost, charged at the mean of the rest" if c.unknown_cost else ""
        return (f"cost per success ({keys}): {fmt_num(c.estimate, 4)} {ci} (the spend of all {c.runs:,} runs over "
                f"{c.passes:,} passes{unknown})")

    def per_run_line(self) -> str:
        parts = []
        for p, unit in ((self.spend, ""), (self.latency, " s"), (self.tokens, " tokens")):
            if p.runs:
                lo, hi = p.mean_interval
                ci = f" [{fmt_num(lo, 4)}, {fmt_num(hi, 4)}]" if math.isfinite(lo) else ""
                parts.append(f"{p.name} mean {fmt_num(p.mean, 4)}{unit}{ci}, p95 {fmt_num(p.p95, 4)}{unit}"
                             + (f" ({p.unknown:,} not recorded)" if p.unknown else ""))
        return "per run: " + ("; ".join(parts) if parts else "no spend, latency or tokens recorded")


def version_costs(ledger, version: str, label: str, *, cost: Any = "usd", spec: Any = None, unknown: str = "fail",
                  method: str = "delta", confidence_level: float = 0.95, seed: int = 0, arrays=None) -> VersionCosts:
    """:class:`VersionCosts` of one version (its runs streamed once unless ``arrays`` are given)."""
    from ..decisions import cost_per_success, per_run, severe_rate
    from ._spend import read_spend

    a = arrays if arrays is not None else read_spend(ledger, version, cost=cost, spec=spec, unknown=unknown)
    scen = a.scenario.astype(str)
    cps = cost_per_success(a.spend, a.passed, scen, method=method, confidence_level=confidence_level,
                           rng=np.random.default_rng(seed))
    severe = ()
    if a.severities is not None:
        from ..grading import SEVERITIES

        severe = tuple(severe_rate(s, sum(s in v for v in a.severities), a.runs, confidence_level=confidence_level)
                       for s in SEVERITIES)
    return VersionCosts(version, label, a.runs, int(a.passed.sum()), a.unknown_outcomes, cps,
                        per_run("spend", a.spend, scen, confidence_level=confidence_level),
                        per_run("latency", a.latency, scen, confidence_level=confidence_level),
                        per_run("tokens", a.tokens, scen, confidence_level=confidence_level), severe, a.cost_keys)


@dataclass(frozen=True)
class DecideResult(Result):
    """Every version's costs and severe failures, the loss table, and the decision it implies."""

    kind = "decision"
    table: Any
    versions: tuple[VersionCosts, ...]
    decision: Any
    at_bounds: dict
    spec: str | None = None
    unknown: str = "fail"
    sealed: Any = None
    source: str | None = None

    def conditional_on(self) -> str:
        graded = f"severities from the spec {self.spec}" if self.spec else "no spec, so no severities"
        return (f"{len(self.versions)} versions' runs; the unit is the scenario; unknown outcomes: {self.unknown}; "
                f"{graded}; the loss table {self.source or self.table.name}")

    def payload(self) -> dict[str, Any]:
        return {"table": self.table.to_dict(), "versions": [v.to_dict() for v in self.versions],
                "decision": self.decision.to_dict(), "loss_at_bounds": self.at_bounds, "spec": self.spec,
                "unknown_policy": self.unknown, "sealed": None if self.sealed is None else self.sealed.as_dict(),
                "conditional_on": self.conditional_on()}

    @property
    def holds(self) -> bool:
        """False when a sealed table was asked for and the seal does not hold, or no version is eligible."""
        return self.decision.choice is not None and (self.sealed is None or self.sealed.holds)

    def blocks(self) -> list:
        d = self.decision
        labels = {v.version: v.label for v in self.versions}
        losses = {v.version: v for v in d.losses}
        if d.choice is None:
            out: list = [Heading(f"decision: none ({d.reason})")]
        else:
            best = losses[d.choice]
            out = [Heading(f"decision: choose {labels[d.choice]}, expected loss "
                           f"{fmt_num(best.expected, 4)} per task; {_p_wrong(d.p_wrong)}")]
        rows = []
        for v in self.versions:
            loss = losses[v.version]
            lo, hi = loss.interval
            sev = "; ".join(f"{s.failures}/{s.runs} ≤ {fmt_pct(s.upper, 1)}" for s in v.severe if s.severity == "hard")
            rows.append([Span(v.label, "bold" if v.version == d.choice else None), fmt_share(v.passes, v.runs),
                         fmt_num(v.cost_per_success.estimate, 4), sev or "—",
                         fmt_num(loss.expected, 4),
                         f"[{fmt_num(lo, 4)}, {fmt_num(hi, 4)}]" if math.isfinite(lo) else "—",
                         fmt_num(self.at_bounds.get(v.version), 4),
                         fmt_prob(loss.p_best) if loss.eligible else Span(f"out: {loss.why_not}", "warn")])
        out.append(Table("expected loss per task, by version",
                         [Column("version", key=True), Column("passed", "right"), Column("cost/success", "right"),
                          Column("hard failures", "right"), Column("loss", "right"), Column("interval", "right"),
                          Column("at bounds", "right"), Column("P(best)", "right")], rows))
        for v in self.versions:
            out += [blank(), line(Span(v.label, "bold")), line(v.cost_line()),
                    line(v.per_run_line())]
            out += [line(s.text()) for s in v.severe]
            if v.unknown_outcomes:
                out.append(note(f"{v.unknown_outcomes:,} runs of unknown outcome ({self.unknown})"))
        t = self.table
        sev = ", ".join(f"{k} {v:g}" for k, v in t.severity.items()) or "none"
        out += [blank(), note(f"loss table: failure {t.failure:g}, ask {t.ask:g}, severity {sev}, spend {t.spend:g} "
                              "per unit of cost; a run's loss is the sum of what applies to it"),
                note(f"P(best) and P(wrong choice): {d.to_dict()['posterior']}, {d.draws:,} draws; "
                     "'at bounds' prices each severity at its exact upper bound instead of its rate"),
                note(f"interval: t over the scenarios' mean losses at {d.confidence_level:.0%}")]
        if self.sealed is not None:
            out.append(line(Span(f"sealed: {self.sealed.status}", "good" if self.sealed.holds else "bad"),
                            f" — {self.sealed.found}"))
        out.append(note(f"Conditional on: {self.conditional_on()}."))
        return out


def _p_wrong(p: float) -> str:
    if math.isnan(p):
        return "P(wrong choice) undefined (one eligible version)"
    return f"P(wrong choice) = {fmt_prob(p)}" if fmt_prob(p)[:1] not in "<>" else f"P(wrong choice) {fmt_prob(p)}"


def load_loss_table(loss: Any) -> tuple[Any, bytes | None, str | None]:
    """``(table, raw bytes or None, where)`` from a path, YAML text or a mapping."""
    from ..decisions import parse_loss_table
    from ..errors import SpecError

    if isinstance(loss, (str, Path)) and Path(loss).is_file():
        raw = Path(loss).read_bytes()
        try:
            return parse_loss_table(raw.decode("utf-8")), raw, str(loss)
        except UnicodeDecodeError:
            raise InputError(str(loss), None, None, "is not UTF-8 text") from None
        except SpecError as exc:
            raise SpecError(f"{loss}: {exc}") from None
    if isinstance(loss, Path):
        raise InputError(str(loss), None, None, "no such file (a loss table: failure, ask, severity, spend)")
    return parse_loss_table(loss), None, None


@dataclass(frozen=True)
class LossSealResult(Result):
    """A loss table sealed in the ledger: its digest, and how to check it after the runs."""

    kind = "loss_seal"
    digest: str
    text_sha256: str
    name: str
    file: str
    ledger: str | None = None

    def payload(self) -> dict[str, Any]:
        return {"digest": self.digest, "text_sha256": self.text_sha256, "name": self.name, "file": self.file}

    def blocks(self) -> list:
        from ..format import fluke_command

        return [line(f"sealed loss table {self.name!r}: digest {self.digest[:12]} (table sha256 "
                     f"{self.text_sha256[:12]}); runs recorded from now on can confirm it", style="bold"),
                line("decide after the runs with the same file: ",
                     Span(fluke_command(self.ledger, "decide", self.file, "--sealed"), "code"))]


def seal_loss(ledger, loss: str | Path) -> LossSealResult:
    """Seal a loss table file's exact bytes in the ledger before the runs it will judge (validated first).

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "loss.yaml")
    >>> _ = open(path, "w").write("failure: 1\\n")
    >>> len(seal_loss(open_ledger(os.path.join(folder, "s.db")), path).digest)
    64
    """
    from ._gate import seal_text

    table, raw, where = load_loss_table(loss)
    if raw is None:
        raise UsageError("only a loss table file can be sealed (its exact bytes are what a later check compares)")
    digest, sha = seal_text(ledger, LOSS_SEAL_KIND, raw)
    return LossSealResult(digest, sha, table.name, str(where), getattr(ledger, "url", None))


def decide(ledger, loss: Any, *, versions: list[str] | None = None, spec: Any = None, unknown: str = "fail",
           method: str = "delta", confidence_level: float = 0.95, draws: int = 4000, seed: int = 0,
           sealed: bool = False) -> DecideResult:
    """Each version's expected loss per task under the loss table ``loss`` (a file, YAML text or a
    mapping), and the decision it implies (see the module docstring). ``versions`` are selectors,
    each naming one version; ``spec`` a grading spec (path or mapping) for the severities."""
    from ..decisions import decide_losses
    from ._select import pick_version, require_runs, version_label
    from ._spend import read_spend
    from ._unknowns import check_unknown

    policy = str(check_unknown(unknown))
    table, raw, where = load_loss_table(loss)
    if table.eligible and spec is None:
        raise UsageError("the loss table's eligible section bounds severe-failure rates: give --spec to grade them")
    loaded = load_any_spec(spec)
    infos = require_runs(ledger)
    chosen = [pick_version(ledger, v) for v in versions] if versions else [i.version for i in infos]
    if len(set(chosen)) != len(chosen):
        raise UsageError("the versions named must be different versions")
    costs, per_scenario, eligible, at_bounds = [], {}, {}, {}
    for v in chosen:
        a = read_spend(ledger, v, cost=table.cost, spec=loaded, unknown=policy)
        if not a.runs:
            raise UsageError(f"version {v[:12]} has no runs to decide on")
        c = version_costs(ledger, v, version_label(ledger, v), spec=loaded, confidence_level=confidence_level,
                          method=method, seed=seed, arrays=a)
        costs.append(c)
        sev = a.severities or tuple(frozenset() for _ in range(a.runs))
        loss_run = np.array([table.run_loss(bool(p), bool(q), s, x) for p, q, s, x
                             in zip(a.passed, a.asked, sev, a.spend, strict=True)])
        names, index = np.unique(a.scenario.astype(str), return_inverse=True)
        means = np.bincount(index, weights=loss_run) / np.bincount(index)
        per_scenario[v] = (names.tolist(), means.tolist())
        bounds = {s.severity: s for s in c.severe}
        why = [f"{k} ≤ {fmt_pct(bounds[k].upper, 1)} > {fmt_pct(limit, 1)}" for k, limit in table.eligible.items()
               if k in bounds and not bounds[k].upper <= limit]
        eligible[v] = "; ".join(why) or None
        at_bounds[v] = float(means.mean() + sum(table.severity.get(s.severity, 0.0) * (s.upper - s.rate)
                                                for s in c.severe if s.runs))
    decision = decide_losses(per_scenario, eligible=eligible, draws=draws, confidence_level=confidence_level,
                             rng=np.random.default_rng(seed))
    claim = None
    if sealed:
        from ._gate import _seal_claim

        claims = [_seal_claim(ledger, raw, v, kind=LOSS_SEAL_KIND, verb=("decide", "TABLE", "--seal"))
                  for v in chosen]
        claim = next((c for c in claims if not c.holds), claims[0])
    return DecideResult(table, tuple(costs), decision, at_bounds, None if spec is None else
                        (str(spec) if isinstance(spec, (str, Path)) else "given as data"), policy, claim, where)


def _load_spec_mapping(spec: Mapping[str, Any]):
    from ..grading import load_spec

    return load_spec(dict(spec))


def load_any_spec(spec: Any):
    """A grading spec from a path or a mapping (None stays None)."""
    if spec is None:
        return None
    from ._compare import _load_spec

    return _load_spec(str(spec)) if isinstance(spec, (str, Path)) else _load_spec_mapping(spec)


def claim_severe(ledger, spec, *, version: str | None = None, severity: str = "hard", at_most: float = 0.01,
                 level: float = 0.95, unknown: str = "fail"):
    """Is the rate of runs breaking a ``severity`` check at most ``at_most``? Holds when the exact upper
    bound is at or under it, fails when the exact lower bound lies above it, too small to tell
    otherwise, with the clean runs that would bound it.

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> from fluke.simulate import TRADEOFF_SPEC, tradeoff_suite
    >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "c.db"))
    >>> _ = ledger.ingest(tradeoff_suite(scenarios=25, trials=4, severe=(0.0, 0.0)).runs())
    >>> claim = claim_severe(ledger, TRADEOFF_SPEC, version="model=tradeoff-a", at_most=0.01)
    >>> claim.status, claim.found
    ('holds', 'hard: 0 of 300 runs (0.0%), at most 1.0% at 95%')
    >>> print(claim_severe(ledger, TRADEOFF_SPEC, version="model=tradeoff-a", at_most=0.005).reasons[0])
    too small to tell: hard: 0 of 300 runs (0.0%), at most 1.0% at 95%; 598 runs with no hard failure
    would bound it at 0.50%
    """
    from ..decisions import clean_runs_needed, lower_bound, severe_rate
    from ._claims import FAILS, HOLDS, TOO_SMALL, Claim
    from ._select import check_level, pick_version, version_label
    from ._spend import read_spend

    check_level(at_most, "at_most")
    chosen = pick_version(ledger, version)
    loaded = load_any_spec(spec)
    a = read_spend(ledger, chosen, spec=loaded, unknown=unknown)
    k = sum(severity in v for v in (a.severities or ()))
    rate = severe_rate(severity, k, a.runs, confidence_level=level)
    asked = f"runs breaking a {severity} check ≤ {at_most:.2%} (exact upper bound at {level:.0%})"
    rests = (f"{a.runs:,} runs of version {chosen[:12]} ({version_label(ledger, chosen)}); spec {loaded.digest[:12]}; "
             "Clopper–Pearson, one-sided; each run counted once")
    if not a.runs:
        return Claim("severe", asked, TOO_SMALL, "no runs", rests, version=chosen)
    low = lower_bound(k, a.runs, level)
    status = HOLDS if rate.upper <= at_most else FAILS if low > at_most else TOO_SMALL
    reasons: tuple[str, ...] = ()
    needed = None
    if status == FAILS:
        reasons = (f"fails: {rate.text()}; at least {low:.2%} at {level:.0%}",)
    elif status == TOO_SMALL:
        needed = float(clean_runs_needed(at_most, level))
        reasons = (f"too small to tell: {rate.text()}; {int(needed):,} runs with no {severity} failure would "
                   f"bound it at {at_most:.2%}",)
    return Claim("severe", asked, status, rate.text(), rests, reasons, runs_needed=needed, version=chosen)
