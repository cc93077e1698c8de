"""``leaderboard``: many versions on the same scenarios — which differ, how sure the ranking is.

Reads only the ledger's count table (``ledger.counts``) for the pass rates, and two aggregate
queries for cost and latency (:meth:`fluke.ledger.Ledger.spend`), so no run is built; then
calls :func:`fluke.comparison.leaderboard_counts` over the strata (scenario × condition) that
every chosen version ran.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "lb.db"))
>>> rates = {"good": 0.9, "fair": 0.6, "poor": 0.2}
>>> _ = ledger.ingest([Run(scenario=f"s{s}", trial=t, identity=Identity(model=m), latency=1.5,
...                        outcome=Outcome(passed=(s * 7 + t * 3) % 10 < 10 * r))
...                    for m, r in rates.items() for s in range(12) for t in range(5)])
>>> result = leaderboard(ledger, replicates=200)
>>> [s.label for s in result.board.ordered()]
['good', 'fair', 'poor']
>>> print(result.render())  # doctest: +ELLIPSIS
3 versions on 12 strata (12 scenarios): 3 groups that cannot be told apart...
...
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import UsageError
from ..format import fmt_interval, fmt_num, fmt_p, fmt_prob, natural_key
from ._document import Column, Heading, Rows, Span, Table, blank, line, note
from ._result import Result
from ._unknowns import BOTH, UnknownPolicy, check_unknown, unknown_fields, unknown_note
from ._select import check_level, require_runs, versions as ledger_versions

#: Above this many runs, cost and latency are read only when asked for (a scan of every stored run:
#: 3.6 s of CPU over 100,000 runs of 5 KB, against well under a second for the rest of the board).
COST_SCAN_LIMIT = 20_000


@dataclass(frozen=True)
class LeaderboardResult(Result):
    """Standings, pair tests, groups and ranks of many versions (``board``), with what each run cost."""

    kind = "leaderboard"
    board: Any
    versions: tuple[tuple[str, str], ...]     # (label, version hash), in the board's row order
    left_out: int                             # strata some chosen version did not run
    spend: dict                               # label -> {"latency": mean s, "cost.<key>": mean, ...}
    rows: int = 10
    costs_read: bool = True
    runs: int = 0
    unknowns: int = 0                         # runs of unknown outcome in the strata compared
    unknown_policy: str = "fail"
    excluded: Any = None                      # with --unknown both: the board with unknowns left out
    per_success: dict | None = None           # with rank="cost": label -> fluke.decisions.CostPerSuccess
    rank_by: str = "pass"                     # "pass" (the board's order) or "cost" (cost per success)

    def frontier(self) -> list[str]:
        """The versions on the cost–quality frontier (pass rate against cost per success), cheapest first."""
        from ..decisions import frontier

        if not self.per_success:
            return []
        return frontier({s.label: (s.rate, self.per_success[s.label].estimate) for s in self.board.standings
                         if s.label in self.per_success})

    def flips(self) -> list[dict[str, Any]]:
        """With both policies: the pairs of versions whose order (by pass rate) is not the same
        when unknowns count as failures as when they are left out."""
        if self.excluded is None:
            return []
        fail = {s.label: s for s in self.board.standings}
        excl = {s.label: s for s in self.excluded.standings}
        labels = sorted(fail)
        out = []
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                d_fail, d_excl = fail[b].rate - fail[a].rate, excl[b].rate - excl[a].rate
                if d_fail * d_excl < 0:
                    out.append({"a": a, "b": b, "difference_fail_points": d_fail, "difference_exclude_points": d_excl})
        return out

    def conditional_on(self) -> str:
        b = self.board
        return (f"the {b.strata} strata (scenario × condition) every one of {len(self.versions)} versions ran, "
                f"in {b.scenarios} scenarios (the unit); each pair by the stratified test, "
                f"{_correction(b.correction)} across {len(b.pairs)} pairs at α = {b.alpha:g}, detection limit at "
                f"α/{len(b.pairs)} and power {b.power:g} (ceiling {b.ceiling:g} points); ranks from "
                f"{b.replicates} bootstrap resamples of the scenarios, seed {b.seed}"
                + ("" if b.first is None else f"; P(first) with the version effects shrunk toward each other "
                   f"(τ = {100 * b.first.tau:.1f} points)"))

    def payload(self) -> dict[str, Any]:
        b = self.board
        hashes = dict(self.versions)
        return {
            "versions": [{"label": s.label, "version": hashes[s.label], "passes": s.passes, "trials": s.trials,
                          "rate_points": s.rate, "interval_points": [s.low, s.high], "rank": s.rank,
                          "rank_interval": [s.rank_low, s.rank_high], "p_first": s.p_first, "group": s.group,
                          "spend": self.spend.get(s.label, {}), **self._excluded_fields(s.label)}
                         for s in b.ordered()],
            "pairs": [{"a": p.a, "b": p.b, "difference_points": p.difference, "interval_points": [p.low, p.high],
                       "test": p.method, "pvalue": p.pvalue, "adjusted_pvalue": p.adjusted,
                       "detection_limit": p.detection_limit, "verdict": p.verdict} for p in b.pairs],
            "groups": None if b.groups is None else [list(g) for g in b.groups],
            "forest": b.forest(),
            "separating": [{"stratum": x.stratum, "scenario": x.scenario, "spread_points": x.spread,
                            "best": x.best, "best_rate": x.best_rate, "worst": x.worst, "worst_rate": x.worst_rate,
                            "at_best": x.ties[0], "at_worst": x.ties[1]}
                           for x in b.separating],
            "unsolved": list(b.unsolved), "strata": b.strata, "scenarios": b.scenarios, "left_out": self.left_out,
            "baseline": b.baseline, "correction": b.correction, "alpha": b.alpha, "power": b.power,
            "ceiling": b.ceiling, "confidence_level": b.confidence_level, "replicates": b.replicates,
            "seed": b.seed, "p_first_model": None if b.first is None else b.first.to_dict(),
            "costs_read": self.costs_read, "conditional_on": self.conditional_on(),
            **unknown_fields(self.unknowns, self.unknown_policy),
            **({"flips": self.flips()} if self.excluded is not None else {}),
            **({} if self.per_success is None else {
                "rank_by": self.rank_by, "frontier": self.frontier(),
                "cost_per_success": {k: v.to_dict() for k, v in self.per_success.items()}}),
        }

    def _cost_blocks(self) -> list:
        if self.per_success is None:
            return []
        on = set(self.frontier())
        rates = {s.label: s for s in self.board.standings}
        order = sorted(self.per_success, key=lambda k: (not math.isfinite(self.per_success[k].estimate),
                                                        self.per_success[k].estimate, k))
        rows = []
        for label in order:
            c, s = self.per_success[label], rates[label]
            lo, hi = c.interval
            rows.append([label, f"{s.rate:.1f}", fmt_num(c.estimate, 4) if math.isfinite(c.estimate) else
                         f"— ({c.reason})", f"{fmt_num(lo, 4)}–{fmt_num(hi, 4)}" if math.isfinite(lo) else "—",
                         str(c.unknown_cost), Span("on the frontier", "good") if label in on else "dominated"])
        return [Table("cost per success (every run's spend over the passes), cheapest first",
                      [Column("version", key=True), Column("pass rate", "right"), Column("cost/success", "right"),
                       Column("interval", "right"), Column("no cost", "right"), Column("cost–quality")], rows,
                      limit=None, more="versions"),
                line(f"cost–quality frontier (no other version passes more for less): {', '.join(self.frontier())}"
                     if on else "cost–quality frontier: no version has a defined cost per success"),
                note("cost per success over each version's runs in the compared strata' scenarios; interval by the "
                     "delta method clustered by scenario; the frontier reads the point estimates")]

    def _excluded_fields(self, label: str) -> dict[str, Any]:
        if self.excluded is None:
            return {}
        s = next(x for x in self.excluded.standings if x.label == label)
        return {"exclude": {"passes": s.passes, "trials": s.trials, "rate_points": s.rate,
                            "interval_points": [s.low, s.high], "rank": s.rank}}

    def blocks(self) -> list:
        from ..comparison import DIFFERENT, TOO_SMALL

        b = self.board
        level = f"{100 * b.confidence_level:g}%"
        if b.groups is not None:
            head = (f"{len(self.versions)} versions on {b.strata} strata ({b.scenarios} scenarios): "
                    f"{len(b.groups)} group{'s' if len(b.groups) != 1 else ''} that cannot be told apart")
        else:
            found = sum(p.verdict == DIFFERENT for p in b.pairs)
            head = (f"{len(self.versions)} versions on {b.strata} strata ({b.scenarios} scenarios): "
                    f"{found} of {len(b.pairs)} differ from the baseline {b.baseline}")
        costs = sorted({k for v in self.spend.values() for k in v})
        out: list = [Heading(head)]
        if b.groups is not None:
            out.append(line("groups (no pair inside found different): "
                            + "; ".join(f"{_letter(i)} = {', '.join(g)}" for i, g in enumerate(b.groups))))
        cols = [Column("rank", "right"), Column("version", key=True), Column("pass rate", "right"),
                Column(f"{level} interval", "right"), Column(f"rank {level}", "right"),
                Column("P(first)", "right")]
        if b.groups is not None:
            cols.append(Column("group"))
        if self.excluded is not None:
            cols += [Column("unknowns left out", "right"), Column("rank", "right")]
        cols += [Column(k.removeprefix("cost.") + (" (s)" if k == "latency" else ""), "right") for k in costs]
        rows = []
        excluded = {x.label: x for x in self.excluded.standings} if self.excluded is not None else {}
        for s in b.ordered():
            row = [str(s.rank), s.label, f"{s.rate:.1f} ({s.passes}/{s.trials})", _interval(s.low, s.high),
                   f"{s.rank_low}–{s.rank_high}", fmt_prob(s.p_first)]
            if b.groups is not None:
                row.append(s.group)
            if excluded:
                x = excluded[s.label]
                row += [f"{x.rate:.1f} ({x.passes}/{x.trials})",
                        Span(str(x.rank), "warn") if x.rank != s.rank else str(x.rank)]
            spent = self.spend.get(s.label, {})
            row += [fmt_num(spent[k]) if k in spent else "—" for k in costs]
            rows.append(row)
        out.append(Table("pass rate per version (points, mean over strata), best first"
                         + ("; unknowns counted as failures, then left out" if excluded else ""), cols, rows,
                         limit=None, more="versions"))
        if excluded:
            flips = self.flips()
            if flips:
                out.append(line(Span("order flips between the policies: ", "warn"), "; ".join(
                    f"{f['b']} − {f['a']}: {f['difference_fail_points']:+.1f} counting unknowns as failures, "
                    f"{f['difference_exclude_points']:+.1f} leaving them out" for f in flips)))
            else:
                out.append(line("no pair's order flips between counting unknowns as failures and leaving them out"))
        style = {DIFFERENT: "bad", TOO_SMALL: "warn"}
        pairs = sorted(b.pairs, key=lambda p: (p.adjusted if math.isfinite(p.adjusted) else 2.0, p.a, p.b))
        out.append(Table(
            f"pairs, B − A in points, {_correction(b.correction)} across {len(b.pairs)} pairs",
            [Column("A"), Column("B", key=True), Column("B − A", "right"), Column(f"{level} interval", "right"),
             Column("test"), Column("p", "right"), Column("adjusted", "right"), Column("limit", "right"),
             Column("verdict")],
            [[p.a, p.b, f"{p.difference:+.1f}", _interval(p.low, p.high, sign=True), p.method, fmt_p(p.pvalue),
              fmt_p(p.adjusted), f"{p.detection_limit:.1f}" if math.isfinite(p.detection_limit) else "—",
              Span(p.verdict, style.get(p.verdict, "good"))] for p in pairs],
            limit=self.rows, more="pairs"))
        if b.separating and self.rows:
            out.append(Table("strata that separate the versions most (best − worst, points)",
                             [Column("stratum", key=True), Column("spread", "right"), Column("best"),
                              Column("worst")],
                             Rows(b.separating, lambda x: [x.stratum, f"{x.spread:.0f}",
                                                           f"{x.best} {x.best_rate:.0f}" + _more(x.ties[0]),
                                                           f"{x.worst} {x.worst_rate:.0f}" + _more(x.ties[1])]),
                             limit=self.rows, more="strata"))
        out += self._cost_blocks()
        if b.unsolved:
            shown = sorted(b.unsolved, key=natural_key)
            out.append(line(f"no version passed {len(shown)} of {b.strata} strata: " + ", ".join(shown[:12])
                            + (f" and {len(shown) - 12} more" if len(shown) > 12 else "")))
        else:
            out.append(line("every stratum was passed by at least one version"))
        if self.left_out:
            out.append(line(f"left out: {self.left_out} strata that not every chosen version ran"))
        if not self.costs_read:
            out.append(note(f"cost and latency not read: that scans all {self.runs:,} stored runs "
                            "(ask for them with --costs)"))
        elif costs:
            out.append(note("cost and latency: means over the runs that carry them (a version's runs without "
                            "them are not counted)"))
        out += [blank(), note(f"Conditional on: {self.conditional_on()}."),
                note(f"P(first): posterior probability that the version's mean pass rate over these strata is the "
                     f"highest, with {_p_first_model(b)}; the column sums to 1."),
                unknown_note(self.unknowns, self.unknown_policy)]
        return out


def _correction(name: str) -> str:
    from ..comparison import CORRECTIONS

    return CORRECTIONS[name]


def _p_first_model(board) -> str:
    """What P(first) rests on: the shrinkage model with τ, its prior and the draws (or the draws alone)."""
    if board.first is None:
        return f"{board.replicates} joint draws, ties split"
    return board.first.describe()


def _more(ties: int) -> str:
    return f" (and {ties - 1} more)" if ties > 1 else ""


def _letter(i: int) -> str:
    return chr(97 + i) if i < 26 else f"g{i + 1}"


def _interval(lo: float, hi: float, *, sign: bool = False) -> str:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "—"
    return fmt_interval(lo, hi, digits=1, signed=sign)


def _harness_name(harness) -> str | None:
    """The harness as a short name: the string, or the first string value of a dict
    (``{"agent": "ante", "version": "1"}`` is ``ante 1``)."""
    if isinstance(harness, str):
        return harness
    if isinstance(harness, dict):
        words = [str(v) for v in harness.values() if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
        return " ".join(words[:2]) or None
    return None


def _labels(infos) -> dict[str, str]:
    """A readable label per version: its identity label; where labels collide (one model under
    several harnesses: the agents of a leaderboard), the model with its harness, and where they
    still collide, a hash prefix.

    >>> from fluke.ledger import VersionInfo
    >>> from fluke.record import Identity
    >>> ids = [Identity(model="m", harness="ante"), Identity(model="m", harness="terminus"), Identity(model="n")]
    >>> sorted(_labels([VersionInfo(i.version, i.model_dump_json(), 1, 1, "") for i in ids]).values())
    ['m (ante)', 'm (terminus)', 'n']
    """
    raw = {i.version: i.label() for i in infos}
    harness = {i.version: _harness_name(i.value("harness")) for i in infos}
    seen: dict[str, int] = {}
    for lab in raw.values():
        seen[lab] = seen.get(lab, 0) + 1
    named = {v: (lab if seen[lab] == 1 or not harness[v] or harness[v] == lab else f"{lab} ({harness[v]})")
             for v, lab in raw.items()}
    again: dict[str, int] = {}
    for lab in named.values():
        again[lab] = again.get(lab, 0) + 1
    return {v: (lab if again[lab] == 1 else f"{lab} {v[:8]}") for v, lab in named.items()}


def leaderboard(ledger, versions: Sequence[str] | None = None, *, baseline: str | None = None,
                scenario: str | None = None, condition: str | None = None, correction: str = "holm",
                alpha: float = 0.05, power: float = 0.8, ceiling: float = 5.0, replicates: int = 2000,
                seed: int = 0, confidence_level: float = 0.95, costs: bool | None = None,
                rows: int = 10, unknown: str = "fail", rank: str = "pass", cost: Any = "usd") -> LeaderboardResult:
    """Every version (or those the ``versions`` selectors name) on the strata all of them ran.

    ``baseline`` (a selector naming one version) tests each version against it instead of every
    pair. ``correction`` is ``"holm"`` or ``"bh"``. Cost and latency are read by a scan of the stored
    runs (5–17 s over 1M runs on SQLite, 3.6 s of CPU over 100,000, against under a second for the
    rest): ``costs=None`` reads them when the chosen versions hold at most :data:`COST_SCAN_LIMIT`
    runs, ``True`` always, ``False`` never.
    ``unknown``: a run whose outcome is unknown is a failure (``"fail"``) or is left out (``"exclude"``).
    ``rank="cost"`` adds each version's cost per success (``cost`` chooses the spend's keys; every
    run of the version in the compared scenarios is streamed once) and the cost–quality frontier.
    """
    unknown = check_unknown(unknown, both=True)
    import numpy as np

    from ..comparison import CORRECTIONS, leaderboard_counts

    check_level(alpha, "alpha")
    check_level(power, "power")
    check_level(confidence_level, "confidence_level")
    if correction not in CORRECTIONS:
        raise UsageError(f"correction={correction!r} must be one of {', '.join(CORRECTIONS)}")
    if not ceiling > 0:
        raise UsageError(f"ceiling={ceiling!r} must be a positive number of points")
    if replicates < 100:
        raise UsageError(f"replicates={replicates} must be at least 100")
    infos = require_runs(ledger)
    if versions:
        chosen: list[str] = []
        for selector in versions:
            found = ledger.select_versions(selector)
            if not found:
                ledger.resolve_version(selector)  # raises, listing what the ledger holds
            chosen += [v for v in found if v not in chosen]
    else:
        chosen = [i.version for i in infos]
    base = None
    if baseline:
        base = ledger.resolve_version(baseline)
        if base not in chosen:
            chosen.append(base)
    if len(chosen) < 2:
        raise UsageError(f"a leaderboard needs at least two versions; {len(chosen)} selected")
    labels = _labels([i for i in ledger_versions(ledger) if i.version in chosen])
    cells: dict[tuple[str, str], dict[str, tuple[int, int, int]]] = {}
    for r in ledger.counts(version=chosen, scenario=scenario, condition=condition):
        cells.setdefault((r.scenario, r.condition), {})[r.version] = (r.passes, r.trials, r.unknowns)
    common = sorted((key for key, by in cells.items() if len(by) == len(chosen)),
                    key=lambda key: (natural_key(key[0]), key[1]))
    if not common:
        ran = {v: sum(1 for by in cells.values() if v in by) for v in chosen}
        each = ", ".join(f"{v[:12]}: {ran[v]}" for v in chosen[:8]) + (", …" if len(chosen) > 8 else "")
        raise UsageError(f"no scenario (with its condition) was run by all {len(chosen)} versions, so there is "
                         f"nothing to rank them on (scenario cells per version: {each}); choose versions that ran "
                         "the same scenarios with --version")
    # versions × strata × (passes, trials, unknowns): one array, the policy applied to it whole
    tally = np.array([[cells[key][v] for key in common] for v in chosen], dtype=np.int64)
    k = tally[:, :, 0]
    strata = [s if not c else f"{s} {c}" for s, c in common]

    def board_under(policy: str):
        n = check_unknown(policy).apply(tally[:, :, 1], k, tally[:, :, 2])[0]
        return leaderboard_counts(k, n, labels=[labels[v] for v in chosen], scenarios=[s for s, _ in common],
                                  strata=strata, baseline=None if base is None else labels[base],
                                  correction=correction, alpha=alpha, power=power, ceiling=ceiling,
                                  replicates=replicates, seed=seed, confidence_level=confidence_level)

    board = board_under(UnknownPolicy.FAIL if unknown == BOTH else unknown)
    excluded = board_under(UnknownPolicy.EXCLUDE) if unknown == BOTH else None
    spend: dict[str, dict[str, float]] = {}
    held = sum(i.runs for i in ledger_versions(ledger) if i.version in chosen)
    if costs is None:
        costs = held <= COST_SCAN_LIMIT
    if costs:
        for version, parts in ledger.spend(version=chosen).items():
            spend[labels[version]] = {key: total / count for key, (count, total) in parts.items() if count}
    if rank not in ("pass", "cost"):
        raise UsageError(f"rank={rank!r} must be 'pass' (by pass rate) or 'cost' (by cost per success)")
    per_success = None
    if rank == "cost":
        from ..decisions import cost_per_success
        from ._spend import read_spend

        compared = {s for s, _ in common}
        per_success = {}
        for v in chosen:
            a = read_spend(ledger, v, cost=cost, unknown=UnknownPolicy.FAIL if unknown == BOTH else unknown,
                           scenario=scenario, condition=condition)
            keep = np.array([s in compared for s in a.scenario], dtype=bool)
            per_success[labels[v]] = cost_per_success(a.spend[keep], a.passed[keep], a.scenario[keep].astype(str),
                                                      confidence_level=confidence_level)
    return LeaderboardResult(board, tuple((labels[v], v) for v in chosen), len(cells) - len(common), spend,
                             rows=rows, costs_read=bool(costs), runs=held,
                             unknowns=int(tally[:, :, 2].sum()), unknown_policy=unknown,
                             excluded=excluded, per_success=per_success, rank_by=rank)


__all__ = ["LeaderboardResult", "leaderboard"]
