"""What the report keeps of each run as the runs stream past: counts, and a bounded sample.

The report never holds every run. :class:`RunTally` keeps, per version, how many runs it saw,
where the failed ones died (a count per step), the outcome counts per condition (the boundary
chart) and the tags each scenario declares (the boards' families): memory in the number of
versions, scenarios and steps, not runs. :class:`ExplorerPick` keeps at most ``limit`` runs
for the run explorer (see :data:`PICK_RULE`).

>>> from fluke.record import Outcome, Run, UserMessage
>>> tally = RunTally()
>>> for t in range(3):
...     tally.add_run(Run(scenario="s", trial=t, events=[UserMessage(text="a")] * 2, outcome=Outcome(passed=t == 0)))
>>> v = next(iter(tally.runs)); tally.runs[v], dict(tally.deaths[v])
(3, {1: 2})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..format import natural_key

#: How the explorer picks its runs when the report holds more than it shows.
PICK_RULE = ("each version an equal share (a version with fewer runs leaves the rest to the others); within a "
             "version failed runs first, then runs with no recorded outcome, then passing runs, and one run of "
             "every scenario cell before any cell shows a second")


def death_step_of(passed: bool | None, died_at: int | None, events: int) -> int | None:
    """Where a failed run died for the deaths-by-step chart: ``died_at``, else its last event.

    >>> death_step_of(False, None, 3), death_step_of(False, 1, 3), death_step_of(True, None, 3)
    (2, 1, None)
    """
    if passed is not False:
        return None
    return died_at if died_at is not None else max(events - 1, 0)


class RunTally:
    """Per-version counts of the runs seen: runs, deaths per step, outcomes per condition, tags."""

    def __init__(self) -> None:
        self.runs: dict[str, int] = {}
        self.deaths: dict[str, Counter] = {}
        self.outcomes: dict[str, dict[str, Counter]] = {}
        self.conditioned: set[str] = set()
        self.tags: dict[str, dict[str, set[str]]] = {}

    def add(self, version: str, scenario: str, condition: str, *, passed: bool | None, label: str | None,
            died_at: int | None, events: int, tags: Sequence[str] = (), conditioned: bool = False) -> None:
        """Count one run: ``condition`` is its condition key, ``events`` how many events it has."""
        self.runs[version] = self.runs.get(version, 0) + 1
        step = death_step_of(passed, died_at, events)
        deaths = self.deaths.setdefault(version, Counter())
        if step is not None:
            deaths[step] += 1
        outcome = label or {True: "complete", False: "fail", None: None}[passed]
        if outcome is not None:
            self.outcomes.setdefault(version, {}).setdefault(condition, Counter())[outcome] += 1
        if conditioned:
            self.conditioned.add(version)
        known = self.tags.setdefault(version, {}).setdefault(scenario, set())
        if tags:
            known.update(tags)

    def add_facts(self, facts: Any, version: str | None = None) -> None:
        """Count one run reduced to :class:`fluke.analysis.RunFacts` (under ``version`` when given)."""
        o = facts.outcome
        self.add(facts.version if version is None else version, facts.scenario, facts.condition_key(),
                 passed=o.passed, label=o.label, died_at=o.died_at, events=len(facts.events), tags=facts.tags,
                 conditioned=bool(facts.condition))

    def add_run(self, run: Any) -> None:
        """Count a :class:`fluke.record.Run` (through :func:`fluke.analysis.reduce_run`)."""
        from ._facts import reduce_run

        self.add_facts(reduce_run(run))

    def families(self, version: str, prefix: str = "") -> dict[str, str | None]:
        """Scenario → its family tag in ``version``: the first of its tags (in sorted order) that
        starts with ``prefix``, None where it declares none (the rule of ``fluke believe --prior family``)."""
        out = {}
        for scenario, tags in self.tags.get(version, {}).items():
            chosen = sorted(t for t in tags if t.startswith(prefix))
            out[scenario] = chosen[0] if chosen else None
        return out


def quotas(counts: Mapping[str, int], limit: int) -> dict[str, int]:
    """Each version's share of ``limit`` runs: equal shares, a version's unused share spread over the rest.

    >>> quotas({"a": 10, "b": 500, "c": 500}, 100)
    {'a': 10, 'b': 45, 'c': 45}
    """
    left, out = limit, {v: 0 for v in counts}
    open_ = [v for v in counts if counts[v] > 0]
    while left > 0 and open_:
        share, extra = divmod(left, len(open_))
        for i, v in enumerate(open_):
            give = min(share + (i < extra), counts[v] - out[v])
            out[v] += give
            left -= give
        open_ = [v for v in open_ if out[v] < counts[v]]
        if share == 0 and extra == 0:
            break
    return out


class ExplorerPick:
    """At most ``quota[version]`` runs per version, the smallest by :data:`PICK_RULE`, as they stream.

    :meth:`offer` returns whether the run is (for now) kept; the caller attaches what it needs
    later (the run itself) with the ``item`` it passes. Memory: the kept items, twice over at most.

    >>> pick = ExplorerPick({"v": 2})
    >>> [pick.offer("v", s, "", t, h, passed, item=h) for s, t, h, passed in
    ...  [("a", 0, "h1", True), ("a", 1, "h2", False), ("b", 0, "h3", True), ("a", 2, "h4", False)]]
    [True, True, True, True]
    >>> [item for _, item in pick.picked()]
    ['h2', 'h4']
    """

    def __init__(self, quota: Mapping[str, int]) -> None:
        self.quota = dict(quota)
        self.kept: dict[str, list] = {v: [] for v in quota}
        self.edge: dict[str, tuple | None] = {v: None for v in quota}
        self.seen: Counter = Counter()
        self._keys: dict[str, tuple] = {}

    def _natural(self, text: str) -> tuple:
        key = self._keys.get(text)
        if key is None:
            key = self._keys[text] = natural_key(text)
        return key

    def offer(self, version: str, scenario: str, condition: str, trial: int, run_hash: str, passed: bool | None,
              *, item: Any) -> bool:
        quota = self.quota.get(version, 0)
        if quota <= 0:
            return False
        rank = 0 if passed is False else (1 if passed is None else 2)
        cell = (version, scenario, condition, rank)
        nth = self.seen[cell]
        self.seen[cell] = nth + 1
        key = (rank, nth, self._natural(scenario), self._natural(condition), trial, run_hash)
        edge = self.edge[version]
        if edge is not None and key >= edge:
            return False
        kept = self.kept[version]
        kept.append((key, item))
        if len(kept) >= 2 * quota:
            self._trim(version)
        return True

    def _trim(self, version: str) -> None:
        kept = self.kept[version]
        kept.sort(key=lambda kv: kv[0])
        del kept[self.quota[version]:]
        self.edge[version] = kept[-1][0] if len(kept) == self.quota[version] else None

    def picked(self) -> list[tuple[str, Any]]:
        """``(version, item)`` of every kept run, in the explorer's order: version (as given), then
        scenario (natural order), trial and hash."""
        out = []
        for version in self.kept:
            self._trim(version)
            ordered = sorted(self.kept[version], key=lambda kv: (kv[0][2], kv[0][4], kv[0][5]))
            out.extend((version, item) for _, item in ordered)
        return out
