"""Production incidents against the chart: each matched to a point, or marked never named.

An incident is something that went wrong in production, recorded with the conditions it
happened at (and when). Matched against a space, it lands on a point of the chart (tested,
or named but not run), or off it: a level an axis never declared, or a key no axis has. The
suite's **coverage of production** is the share of incidents that landed on the chart, with
an equal-tailed credible interval (Jeffreys Beta(½, ½) prior), cumulative period by period;
each never-named incident suggests the axis level (or the axis) to add.

>>> from fluke.boundary import Space
>>> space = Space.from_mapping({"axes": {"case": ["unique", "same_name"]}})
>>> found = match_incidents(space, [Incident({"case": "unique"}, "2026-10-03"),
...                                 Incident({"case": "two_accounts"}, "2026-11-20"),
...                                 Incident({"case": "unique", "locale": "fr"}, "2026-11-21")])
>>> [m.where for m in found.matches]
['case=unique', 'never named', 'never named']
>>> found.suggestions
{'a new axis locale (seen: locale=fr)': 1, 'level two_accounts on axis case': 1}
>>> [(p.period, p.on_chart, p.incidents) for p in found.over_time()]
[('2026-10', 1, 1), ('2026-11', 1, 3)]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..errors import InputError
from ._space import Space, level_text

#: The prior of the coverage's interval (stated beside it).
COVERAGE_PRIOR = (0.5, 0.5)


@dataclass(frozen=True)
class Incident:
    """One production incident: its conditions, when (ISO date or time), an id and a note."""

    at: dict[str, Any]
    when: str
    id: str = ""
    note: str = ""

    def body(self) -> dict[str, Any]:
        return {"at": {k: self.at[k] for k in sorted(self.at)}, "when": self.when, "id": self.id, "note": self.note}

    @classmethod
    def from_mapping(cls, data: Any, *, file: str | None = None, record: str | None = None) -> "Incident":
        """An incident from ``{"at": {...}, "when": "2026-11-02", "id": ..., "note": ...}``."""
        if not isinstance(data, Mapping):
            raise InputError(file, record, None, "an incident is a mapping with 'at' and 'when'")
        extra = set(data) - {"at", "when", "id", "note"}
        if extra:
            raise InputError(file, record, sorted(extra)[0], "unknown field (an incident has at, when, id, note)")
        at = data.get("at")
        if not isinstance(at, Mapping) or not at:
            raise InputError(file, record, "at", "give the conditions as a non-empty mapping, e.g. {case: same_name}")
        for k, v in at.items():
            if not isinstance(k, str) or isinstance(v, (Mapping, list)) or v is None:
                raise InputError(file, record, "at", f"condition {k!r} must map a name to a string or number")
        when = data.get("when")
        if hasattr(when, "isoformat"):
            when = when.isoformat()
        if not isinstance(when, str) or not _is_date(when):
            raise InputError(file, record, "when", "give the date as YYYY-MM-DD (an ISO date or date-time)")
        for name in ("id", "note"):
            if not isinstance(data.get(name, ""), str):
                raise InputError(file, record, name, "is a string")
        return cls(dict(at), when, data.get("id", ""), data.get("note", ""))


def _is_date(text: str) -> bool:
    from datetime import date

    try:
        date.fromisoformat(text[:10])
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Match:
    incident: Incident
    point: tuple[str, ...] | None
    where: str                           # the point's key, or 'never named'
    unnamed: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Period:
    """Coverage up to the end of one period (cumulative)."""

    period: str
    on_chart: int
    incidents: int
    lo: float
    hi: float


@dataclass(frozen=True)
class Incidents:
    space: Space
    matches: list[Match]
    level: float = 0.95
    suggestions: dict[str, int] = field(default_factory=dict)

    @property
    def on_chart(self) -> int:
        return sum(1 for m in self.matches if m.point is not None)

    def coverage(self) -> tuple[int, int, float, float]:
        """(on chart, incidents, interval low, interval high) over every incident."""
        lo, hi = coverage_interval(self.on_chart, len(self.matches), self.level)
        return self.on_chart, len(self.matches), lo, hi

    def over_time(self, *, period: str = "month") -> list[Period]:
        """Cumulative coverage at the end of each month (``period="month"``) or day (``"day"``)."""
        cut = 7 if period == "month" else 10
        out: list[Period] = []
        on = total = 0
        ordered = sorted(self.matches, key=lambda m: m.incident.when)
        for i, m in enumerate(ordered):
            total += 1
            on += m.point is not None
            this = m.incident.when[:cut]
            if i + 1 == len(ordered) or ordered[i + 1].incident.when[:cut] != this:
                lo, hi = coverage_interval(on, total, self.level)
                out.append(Period(this, on, total, lo, hi))
        return out


def coverage_interval(k: int, n: int, level: float) -> tuple[float, float]:
    """The equal-tailed credible interval of the coverage under the Jeffreys prior (None ends when n = 0).

    >>> [round(x, 3) for x in coverage_interval(8, 10, 0.95)]
    [0.497, 0.956]
    """
    if n == 0:
        return float("nan"), float("nan")
    from scipy import stats

    a, b = COVERAGE_PRIOR[0] + k, COVERAGE_PRIOR[1] + n - k
    tail = (1 - level) / 2
    return float(stats.beta.ppf(tail, a, b)), float(stats.beta.ppf(1 - tail, a, b))


def match_incidents(space: Space, incidents: Iterable[Incident], *, level: float = 0.95) -> Incidents:
    """Each incident on its point, or never named (with the level or axis it suggests)."""
    matches = []
    suggest: Counter = Counter()
    known = {a.name for a in space.axes}
    for inc in incidents:
        where = space.locate(inc.at, strict_keys=True)
        if where.point is not None:
            matches.append(Match(inc, where.point, space.key(where.point)))
            continue
        for axis, lv in where.unnamed:
            suggest[f"level {lv} on axis {axis}" if axis in known else f"a new axis {axis} (seen: {axis}={lv})"] += 1
        for axis in where.missing:
            suggest[f"{axis}: the incident does not say (record it)"] += 1
        matches.append(Match(inc, None, "never named", where.unnamed))
    return Incidents(space, matches, level, dict(sorted(suggest.items(), key=lambda kv: (-kv[1], kv[0]))))


def read_incidents(path: str) -> list[Incident]:
    """Incidents from a YAML list or JSON Lines file; a bad record names its file, record and field.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "inc.jsonl")
    >>> _ = open(p, "w").write('{"at": {"case": "same_name"}, "when": "2026-11-02", "id": "INC-1"}\\n')
    >>> read_incidents(p)[0].id
    'INC-1'
    """
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise InputError(path, None, None, f"cannot read the incidents ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(path, None, None, "is not UTF-8 text") from None
    if path.endswith(".jsonl"):
        import orjson

        out = []
        for i, raw in enumerate(text.splitlines(), 1):
            if not raw.strip():
                continue
            try:
                data = orjson.loads(raw)
            except orjson.JSONDecodeError:
                raise InputError(path, f"line {i}", None, "is not valid JSON") from None
            out.append(Incident.from_mapping(data, file=path, record=f"line {i}"))
        return out
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        raise InputError(path, None, None, "is not valid YAML or JSON") from None
    if isinstance(data, Mapping) and "incidents" in data:
        data = data["incidents"]
    if not isinstance(data, list):
        raise InputError(path, None, "incidents", "give a list of incidents (or a mapping with 'incidents')")
    return [Incident.from_mapping(d, file=path, record=f"incident {i}") for i, d in enumerate(data, 1)]


def point_text(at: Mapping[str, Any]) -> str:
    """An incident's conditions as a condition key.

    >>> point_text({"records": 5, "case": "unique"})
    'case=unique,records=5'
    """
    return ",".join(f"{k}={level_text(at[k])}" for k in sorted(at))
