"""What the ledger holds: counts per version and scenario (``summary``) and the runs themselves (``runs``).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "sum.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=t > 0))
...                    for t in range(4)])
>>> result = summary(ledger)
>>> result.versions[0].passes, result.versions[0].trials
(3, 4)
>>> print(result.render())  # doctest: +ELLIPSIS
version ... (m): 1 scenario cells, 3 of 4 runs passed (75.0%)
...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import EmptyLedgerError
from ..format import fluke_command, fmt_share, natural_key
from ._document import Column, Span, Table, line, note
from ._result import Result
from ._unknowns import apply_to_counts, check_unknown, unknown_fields, unknown_note
from ._select import require_runs, select_versions, versions as ledger_versions


@dataclass(frozen=True)
class VersionCounts:
    """One version's cells: ``(scenario, condition, trials, passes, unknowns)`` each, the trials
    under the unknown-outcome policy (without the unknowns when they are left out)."""

    version: str
    label: str
    cells: tuple[tuple[str, str, int, int, int], ...]

    @property
    def unknowns(self) -> int:
        return sum(c[4] for c in self.cells)

    @property
    def trials(self) -> int:
        return sum(c[2] for c in self.cells)

    @property
    def passes(self) -> int:
        return sum(c[3] for c in self.cells)


@dataclass(frozen=True)
class SummaryResult(Result):
    """Runs and passes per version × scenario × condition, from the ledger's count table."""

    kind = "summary"
    versions: tuple[VersionCounts, ...]
    filters: dict
    unknown_policy: str = "fail"
    ledger: str | None = None  # its URL, so that the hint names it

    @property
    def unknowns(self) -> int:
        return sum(v.unknowns for v in self.versions)

    def payload(self) -> dict[str, Any]:
        return {"filters": self.filters, "rows": [
            {"version": v.version, "label": v.label, "scenario": s, "condition": c, "trials": n, "passes": k,
             "unknowns": u} for v in self.versions for s, c, n, k, u in v.cells],
            **unknown_fields(self.unknowns, self.unknown_policy)}

    def blocks(self) -> list:
        out: list = []
        if not self.versions:
            return [line("no runs match these filters; the ledger holds other runs (list them with: "
                         f"{fluke_command(self.ledger, 'summary')})")]
        for v in self.versions:
            out.append(line(f"version {v.version[:12]} ({v.label}): {len(v.cells)} scenario cells, "
                            f"{v.passes} of {v.trials} runs passed ({fmt_share(v.passes, v.trials).split(' ')[0]})",
                            style="bold"))
            rows = sorted(v.cells, key=lambda c: (c[3] / c[2] if c[2] else 1.0, natural_key(c[0]), c[1]))
            out.append(Table("", [Column("scenario", key=True), Column("condition"), Column("runs", "right"),
                                  Column("passed", "right")],
                             [[s, c or "—", str(n), fmt_share(k, n)] for s, c, n, k, _ in rows],
                             more="scenario cells"))
        out.append(note("rows ordered by pass share, lowest first"))
        out.append(unknown_note(self.unknowns, self.unknown_policy))
        return out


def summary(ledger, *, version: str | None = None, scenario: str | None = None,
            condition: str | None = None, unknown: str = "fail") -> SummaryResult:
    """Runs and passes per version and scenario (from counts kept at ingest: no run is read).

    ``unknown`` is the policy for runs whose outcome is unknown: ``"fail"`` counts them as
    trials that did not pass, ``"exclude"`` leaves them out of the trials.
    """
    unknown = check_unknown(unknown)
    chosen = select_versions(ledger, version)
    if chosen is None:
        require_runs(ledger)
    rows = ledger.counts(version=chosen, scenario=scenario, condition=condition)
    labels = {v.version: v.label() for v in ledger_versions(ledger)}
    by_version: dict[str, list] = {}
    for r in rows:
        trials, passes = apply_to_counts(r.trials, r.passes, r.unknowns, unknown)
        by_version.setdefault(r.version, []).append((r.scenario, r.condition, trials, passes, r.unknowns))
    order = [v.version for v in ledger_versions(ledger) if v.version in by_version]
    return SummaryResult(tuple(VersionCounts(v, labels.get(v, "?"), tuple(by_version[v])) for v in order),
                         {"version": version, "scenario": scenario, "condition": condition}, unknown,
                         getattr(ledger, "url", None))


@dataclass(frozen=True)
class RunsResult(Result):
    """A listing of stored runs (the whole run in JSON; a line per run in text).

    ``listed`` is set when only the first ``runs`` of ``listed`` were read (a text table).
    """

    kind = "runs"
    runs: tuple
    labels: dict
    total: int
    listed: int | None = None

    def payload(self) -> dict[str, Any]:
        return {"total": self.total, "runs": [{"hash": r.hash, "version": r.version, "run": r.model_dump(mode="json")}
                                           for r in self.runs]}

    def blocks(self) -> list:
        mark = {True: Span("yes", "good"), False: Span("no", "bad"), None: "—"}
        rows = [[r.hash[:12], f"{r.version[:8]} {self.labels.get(r.version, '')}", r.scenario, str(r.trial),
                 r.condition_key() or "—", mark[r.outcome.passed],
                 "—" if r.outcome.reward is None else f"{r.outcome.reward:g}", str(len(r.events))]
                for r in self.runs]
        cols = [Column("run"), Column("version"), Column("scenario", key=True), Column("trial", "right"),
                Column("condition"), Column("passed"), Column("reward", "right"), Column("events", "right")]
        if self.listed is not None:   # only the first rows were read (text output)
            shown = f"{self.listed} of {self.total}" if self.total > self.listed else f"{self.listed}"
            return [Table(f"{shown} runs", cols, rows, more="runs", total=self.listed)]
        shown = f"{len(self.runs)} of {self.total}" if self.total > len(self.runs) else f"{len(self.runs)}"
        return [Table(f"{shown} runs", cols, rows, more="runs")]


def list_runs(ledger, *, version: str | None = None, scenario: str | None = None, condition: str | None = None,
              since: str | None = None, until: str | None = None, limit: int | None = None,
              rows: int | None = None) -> RunsResult:
    """The stored runs matching the filters, in ingest order (at most ``limit``).

    ``rows`` reads only that many (for a text table that shows its first rows; ``total`` still
    counts every match), so listing a huge ledger reads a screenful. For the whole listing as
    JSON or JSON lines, streamed, see :func:`fluke.analysis.write_runs`.
    """
    chosen = select_versions(ledger, version)
    if chosen is None:
        require_runs(ledger)
    filters = dict(version=chosen, scenario=scenario, condition=condition, since=since, until=until)
    cut = rows is not None and (limit is None or rows < limit)
    runs = tuple(ledger.runs(limit=rows if cut else limit, **filters))
    if cut and len(runs) >= rows:
        total = ledger.count(**filters)
        listed = total if limit is None else min(total, limit)
        if listed > len(runs):
            labels = {v.version: v.label() for v in ledger_versions(ledger)}
            return RunsResult(runs, labels, total, listed=listed)
    total = ledger.count(**filters) if limit is not None and len(runs) >= limit else len(runs)
    if not runs and chosen is None and not any((scenario, condition, since, until)):
        raise EmptyLedgerError()
    labels = {v.version: v.label() for v in ledger_versions(ledger)}
    return RunsResult(runs, labels, total)


@dataclass(frozen=True)
class ExportReport(Result):
    """What ``export`` wrote: how many runs, and how many of them hold secret-shaped values."""

    kind = "export"
    path: str
    result: Any

    def payload(self) -> dict[str, Any]:
        return {"path": self.path, **self.result.to_dict()}

    def blocks(self) -> list:
        return [line(f"{self.path}: {self.result.describe()}")]


@dataclass(frozen=True)
class ExportWritten(Result):
    """What an export in another tool's format wrote: the format, where, how many bytes, and how
    many records of each kind (``--json`` prints this, so every export format has a JSON answer).

    >>> r = ExportWritten("junit", "gate.xml", 812, {"test cases": 3}, "wrote 3 test cases as JUnit XML")
    >>> r.to_dict()["records"], r.render().strip()
    ({'test cases': 3}, 'wrote 3 test cases as JUnit XML to gate.xml (812 bytes)')
    """

    kind = "export"
    format: str
    path: str | None
    bytes: int | None
    records: dict
    said: str
    notes: tuple[str, ...] = ()
    extra: dict | None = None

    def payload(self) -> dict[str, Any]:
        return {"format": self.format, "path": self.path, "bytes": self.bytes, "records": dict(self.records),
                "notes": list(self.notes), **(self.extra or {})}

    def text(self) -> str:
        """The one line a person reads (on standard error when the export itself went to standard output)."""
        where = f" to {self.path}" if self.path else ""
        size = f" ({self.bytes:,} bytes)" if self.bytes is not None else ""
        return f"{self.said}{where}{size}"

    def blocks(self) -> list:
        return [line(self.text()), *(line(n) for n in self.notes)]


def export(ledger, out: str = "-", *, redact: bool = False, scan: bool = True, version: str | None = None,
           scenario: str | None = None, condition: str | None = None, since: str | None = None,
           until: str | None = None) -> ExportReport:
    """Write runs as fluke JSONL to ``out`` (a path, or ``-`` for standard output).

    Lossless unless ``redact``: the file re-ingests to the same content hashes. The report says
    how many runs hold secret-shaped values; ``redact=True`` writes those redacted (and their
    hashes change). A file is written whole or not at all.
    """
    import sys
    from pathlib import Path

    from ..errors import UsageError
    from ..ledger import export_runs

    chosen = select_versions(ledger, version)
    if chosen is None:
        require_runs(ledger)
    filters = dict(version=chosen, scenario=scenario, condition=condition, since=since, until=until)
    if out == "-":
        result = export_runs(ledger, sys.stdout.buffer, redact=redact, scan=scan, **filters)
        return ExportReport("standard output", result)
    path = Path(out)
    if path.is_dir():
        raise UsageError(f"-o {out}: is a folder; name a file to write")
    if not path.parent.exists():
        raise UsageError(f"-o {out}: the folder {path.parent} does not exist (create it first)")
    part = path.with_name(path.name + ".part")
    try:
        with open(part, "wb") as stream:
            result = export_runs(ledger, stream, redact=redact, scan=scan, **filters)
        part.replace(path)
    finally:
        part.unlink(missing_ok=True)
    return ExportReport(str(path), result)
