"""``boundary``, ``plan --explore`` and ``incident``: the chart of a condition space, where the
next runs tell most about it, and what production found (the statistics are in :mod:`fluke.boundary`).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.simulate import planted_agent
>>> agent = planted_agent()
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "b.db"))
>>> _ = ledger.ingest(agent.suite(14, seed=3, skip=(("unique", "50"),)))
>>> result = boundary(ledger, space=agent.space, bar=0.8)
>>> result.chart.region_counts()["not run"], result.chart.run_points
(1, 23)
>>> print(result.render())  # doctest: +ELLIPSIS
space account desk: 24 points (case 4 levels, records 6 levels, ordered); 23 run (95.8%), 1 named but not run
regions: ... works, ... uncertain, ... fails, 1 named, not run (works: P(θ > 0.8) ≥ 0.9; ...
...
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..errors import UsageError
from ..format import fmt_interval, fmt_pct, fmt_prob, fmt_share_interval, natural_key, plural
from ._document import Column, Span, Table, blank, line, note
from ._result import Result
from ._select import pick_version, version_label
from ._unknowns import check_unknown, closing_notes

#: The kind of the ledger documents that hold incidents.
INCIDENT_KIND = "incident"
#: Which label the chart prints for each region (the four of the seed: tested works or fails, named not run,
#: never named, with 'uncertain' for a point tested but not yet decided).
REGION_WORDS = {"works": "works", "uncertain": "uncertain", "fails": "fails", "not run": "named, not run"}


def _space(space) -> Any:
    from ..boundary import Space, load_space

    if space is None:
        raise UsageError("give the condition space: --space SPACE.yaml (axes with their levels)")
    if isinstance(space, Space):
        return space
    if isinstance(space, Mapping):
        return Space.from_mapping(space)
    return load_space(space)


#: What the chart holds of one run of the charted version (its scenario, shared condition and label, its
#: tags and outcome: two small tuples), for the memory check; the other versions' runs are only counted.
BOUNDARY_BYTES = 240


def _facts(ledger, version: str):
    """The runs of ``version``, each reduced as it streams (:func:`fluke.analysis.reduce_body`)."""
    import orjson

    from ._facts import reduce_body

    for body, _ in ledger.run_bodies(version=version):
        yield reduce_body(body, orjson.loads(body))


def _rows(ledger, version: str, unknown: str):
    """``(scenario, condition, label)`` and ``(version, tags, passed)`` of a version's runs; unknowns counted.

    Refused before a run is read when holding them would pass the memory available
    (:func:`fluke.analysis.check_budget`, :data:`BOUNDARY_BYTES` a run)."""
    from ._budget import check_budget

    check_budget(ledger.count(version=[version]), "boundary", BOUNDARY_BYTES,
                 hint="chart fewer runs: record the condition space's runs under their own version (--version)")
    rows, kinds, unknowns = [], [], 0
    for run in _facts(ledger, version):
        passed = run.outcome.passed
        if passed is None:
            unknowns += 1
            if unknown == "exclude":
                continue
        label = run.outcome.label or {True: "complete", False: "fail", None: None}[passed]
        if passed is not None and label in ("complete", "should_ask") and not passed:
            label = "fail"
        rows.append((run.scenario, run.condition, label))
        kinds.append((version, run.tags, passed))
    return rows, kinds, unknowns


def _kind_rows(ledger, version: str, own: list):
    """``(version label, tags, passed)`` of every version's runs, in the order recorded (the trend per
    kind); the charted version's rows are ``own``, already read."""
    from ._select import require_runs

    for info in require_runs(ledger):
        label = f"{info.version[:12]} ({info.identity.label()})"
        if info.version == version:
            yield from ((label, tags, passed) for _, tags, passed in own)
        else:
            yield from ((label, run.tags, run.outcome.passed) for run in _facts(ledger, info.version))


def stored_incidents(ledger) -> list:
    """The incidents a ledger holds, oldest recorded first."""
    from ..boundary import Incident

    return [Incident.from_mapping(d.body, file=getattr(ledger, "name", None), record=f"incident {d.digest[:12]}")
            for d in ledger.documents(INCIDENT_KIND)]


def _space_line(space, chart) -> str:
    axes = ", ".join(f"{a.name} {len(a.levels)} levels" + (", ordered" if a.ordered else "") for a in space.axes)
    run = chart.run_points
    unrun = space.size - run
    return (f"space {space.name + ': ' if space.name else ''}{plural(space.size, 'point')} ({axes}); "
            f"{run} run ({fmt_pct(run / space.size, 1)}), {unrun} named but not run")


@dataclass(frozen=True)
class BoundaryResult(Result):
    """The chart of one version over a space: regions, colours, labels, splits, kinds, incidents."""

    kind = "boundary"
    chart: Any                        # fluke.boundary.Chart
    version: str
    label: str
    kinds: list = field(default_factory=list)       # fluke.boundary.KindRate
    kinds_warning: str | None = None
    incidents: Any = None             # fluke.boundary.Incidents, when the ledger holds some
    unknowns: int = 0
    unknown_policy: str = "fail"

    def _point_rows(self) -> list[dict[str, Any]]:
        out = []
        for p in self.chart.points:
            v = p.verdict
            out.append({"point": p.key, "condition": self.chart.space.condition(p.point), "region": v.region,
                        "colour": v.colour, "label": v.label, "runs": p.counts.runs, "scenarios": p.scenarios,
                        "completed": p.counts.completed, "asked": p.counts.asked, "failed": p.counts.failed,
                        "p_works": v.p_works, "p_fails": v.p_fails, "mean": v.mean, "lo": v.lo, "hi": v.hi})
        return out

    def payload(self) -> dict[str, Any]:
        c = self.chart
        inc = None
        if self.incidents is not None:
            on, n, lo, hi = self.incidents.coverage()
            inc = {"on_chart": on, "incidents": n, "lo": lo, "hi": hi,
                   "never_named": [m.incident.body() for m in self.incidents.matches if m.point is None]}
        return {
            "version": self.version, "label": self.label, "bar": c.bar, "floor": c.floor, "prob": c.prob,
            "space": {"name": c.space.name, "size": c.space.size,
                      "axes": [{"name": a.name, "levels": list(a.levels), "ordered": a.ordered} for a in c.space.axes]},
            "run_points": c.run_points, "regions": c.region_counts(), "points": self._point_rows(),
            "off_space_runs": c.off_space, "unnamed_levels": c.unnamed,
            "splits": [{"scenario": s.scenario, "axis": s.axis, "fails_on": list(s.fails_on),
                        "passes_on": list(s.passes_on), "text": s.text} for s in c.splits],
            "kinds": [{"version": k.version, "kind": k.kind, "passes": k.passes, "runs": k.runs, "lo": k.lo,
                       "hi": k.hi} for k in self.kinds],
            "kinds_warning": self.kinds_warning, "incidents": inc,
            "unknowns": self.unknowns, "unknown_policy": self.unknown_policy,
            "conditional_on": self.conditional_on(),
        }

    def blocks(self) -> list:
        c = self.chart
        counts = c.region_counts()
        out: list = [line(Span(_space_line(c.space, c), "bold"))]
        regions = ", ".join(f"{counts[r]} {REGION_WORDS[r]}" for r in ("works", "uncertain", "fails", "not run"))
        never = ""
        if self.incidents is not None:
            n_never = len(self.incidents.matches) - self.incidents.on_chart
            never = f", {plural(n_never, 'production incident')} at never-named conditions"
        out.append(line(f"regions: {regions}{never} (works: P(θ > {c.bar:g}) ≥ {c.prob:g}; fails: "
                        f"P(θ < {c.floor:g}) ≥ {c.prob:g})"))
        rows = []
        order = {"fails": 0, "uncertain": 1, "not run": 2, "works": 3}
        for p in sorted(c.points, key=lambda p: (order[p.verdict.region], natural_key(p.key))):
            v = p.verdict
            style = {"works": "good", "fails": "bad", "uncertain": "warn"}.get(v.region)
            behaviour = (f"{p.counts.completed} completed, {p.counts.asked} asked, {p.counts.failed} failed"
                         if p.counts.runs else "—")
            rows.append([p.key, Span(REGION_WORDS[v.region], style), v.colour or "—", v.label or "",
                         behaviour, fmt_prob(v.p_works) if p.counts.runs else "—",
                         fmt_interval(v.lo, v.hi) if p.counts.runs else "—"])
        out.append(Table("points (failing and undecided first)",
                         [Column("point", key=True), Column("region"), Column("colour"), Column("settle by"),
                          Column("behaviour"), Column(f"P(θ > {c.bar:g})", "right"), Column("90% CrI", "right")],
                         rows, more="points"))
        if c.off_space:
            levels = ", ".join(f"{k} ({v})" for k, v in sorted(c.unnamed.items()))
            out.append(line(Span("off the space: ", "warn"), f"{plural(c.off_space, 'run')} at conditions the "
                            f"space does not name: {levels}; add the level to an axis to chart them"))
        for s in c.splits:
            out.append(line(Span("split: ", "bold"), f"{s.scenario} {s.text}"))
        if self.kinds:
            out.append(Table("pass rate by case kind, each version in the order recorded",
                             [Column("version"), Column("kind", key=True), Column("passed", "right")],
                             [[k.version, k.kind, fmt_share_interval(k.passes, k.runs, k.lo, k.hi)]
                              for k in self.kinds], more="kinds"))
        if self.kinds_warning:
            out.append(line(Span("warning: ", "warn"), self.kinds_warning))
        if self.incidents is not None and self.incidents.matches:
            on, n, lo, hi = self.incidents.coverage()
            out.append(line(f"coverage of production: {fmt_share_interval(on, n, lo, hi)} of incidents on the "
                            f"chart (see fluke incident)"))
        return out + [blank()] + closing_notes(self.conditional_on(), self.unknowns, self.unknown_policy)

    def conditional_on(self) -> list[str]:
        return [f"version {self.label}", "each point's runs pooled over its scenarios, runs independent",
                "prior uniform Beta(1, 1) per point", "completing and asking (should_ask) both pass",
                "the 90% credible interval equal-tailed"]


def boundary(ledger, *, space, version: str | None = None, bar: float = 0.9, floor: float = 0.5,
             prob: float = 0.9, unknown: str = "fail") -> BoundaryResult:
    """The chart of ``version`` (default: the latest) over ``space`` (a Space, a mapping, or a YAML path)."""
    from ..boundary import chart, check_thresholds, kind_rates, match_incidents, mixed_warning

    check_thresholds(bar, floor, prob)
    unknown = str(check_unknown(unknown))
    sp = _space(space)
    v = pick_version(ledger, version)
    rows, kinds, unknowns = _rows(ledger, v, unknown)
    found = chart(sp, rows, bar=bar, floor=floor, prob=prob)
    rates = kind_rates(_kind_rows(ledger, v, kinds))
    incidents = stored_incidents(ledger)
    matched = match_incidents(sp, incidents) if incidents else None
    return BoundaryResult(found, v, version_label(ledger, v), rates if len({r.kind for r in rates}) > 1 or
                          any(r.kind != "unlabelled" for r in rates) else [], mixed_warning(rates), matched,
                          unknowns, unknown)


@dataclass(frozen=True)
class ExploreResult(Result):
    """``plan --explore``: the next runs per point, and what they are expected to buy."""

    kind = "explore"
    exploration: Any                  # fluke.boundary.Exploration
    chart: Any                        # fluke.boundary.Chart
    version: str
    label: str
    unknowns: int = 0
    unknown_policy: str = "fail"

    def payload(self) -> dict[str, Any]:
        e = self.exploration
        return {"version": self.version, "label": self.label, "budget": e.budget, "measure": e.measure,
                "gain": e.gain, "gain_even": e.gain_even, "bar": self.chart.bar, "floor": self.chart.floor,
                "prob": self.chart.prob,
                "points": [{"point": p.key, "region": p.verdict.region, "runs": p.counts.runs, "next_runs": r,
                            "entropy": h, "gain": g}
                           for p, r, h, g in zip(self.chart.points, e.runs, e.entropy, e.gains, strict=True)],
                "unknowns": self.unknowns, "unknown_policy": self.unknown_policy,
                "conditional_on": self.conditional_on()}

    def blocks(self) -> list:
        e = self.exploration
        chosen = [(p, r, g) for p, r, g in zip(self.chart.points, e.runs, e.gains, strict=True) if r]
        chosen.sort(key=lambda x: (-x[1], natural_key(x[0].key)))
        unrun = sum(1 for p, _, _ in chosen if not p.counts.runs)
        out: list = [line(Span("next runs: ", "bold"),
                          f"{e.budget} runs to chart the boundary: {len(chosen)} of {len(e.runs)} points get some "
                          f"({unrun} named but not run yet)")]
        out.append(Table("where the next runs go", [Column("point", key=True), Column("now"), Column("runs so far",
                         "right"), Column("next runs", "right"), Column("expected gain (bits)", "right")],
                         [[p.key, REGION_WORDS[p.verdict.region], str(p.counts.runs), str(r), f"{g:.3f}"]
                          for p, r, g in chosen], more="points"))
        ratio = f"{e.gain / e.gain_even:.2f}×" if e.gain_even > 0 else "—"
        out.append(line(f"expected information gain: {e.gain:.3f} bits with these runs; {e.gain_even:.3f} bits "
                        f"with the same runs spread evenly ({ratio})"))
        out.append(note(f"Measure: {e.measure}."))
        return out + [blank()] + closing_notes(self.conditional_on(), self.unknowns, self.unknown_policy)

    def conditional_on(self) -> list[str]:
        c = self.chart
        return [f"version {self.label}", f"the counts in the ledger now; regions at bar {c.bar:g}, floor {c.floor:g},"
                f" prob {c.prob:g}", "each point's runs pooled over its scenarios"]


def explore(ledger, *, space, budget: int, version: str | None = None, bar: float = 0.9, floor: float = 0.5,
            prob: float = 0.9, unknown: str = "fail") -> ExploreResult:
    """Where ``budget`` next runs most reduce uncertainty about the regions of ``space``'s points.

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> from fluke.simulate import planted_agent
    >>> agent = planted_agent()
    >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "e.db"))
    >>> _ = ledger.ingest(agent.suite(3, seed=1, skip=(("unique", "50"),)))
    >>> r = explore(ledger, space=agent.space, budget=12, bar=0.8)
    >>> sum(r.exploration.runs), r.exploration.runs[agent.space.points().index(("unique", "50"))] > 0
    (12, True)
    """
    from ..boundary import chart, check_thresholds
    from ..boundary import explore as plan_runs

    check_thresholds(bar, floor, prob)
    unknown = str(check_unknown(unknown))
    sp = _space(space)
    v = pick_version(ledger, version)
    rows, _, unknowns = _rows(ledger, v, unknown)
    found = chart(sp, rows, bar=bar, floor=floor, prob=prob)
    e = plan_runs([p.counts.passes for p in found.points], [p.counts.runs for p in found.points], budget=budget,
                  bar=bar, floor=floor, prob=prob)
    return ExploreResult(e, found, v, version_label(ledger, v), unknowns, unknown)


@dataclass(frozen=True)
class IncidentResult(Result):
    """``incident``: every incident on its point or never named, the coverage over time, suggestions."""

    kind = "incident"
    incidents: Any                    # fluke.boundary.Incidents
    recorded: int = 0
    regions: dict[str, str] = field(default_factory=dict)   # point key -> region, when a version was charted
    version_label: str | None = None

    def payload(self) -> dict[str, Any]:
        inc = self.incidents
        on, n, lo, hi = inc.coverage()
        return {"recorded": self.recorded, "on_chart": on, "incidents": n, "coverage": on / n if n else None,
                "lo": lo if n else None, "hi": hi if n else None, "level": inc.level,
                "matches": [{**m.incident.body(), "where": m.where, "region": self.regions.get(m.where),
                             "unnamed": [f"{a}={v}" for a, v in m.unnamed]} for m in inc.matches],
                "over_time": [{"period": p.period, "on_chart": p.on_chart, "incidents": p.incidents, "lo": p.lo,
                               "hi": p.hi} for p in inc.over_time()],
                "suggestions": inc.suggestions, "conditional_on": self.conditional_on()}

    def blocks(self) -> list:
        inc = self.incidents
        on, n, lo, hi = inc.coverage()
        out: list = []
        if self.recorded:
            out.append(line(f"recorded {plural(self.recorded, 'new incident')}"))
        if not n:
            out.append(line("no incidents recorded yet: add them with fluke incident add --at KEY=VALUE,... "
                            "--when YYYY-MM-DD, or --file incidents.jsonl"))
            return out
        out.append(line(Span("coverage of production: ", "bold"),
                        f"{fmt_share_interval(on, n, lo, hi)} of incidents happened at a point on the chart "
                        f"({inc.level:.0%} credible interval)"))
        out.append(Table("coverage over time (cumulative)",
                         [Column("up to", key=True), Column("on the chart", "right")],
                         [[p.period, fmt_share_interval(p.on_chart, p.incidents, p.lo, p.hi)] for p in inc.over_time()],
                         more="periods"))
        rows = [[m.incident.when[:10], m.incident.id or "—", ",".join(f"{k}={v}" for k, v in sorted(
                    m.incident.at.items())), m.where if m.point is None else
                 f"{m.where} ({REGION_WORDS.get(self.regions.get(m.where, ''), 'on the chart')})"]
                for m in sorted(inc.matches, key=lambda m: (m.point is not None, m.incident.when))]
        out.append(Table("incidents (never named first)", [Column("when"), Column("id"), Column("at", key=True),
                                                              Column("on the chart")], rows, more="incidents"))
        for what, count in inc.suggestions.items():
            out.append(line(Span("add: ", "warn"), f"{what} ({plural(count, 'incident')})"))
        return out + [blank()] + closing_notes(self.conditional_on())

    def conditional_on(self) -> list[str]:
        parts = ["incidents as recorded, each taken as one independent draw from production",
                 "coverage interval equal-tailed under the Jeffreys prior Beta(½, ½)",
                 "an incident is on the chart when every axis names its level and it has no other condition"]
        if self.version_label:
            parts.insert(0, f"regions of version {self.version_label}")
        return parts


def incident(ledger, *, space, add: Iterable = (), version: str | None = None, bar: float = 0.9,
             floor: float = 0.5, prob: float = 0.9, level: float = 0.95) -> IncidentResult:
    """Record ``add`` (incidents) in the ledger, then match every stored incident to ``space``.

    >>> import os, tempfile
    >>> from fluke.boundary import Incident
    >>> from fluke.ledger import open_ledger
    >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "i.db"))
    >>> space = {"axes": {"case": ["unique", "same_name"]}}
    >>> r = incident(ledger, space=space, add=[Incident({"case": "unique"}, "2026-11-02"),
    ...                                         Incident({"case": "locked"}, "2026-11-09")])
    >>> r.incidents.coverage()[:2], r.incidents.suggestions
    ((1, 2), {'level locked on axis case': 1})
    """
    from ..boundary import match_incidents
    from ._select import check_level

    check_level(level)
    sp = _space(space)
    added = list(add)
    before = {d.digest for d in ledger.documents(INCIDENT_KIND)}
    new = 0
    with ledger.atomic():
        for inc in added:
            new += ledger.put_document(INCIDENT_KIND, inc.body()) not in before
    matched = match_incidents(sp, stored_incidents(ledger), level=level)
    regions: dict[str, str] = {}
    label = None
    if version is not None or not ledger.empty():
        b = boundary(ledger, space=sp, version=version, bar=bar, floor=floor, prob=prob)
        regions = {p.key: p.verdict.region for p in b.chart.points}
        label = b.label
    return IncidentResult(matched, new, regions, label)
