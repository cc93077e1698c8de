"""What fluke found, gathered once for every outside format: graded runs, verdicts, versions, claims.

:func:`collect` gathers the first three from a ledger; :func:`claim_dicts` makes a result's
claims (a gate's, a pytest session's) safe for JUnit and MLflow.

Every string a finding carries has been through :func:`fluke.format.safe` (secrets redacted,
terminal controls made visible), so no export can leak what a run held or hand a consumer
markup it would act on. A graded run is labelled ``pass``, ``fail`` or ``unknown``; a verdict
``different``, ``no difference`` or ``inconclusive`` (fluke's *too small to tell*); a claim keeps
fluke's three statuses.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run, ToolCall
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "f.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=t > 0),
...                        events=[ToolCall(tool="refund", ok=True)]) for t in range(3)])
>>> found = collect(ledger, spec={"tools": ["refund"], "forbidden": ["refund"]})
>>> [r.label for r in found.runs], found.runs[0].checks
(['fail', 'fail', 'fail'], ('forbidden',))
>>> found.versions[0].passes, found.versions[0].runs
(2, 3)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping

from ..errors import InputError, UsageError
from ..policies import UnknownPolicy
from ..format import safe

#: fluke's comparison verdicts, in the words an outside consumer reads.
VERDICT_LABELS = {"different": "different", "no significant difference": "no difference",
                  "too small to tell": "inconclusive"}
#: Where a run was read from traces, its source position names the trace and its root span.
_TRACE_POSITION = re.compile(r"(?:^|, )trace ([0-9a-f]{32}) span ([0-9a-f]{16})$")
#: Characters XML 1.0 cannot carry and UTF-8 cannot encode, which :func:`safe` leaves.
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")


def clean(text: Any) -> str:
    """A string safe to hand to any consumer: redacted, controls shown as escapes, one line,
    and nothing an XML or JSON writer would refuse (a lone surrogate, U+FFFE, U+FFFF).

    >>> clean("key sk_live_4eC39HqLyjWDarjtT1zdp7dc \\x1b[2J\\nnext")
    'key [REDACTED:stripe-key] \\\\x1b[2J\\\\x0anext'
    """
    text = safe(str(text), newlines=False)
    if not text.isascii():
        text = _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


@dataclass(frozen=True)
class GradedRun:
    """One run's grade: its label, score (1 pass, 0 fail, None unknown), why, and its trace."""

    run_hash: str
    scenario: str
    trial: int
    version: str
    label: str
    score: float | None
    explanation: str
    checks: tuple[str, ...] = ()
    trace_id: str | None = None
    span_id: str | None = None
    graded: bool = True            # False: no spec graded it, the label is the outcome's alone


@dataclass(frozen=True)
class Verdict:
    """Version ``b`` against version ``a`` on pass rates, with its interval and detection limit."""

    a: str
    b: str
    a_label: str
    b_label: str
    label: str
    difference: float
    interval: tuple[float, float]
    limit: float
    pvalue: float
    explanation: str
    rests_on: str


@dataclass(frozen=True)
class ScenarioRate:
    scenario: str
    passes: int
    runs: int


@dataclass(frozen=True)
class VersionRate:
    """A version's pass rate with fluke's interval clustered by scenario (NaN bounds: too small to tell)."""

    version: str
    label: str
    identity: dict
    runs: int
    passes: int
    unknowns: int
    rate: float
    standard_error: float
    low: float
    high: float
    level: float
    clusters: int
    method: str
    scenarios: tuple[ScenarioRate, ...] = ()
    first_recorded: str | None = None
    samples: int = 0               # runs the rate is over (those of unknown outcome left out under exclude)

    @property
    def defined(self) -> bool:
        return all(math.isfinite(x) for x in (self.standard_error, self.low, self.high))


@dataclass(frozen=True)
class Findings:
    """Everything an export writes, already safe to print."""

    ledger: str
    runs: Iterable[GradedRun] = field(default_factory=list)   # an iterator when collected with stream=True
    verdicts: list[Verdict] = field(default_factory=list)
    versions: list[VersionRate] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)   # pairs with nothing to compare, and why
    spec: str | None = None           # the spec's digest, when runs were graded against one
    unknown: str = "fail"
    rests_on: str = ""


def trace_parent(source: Any) -> tuple[str, str] | None:
    """``(trace_id, span_id)`` of a run read from one trace (its root span), else None.

    >>> from fluke.record import Source
    >>> where = "trace " + "ab" * 16 + " span " + "cd" * 8
    >>> trace_parent(Source(adapter="otel-genai", position=where))[1]
    'cdcdcdcdcdcdcdcd'
    >>> trace_parent(Source(adapter="otel-genai", position="conversation c-1, " + where))[0]
    'abababababababababababababababab'
    >>> trace_parent(Source(adapter="otel-genai", position="conversation c-1")) is None
    True
    """
    position = getattr(source, "position", None)
    match = _TRACE_POSITION.search(position) if isinstance(position, str) else None
    return (match.group(1), match.group(2)) if match else None


def _graded(run: Any, grade: Mapping[str, Any] | None) -> GradedRun:
    parent = trace_parent(run.source)
    passed = run.outcome.passed
    if grade is None:
        label = "unknown" if passed is None else "pass" if passed else "fail"
        why = {"pass": "the outcome passed", "fail": "the outcome failed",
               "unknown": "the outcome is unknown"}[label] + "; no path spec graded it"
        checks: tuple[str, ...] = ()
    else:
        violations = grade.get("violations") or []
        checks = tuple(dict.fromkeys(clean(v["check"]) for v in violations))
        ok = grade.get("output_ok")
        if violations:
            label = "fail"
            head = "lucky: the outcome passed on a path that" if ok is True else \
                "the outcome failed and the path" if ok is False else "the outcome is unknown; the path"
            shown = "; ".join(clean(f"{v['check']} ({v['severity']}): {v['message']}") for v in violations[:6])
            more = f"; +{len(violations) - 6} more" if len(violations) > 6 else ""
            why = f"{head} broke {', '.join(checks)}: {shown}{more}"
        else:
            label = "unknown" if ok is None else "pass" if ok else "fail"
            why = {"pass": "the outcome passed on a clean path", "fail": "the outcome failed on a clean path",
                   "unknown": "the outcome is unknown; the path broke no check"}[label]
    return GradedRun(run.hash, clean(run.scenario), int(run.trial), run.version, label,
                     None if label == "unknown" else float(label == "pass"), why, checks,
                     *(parent or (None, None)), graded=grade is not None)


def _spec(ledger, spec) -> Any:
    """The spec to grade with: given (a path or mapping), else the one last stored in the ledger."""
    from ..grading import load_spec

    if spec is not None:
        return load_spec(spec)
    stored = ledger.documents("spec")
    return load_spec(stored[-1].body) if stored else None


#: Runs read, and their stored grades asked for, this many at a time (under every backend's
#: limit on query parameters).
CHUNK = 500


def graded_runs(ledger, *, spec=None, version: str | None = None,
                scenario: str | None = None) -> tuple[Iterator[GradedRun], Any]:
    """Every selected run's :class:`GradedRun`, as they stream (stored grades read back a chunk at a
    time, the rest graded now), and the spec."""
    loaded = _spec(ledger, spec)
    return _stream_grades(ledger, loaded, version, scenario), loaded


def _stream_grades(ledger, loaded, version: str | None, scenario: str | None) -> Iterator[GradedRun]:
    import itertools

    import orjson

    from ..analysis._select import select_versions
    from ..grading import grade_run

    runs = ledger.runs(version=select_versions(ledger, version), scenario=scenario)
    while chunk := list(itertools.islice(runs, CHUNK)):
        stored = ledger.grade_bodies(loaded.digest, [r.hash for r in chunk]) if loaded is not None else {}
        for run in chunk:
            body = stored.get(run.hash)
            grade = orjson.loads(body) if body is not None else (
                grade_run(run, loaded).to_dict() if loaded is not None else None)
            yield _graded(run, grade)


def verdicts(ledger, *, baseline: str | None = None, version: str | None = None, unknown: str = "fail",
             alpha: float = 0.05, power: float = 0.8, ceiling: float = 5.0,
             skipped: list[str] | None = None) -> list[Verdict]:
    """Each selected version against the baseline (default: the first recorded), on pass rates.

    A pair that cannot be compared (no scenario in common) is left out, and why is added to ``skipped``."""
    from ..analysis import compare, version_label
    from ..analysis._select import require_runs, select_versions

    infos = require_runs(ledger)
    base = ledger.resolve_version(baseline) if baseline else infos[0].version
    chosen = select_versions(ledger, version)
    out = []
    for info in infos:
        if info.version == base or (chosen is not None and info.version not in chosen):
            continue
        try:
            result = compare(ledger, base, info.version, unknown=unknown, alpha=alpha, power=power,
                             ceiling=ceiling, record=False)
        except (InputError, UsageError) as exc:   # nothing to compare (no shared scenario): said, not sunk
            if skipped is not None:
                skipped.append(clean(f"{version_label(ledger, info.version)} against "
                                     f"{version_label(ledger, base)}: {exc.message}"))
            continue
        r = result.pass_rates
        out.append(Verdict(base, info.version, clean(version_label(ledger, base)),
                           clean(version_label(ledger, info.version)), VERDICT_LABELS[r.verdict],
                           float(r.difference), (float(r.interval[0]), float(r.interval[1])),
                           float(r.detection_limit), float(r.pvalue), clean(r.summary()),
                           clean(result.conditional_on())))
    return out


def version_rates(ledger, *, version: str | None = None, unknown: UnknownPolicy | str = "fail",
                  level: float = 0.95) -> list[VersionRate]:
    """Each selected version's pass rate, its interval clustered by scenario, and per-scenario counts."""
    from ..analysis import interval
    from ..analysis._select import select_versions

    unknown = UnknownPolicy.of(unknown)
    result = interval(ledger, unit="scenario", version=version, confidence_level=level, unknown=unknown)
    infos = {v.version: v for v in ledger.versions()}
    cells: dict[str, dict[str, list[int]]] = {}
    for c in ledger.counts(version=select_versions(ledger, version)):
        tally = cells.setdefault(c.version, {}).setdefault(c.scenario, [0, 0])
        tally[0] += int(c.passes)
        tally[1] += unknown.apply(int(c.trials), int(c.passes), int(c.unknowns))[0]
    out = []
    for v in result.versions:
        ci = v.interval
        info = infos[v.version]
        scen = tuple(ScenarioRate(clean(s), p, n) for s, (p, n) in sorted(cells.get(v.version, {}).items()))
        passes = sum(s.passes for s in scen)
        nan = float("nan")
        out.append(VersionRate(
            v.version, clean(info.identity.label()),
            {k: clean(val) for k, val in info.identity.model_dump(exclude_none=True).items()
             if isinstance(val, (str, int, float))},
            v.runs, passes, v.unknowns, ci.statistic if ci else nan, ci.standard_error if ci else nan,
            ci.low if ci else nan, ci.high if ci else nan, level, ci.clusters if ci else 0,
            clean(ci.method) if ci else "none", scen, getattr(info, "first_recorded", None),
            int(ci.rows) if ci else 0))
    return out


def claim_dicts(claims: Iterable[Any]) -> list[dict]:
    """Claims (:class:`fluke.analysis.Claim` or their ``as_dict``) with every string made safe."""
    out = []
    for c in claims:
        body = c.as_dict() if hasattr(c, "as_dict") else dict(c)
        out.append({k: (clean(v) if isinstance(v, str) else [clean(x) for x in v] if isinstance(v, list) else v)
                    for k, v in body.items()})
    return out


def collect(ledger, *, spec=None, baseline: str | None = None, version: str | None = None,
            scenario: str | None = None, unknown: str = "fail", runs: bool = True,
            compare: bool = True, stream: bool = False) -> Findings:
    """Gather graded runs, verdicts (each selected version against ``baseline``) and version rates.

    With ``stream`` the graded runs are an iterator, read as the export writes them (read it
    once): memory does not grow with the runs. Otherwise they are a list."""
    unknown = UnknownPolicy.of(unknown)
    graded, loaded = graded_runs(ledger, spec=spec, version=version, scenario=scenario) if runs else ([], None)
    graded = graded if stream else list(graded)
    rates = version_rates(ledger, version=version, unknown=unknown)
    skipped: list[str] = []
    found = verdicts(ledger, baseline=baseline, version=version, unknown=unknown, skipped=skipped) if compare else []
    rests = (f"{sum(v.runs for v in rates)} runs of {len(rates)} versions in {clean(ledger.name)}; "
             f"the unit is the scenario; unknown outcomes: {unknown}"
             + ("" if not runs else f"; path spec {loaded.digest[:12]}" if loaded is not None else "; no path spec"))
    return Findings(clean(ledger.name), graded, found, rates, skipped,
                    loaded.digest if loaded is not None else None, unknown, rests)
