"""The chart of a space: every point with its region, colour and label, the coverage, and the splits.

Runs come in as rows ``(scenario, condition, outcome)`` where ``outcome`` is ``"complete"``,
``"should_ask"``, ``"fail"``, ``"error"`` or None (unknown: counted as a failure unless the
caller left it out). A point is the space's; runs whose condition is off the space are counted
apart (with the levels the space never named), never dropped in silence.

A **split** is a scenario whose outcomes part by one axis: at one of its levels the scenario's
runs work, at another they fail (both at ``prob``), e.g. "fails on case=same_name, passes on
case=unique".

>>> from fluke.boundary import Space
>>> space = Space.from_mapping({"axes": {"case": ["unique", "same_name", "missing_id"]}})
>>> rows = ([("s1", {"case": "unique"}, "complete")] * 12 + [("s1", {"case": "same_name"}, "fail")] * 6
...         + [("s1", {"case": "two_accounts"}, "fail")])
>>> c = chart(space, rows, bar=0.8, floor=0.5, prob=0.9)
>>> [(p.key, p.verdict.region) for p in c.points]
[('case=unique', 'works'), ('case=same_name', 'fails'), ('case=missing_id', 'not run')]
>>> c.run_points, c.off_space, c.splits[0].text
(2, 1, 'fails on case=same_name, passes on case=unique')
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ._regions import PointCounts, PointVerdict, classify
from ._space import Point, Space

#: How a run's label counts: the behaviour it shows.
BEHAVIOUR = {"complete": "completed", "should_ask": "asked", "fail": "failed", "error": "failed", None: "failed"}


def counts_of(outcomes: Iterable[str | None]) -> PointCounts:
    """Behaviour counts of outcome labels (None, unknown, counts as failed).

    >>> counts_of(["complete", "should_ask", "error", None])
    PointCounts(completed=1, asked=1, failed=2)
    """
    tally = {"completed": 0, "asked": 0, "failed": 0}
    for o in outcomes:
        tally[BEHAVIOUR[o]] += 1
    return PointCounts(**tally)


@dataclass(frozen=True)
class ChartPoint:
    point: Point
    key: str
    counts: PointCounts
    verdict: PointVerdict
    scenarios: int


@dataclass(frozen=True)
class Split:
    """One scenario whose outcomes part by an axis."""

    scenario: str
    axis: str
    fails_on: tuple[str, ...]
    passes_on: tuple[str, ...]
    ordered: bool = False
    levels: tuple[str, ...] = ()        # the axis's levels, in order (to say "at records ≥ 20")

    @property
    def text(self) -> str:
        """The split in words; on an ordered axis whose passes all lie below its fails, as a threshold.

        >>> Split("s", "records", ("20", "50"), ("1", "5"), True, ("1", "5", "20", "50")).text
        'fails at records ≥ 20, passes at records ≤ 5'
        """
        if self.ordered and self.levels:
            at = {lv: i for i, lv in enumerate(self.levels)}
            if max(at[v] for v in self.passes_on) < min(at[v] for v in self.fails_on):
                return f"fails at {self.axis} ≥ {self.fails_on[0]}, passes at {self.axis} ≤ {self.passes_on[-1]}"
            if max(at[v] for v in self.fails_on) < min(at[v] for v in self.passes_on):
                return f"fails at {self.axis} ≤ {self.fails_on[-1]}, passes at {self.axis} ≥ {self.passes_on[0]}"
        fails = " or ".join(f"{self.axis}={v}" for v in self.fails_on)
        passes = " or ".join(f"{self.axis}={v}" for v in self.passes_on)
        return f"fails on {fails}, passes on {passes}"


@dataclass(frozen=True)
class Chart:
    space: Space
    points: list[ChartPoint]
    bar: float
    floor: float
    prob: float
    off_space: int = 0                                          # runs whose condition the space does not name
    unnamed: dict[str, int] = field(default_factory=dict)       # "axis=level" -> runs there
    splits: list[Split] = field(default_factory=list)

    @property
    def run_points(self) -> int:
        """Points with at least one run (the coverage's numerator)."""
        return sum(1 for p in self.points if p.counts.runs)

    def region_counts(self) -> dict[str, int]:
        out = {r: 0 for r in ("works", "uncertain", "fails", "not run")}
        for p in self.points:
            out[p.verdict.region] += 1
        return out

    def by_key(self) -> dict[str, ChartPoint]:
        return {p.key: p for p in self.points}


def _label_counts(rows: Iterable[tuple[str, Mapping[str, Any], str | None]], space: Space):
    per_point: dict[Point, list[str | None]] = defaultdict(list)
    per_scenario: dict[tuple[str, Point], list[str | None]] = defaultdict(list)
    scen_at: dict[Point, set[str]] = defaultdict(set)
    off = 0
    unnamed: dict[str, int] = defaultdict(int)
    for scenario, condition, outcome in rows:
        where = space.locate(condition)
        if where.point is None:
            off += 1
            for axis, level in where.unnamed:
                unnamed[f"{axis}={level}"] += 1
            for axis in where.missing:
                unnamed[f"{axis} not given"] += 1
            continue
        per_point[where.point].append(outcome)
        per_scenario[(scenario, where.point)].append(outcome)
        scen_at[where.point].add(scenario)
    return per_point, per_scenario, scen_at, off, dict(unnamed)


def splits_of(space: Space, per_scenario: Mapping[tuple[str, Point], list], *, bar: float, floor: float,
              prob: float) -> list[Split]:
    """Scenarios whose runs work at one level of an axis and fail at another (other axes pooled)."""
    out = []
    scenarios = sorted({s for s, _ in per_scenario})
    for i, axis in enumerate(space.axes):
        for s in scenarios:
            by_level: dict[str, PointCounts] = {}
            for (sc, point), labels in per_scenario.items():
                if sc == s:
                    by_level[point[i]] = by_level.get(point[i], PointCounts()) + counts_of(labels)
            regions = {lv: classify(c, bar=bar, floor=floor, prob=prob).region for lv, c in by_level.items()}
            fails = tuple(lv for lv in axis.levels if regions.get(lv) == "fails")
            passes = tuple(lv for lv in axis.levels if regions.get(lv) == "works")
            if fails and passes:
                out.append(Split(s, axis.name, fails, passes, axis.ordered, axis.levels))
    return out


def chart(space: Space, rows: Iterable[tuple[str, Mapping[str, Any], str | None]], *, bar: float, floor: float,
          prob: float) -> Chart:
    """Every point of ``space`` classified from the runs at it (see the module's docstring)."""
    per_point, per_scenario, scen_at, off, unnamed = _label_counts(rows, space)
    points = []
    for point in space.points():
        counts = counts_of(per_point.get(point, []))
        points.append(ChartPoint(point, space.key(point), counts,
                                 classify(counts, bar=bar, floor=floor, prob=prob), len(scen_at.get(point, ()))))
    return Chart(space, points, bar, floor, prob, off, unnamed,
                 splits_of(space, per_scenario, bar=bar, floor=floor, prob=prob))
