"""What the report reads off the runs themselves: deaths by step of one version, the boundary
chart's outcome counts, the run explorer (each run flattened, redacted and cut), the families
the boards group by, and the page's frame (title, versions, the reasons a section is missing).

Every number an answer rests on comes from a verb (see :mod:`fluke.analysis._report`); this
module only counts and lays out what one pass over the runs (:func:`fluke.analysis.scan_runs`)
left in a :class:`RunTally`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from ..record import Run, ToolCall, UserMessage, redact
from ..report._model import (
    DeathArm,
    Boundary,
    BoundaryCell,
    Comparison,
    Explorer,
    ExplorerEvent,
    ExplorerRun,
    ExplorerViolation,
    ReportData,
    SuiteBoard,
    VersionRef,
)
from ._facts import reduce_run
from ._report_paired import paired_from
from ._report_tally import RunTally, death_step_of

#: Longest string kept per event field in the explorer; the rest is cut with a note.
MAX_TEXT = 4000

#: Why a section is empty, and the command that would fill it (see :func:`missing_reasons`).
MISSING = {
    "suite_questions": ("no suite questions were supplied to this report", "they print with", ("believe",)),
    "luck": ("no graded runs were supplied", "grade them with", ("grade", "--spec", "SPEC")),
    "contrasts": ("no factorial contrasts were supplied", "see", ("contrast", "--help")),
    "null_calibration": ("no null-calibration pairs were supplied", "see", ("calibrate", "--help")),
    "interventions": ("no interventions are stored for these versions", "see", ("intervene", "--help")),
    "calibration": ("no predictions were supplied", "record them before a batch with", ("predict",)),
    "decision": ("no loss table was supplied", "declare one (docs/decisions.md) and pass it with",
                 ("report", "--loss", "TABLE")),
}


def missing_reasons(ledger: Any) -> dict[str, str]:
    """The empty-section reasons, each hint naming ``ledger`` when a bare ``fluke`` would not open it.

    >>> missing_reasons("runs/x.db")["luck"]
    'no graded runs were supplied (grade them with: fluke --ledger runs/x.db grade --spec SPEC)'
    """
    from ..format import fluke_command

    return {key: f"{why} ({how}: {fluke_command(ledger, *words)})" for key, (why, how, words) in MISSING.items()}


def death_step(run: Run) -> int | None:
    """Where a failed run died: its recorded ``died_at``, else its last event; None unless it failed.

    >>> from fluke.record import Outcome
    >>> death_step(Run(scenario="s", events=[UserMessage(text="hi")] * 3, outcome=Outcome(passed=False)))
    2
    """
    return death_step_of(run.outcome.passed, run.outcome.died_at, len(run.events))


def deaths_from_counts(arms: Sequence[tuple[str, str, int, Mapping[int, int]]]) -> Comparison:
    """Deaths by step from counts: each arm ``(label, version, runs, {step: deaths})``, on one common axis.

    >>> c = deaths_from_counts([("v1", "a" * 64, 2, {1: 1}), ("v2", "b" * 64, 1, {})])
    >>> c.steps, [arm.deaths for arm in c.arms]
    ([0, 1], [[0, 1], [0, 0]])
    """
    width = max([max(d) for *_, d in arms if d] + [-1]) + 1
    out = [DeathArm(label=label, version=version, runs=runs, deaths=[int(d.get(s, 0)) for s in range(width)])
           for label, version, runs, d in arms]
    died = ("the harness's recorded failure step (died_at) where present, else the run's last event; "
            "passing runs are not deaths")
    return Comparison(arms=out, steps=list(range(width)),
                      conditional_on=f"{'; '.join(f'{a.label} ({a.version[:12]})' for a in out)}; a death is at {died}")


def deaths_by_step(arms: Sequence[tuple[str, str, Sequence[Run]]]) -> Comparison:
    """Deaths at each event index for each arm ``(label, version, runs)``, on one common step axis.

    >>> from fluke.record import Outcome
    >>> dead = Run(scenario="s", events=[UserMessage(text="a")] * 2, outcome=Outcome(passed=False))
    >>> ok = Run(scenario="s", outcome=Outcome(passed=True))
    >>> c = deaths_by_step([("v1", "a" * 64, [dead, ok]), ("v2", "b" * 64, [ok])])
    >>> c.steps, [arm.deaths for arm in c.arms]
    ([0, 1], [[0, 1], [0, 0]])
    """
    return deaths_from_counts([(label, version, len(runs), Counter(s for s in map(death_step, runs) if s is not None))
                               for label, version, runs in arms])


def _clip(text: str) -> str:
    text = redact(text)  # before cutting, so a cut cannot split a secret out of its pattern
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"… [{len(text) - MAX_TEXT} more characters not shown]"


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return orjson.dumps(redact(value), option=orjson.OPT_NON_STR_KEYS).decode()


def explorer_run(run: Run, violations: Iterable[Mapping[str, Any]] = (), *, label: str | None = None) -> ExplorerRun:
    """One run flattened for the explorer; every string redacted and cut to :data:`MAX_TEXT`.

    ``violations`` are mappings with ``check``, ``severity``, ``index`` and ``message``.

    >>> from fluke.record import Outcome
    >>> r = explorer_run(Run(scenario="s", events=[ToolCall(tool="t", args={"api_key": "k1"}, ok=True, result="x")],
    ...                      outcome=Outcome(passed=True)))
    >>> r.events[0].args
    '{"api_key":"[REDACTED]"}'
    """
    events = []
    for i, e in enumerate(run.events):
        if isinstance(e, ToolCall):
            actor = e.agent or ("user" if e.requestor == "user" else "")
            events.append(ExplorerEvent(index=i, kind="tool", actor=actor, tool=_clip(e.tool),
                                        args=_clip(_as_text(e.args)),
                                        ok=e.ok, result=_clip(_as_text(e.result)), error=_clip(e.error or "")))
        elif isinstance(e, UserMessage):
            events.append(ExplorerEvent(index=i, kind="user", text=_clip(e.text)))
        else:
            events.append(ExplorerEvent(index=i, kind="agent", actor=e.agent or "", text=_clip(e.text)))
    facts = reduce_run(run)
    o = facts.outcome
    marks = [ExplorerViolation(check=str(v["check"]), severity=str(v["severity"]), index=v.get("index"),
                               message=_clip(str(v.get("message", "")))) for v in violations]
    return ExplorerRun(hash=facts.hash, version=facts.version, label=label or facts.label,
                       scenario=facts.scenario, trial=facts.trial, condition=facts.condition_key(),
                       passed=o.passed, reward=o.reward, outcome=o.label,
                       died_at=o.died_at if o.died_at is not None else death_step_of(o.passed, None, len(facts.events)),
                       events=events, violations=marks)


def boundary_cells(runs: Iterable[Run]) -> list[BoundaryCell]:
    """Outcome counts per condition: complete → works, should_ask, fail → fails, error → errors.

    A run with no label counts by ``passed``; a run with neither is left out.
    """
    tally = RunTally()
    for run in runs:
        tally.add_facts(reduce_run(run), version="")
    return cells_from_outcomes(tally.outcomes.get("", {}))


def cells_from_outcomes(tally: Mapping[str, Counter]) -> list[BoundaryCell]:
    """Boundary cells from outcome counts per condition key (see :func:`boundary_cells`)."""
    return [BoundaryCell(condition=key, works=c["complete"], should_ask=c["should_ask"], fails=c["fail"],
                         errors=c["error"]) for key, c in sorted(tally.items())]


def safe_url(url: str | None) -> str | None:
    """A ledger URL without its password, fit to print.

    >>> safe_url("postgresql://fluke:s3cret@db:5432/runs"), safe_url("fluke.db")
    ('postgresql://fluke:***@db:5432/runs', 'fluke.db')
    """
    if url is None or "://" not in url:
        return url
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def frame(ledger: Any, chosen: Sequence[str], labels: Mapping[str, str], tally: RunTally, explorer: Explorer | None,
          boards: Sequence[SuiteBoard], *, title: str | None = None, family_prefix: str = "") -> ReportData:
    """The page before the verbs' sections: suite boards (``fluke believe``'s, given), the paired view
    of two boards, deaths by step of one version, the boundary chart and the explorer, from what the
    pass over the runs counted (``tally``); each section left out says why in ``missing``."""
    boards = [b.model_copy(update={"families": families_of(tally, b.version, family_prefix)}) for b in boards]
    missing = missing_reasons(ledger)
    comparison = None
    if len(chosen) == 1 and tally.runs.get(chosen[0]):
        v = chosen[0]
        comparison = deaths_from_counts([(labels[v], v, tally.runs.get(v, 0), tally.deaths.get(v, {}))])
        comparison = comparison.model_copy(update={
            "note": "One version selected: deaths by step only; name two versions with --version to compare them."})
    elif len(chosen) > 2:
        missing["comparison"] = (f"the comparison pairs two versions; this report has {len(chosen)}: see the "
                                 "leaderboard, or name two with --version")
    boundary = [Boundary(version=v, label=labels[v], cells=cells_from_outcomes(tally.outcomes.get(v, {})),
                         conditional_on=f"version {v[:12]} ({labels[v]}); each condition's runs as recorded")
                for v in chosen if v in tally.conditioned]
    if not boundary:
        missing["boundary"] = "the selected runs carry no conditions"
    paired = paired_from(boards[0], boards[1]) if len(chosen) == 2 and len(boards) == 2 else None
    if paired is None:
        missing["paired"] = ("one version selected: name two versions with --version for the paired view"
                             if len(chosen) < 2 else "the paired view pairs two versions; this report has "
                             f"{len(chosen)}: see the leaderboard")
    if len(chosen) < 3:
        missing["leaderboard"] = "fewer than three versions selected (two are compared and paired instead)"
    return ReportData(
        title=title or "fluke report: " + ", ".join(labels[v] for v in chosen),
        generated_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        ledger=safe_url(getattr(ledger, "url", None)),
        versions=[VersionRef(version=v, label=labels[v], runs=tally.runs.get(v, 0)) for v in chosen],
        paired=paired, suite_board=list(boards) or None, comparison=comparison, boundary=boundary or None,
        explorer=explorer if explorer is not None and explorer.total else None, missing=missing)


def families_of(tally: RunTally, version: str, prefix: str = "") -> dict[str, str]:
    """Scenario → family tag of the scenarios of ``version`` that declare one (see :meth:`RunTally.families`)."""
    return {s: f for s, f in tally.families(version, prefix).items() if f is not None}
