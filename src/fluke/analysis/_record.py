"""Putting runs into the ledger: ``ingest`` (files a harness wrote) and ``run`` (a suite fluke runs).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "runs.jsonl")
>>> with open(path, "w") as f:
...     _ = f.write('{"format_version": 1, "scenario": "s", "identity": {"model": "m"}, '
...                 '"outcome": {"passed": true}}\\n')
>>> result = ingest(open_ledger(os.path.join(folder, "i.db")), [path])
>>> result.files[0]["added"], result.render().splitlines()[0].endswith("1 runs added, 0 already in the ledger")
(1, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..errors import InputError
from ..format import fmt_share
from ._document import Column, Span, Table, line, note
from ._result import Result


def parse_identity(pairs: Sequence[str]) -> dict[str, Any]:
    """``("model=gpt-4o", ...)`` as a dict, refusing fields an identity does not have.

    >>> parse_identity(("model=gpt-4o", "date=2024-06-01"))
    {'model': 'gpt-4o', 'date': '2024-06-01'}
    """
    from ..record import IDENTITY_FIELDS

    fields = IDENTITY_FIELDS + ("date",)
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key.strip() not in fields:
            raise InputError(None, None, "--identity", f"{pair!r} is not field=value with field one of "
                             + ", ".join(fields))
        out[key.strip()] = value.strip()
    return out


@dataclass(frozen=True)
class IngestReport(Result):
    """What each file added to the ledger."""

    kind = "ingest"
    ledger: str
    files: tuple[dict, ...]
    missing_model: bool

    def payload(self) -> dict[str, Any]:
        return {"ledger": self.ledger, "files": list(self.files)}

    def blocks(self) -> list:
        out = [line(f"{r['file']}: {r['added']} runs added, {r['skipped']} already in the ledger") for r in self.files]
        out += [line(Span("warning: ", "warn"), w) for r in self.files for w in r.get("warnings", ())]
        if self.missing_model:
            out.append(line(Span("note: ", "warn"), "some versions have no model in their identity; pass "
                            "--identity model=NAME when you ingest them"))
        return out


def ingest(ledger, files: Sequence[str], *, input_format: str | None = None, identity: dict | None = None,
           options: dict | None = None, progress: Callable[[str], Any] | None = None) -> IngestReport:
    """Read each file (format detected unless given) into the ledger, one transaction per file.

    ``options`` go to the reader (e.g. Inspect AI's ``score`` and ``pass_at``); a reader that takes
    no such option says so. ``progress(path)``, when given, returns a callback ``f(n)`` told how
    many runs are in so far.
    """
    from ..adapters import read_file

    supplied = dict(identity or {})
    rows = []
    for path in files:
        runs = read_file(path, format=input_format, identity=supplied, options=options or None, prepared=True)
        tick = progress(path) if progress is not None else None
        result = ledger.ingest(runs, progress=tick) if tick is not None else ledger.ingest(runs)
        row = {"file": path, "added": result.added, "skipped": result.skipped}
        warnings = list(getattr(result, "warnings", ()) or ())
        if warnings:
            row["warnings"] = warnings
        rows.append(row)
    missing = "model" not in supplied and any(v.identity.model is None for v in ledger.versions())
    from ..format import safe

    return IngestReport(safe(ledger.url), tuple(rows), missing)


def _cases(result: Any) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for r in result.results:
        row = rows.setdefault(r.run.scenario, {"scenario": r.run.scenario, "runs": 0, "passed": 0,
                                                "judged": 0, "errors": 0, "hard": 0, "resumed": 0})
        row["runs"] += 1
        passed = r.run.outcome.passed
        row["judged"] += passed is not None
        row["passed"] += passed is True
        row["errors"] += r.run.error is not None
        row["hard"] += r.hard
        row["resumed"] += r.resumed
    return list(rows.values())


@dataclass(frozen=True)
class SuiteRunResult(Result):
    """A suite run k times per case: per-case counts, the gate, the luck rate, where the runs went."""

    kind = "run"
    suite: str
    identity: dict
    ledger: str | None
    result: Any
    cases: tuple[dict, ...]
    gate: Any
    luck: Any

    @property
    def passed(self) -> bool:
        return bool(self.gate.passed)

    def payload(self) -> dict[str, Any]:
        r = self.result
        return {"suite": self.suite, "version": r.version, "identity": self.identity, "k": r.k,
                "spec_digest": r.spec_digest, "ledger": self.ledger, "added": r.added, "resumed": r.resumed,
                "cases": list(self.cases),
                "runs": [{"scenario": x.run.scenario, "trial": x.run.trial, "hash": x.run.hash,
                          "passed": x.run.outcome.passed, "error": x.run.error, "hard": x.hard, "resumed": x.resumed,
                          "violations": [{"check": v.check, "severity": v.severity, "index": v.index,
                                          "message": v.message} for v in x.violations]} for x in r.results],
                "gate": self.gate.to_dict(), "luck": self.luck.to_dict() if self.luck is not None else None}

    def blocks(self) -> list:
        r, luck = self.result, self.luck
        out: list = []
        if self.gate.passed:
            out.append(line(Span("gate passed", "good")))
        else:
            out.append(line(Span("gate FAILED", "bad"), f" ({len(self.gate.reasons)} reason(s)):"))
            out += [line(f"  - {reason}") for reason in self.gate.reasons[:20]]
        cols = [Column("scenario", key=True), Column("output passed", "right"), Column("raised", "right"),
                Column("hard", "right"), Column("resumed", "right")] + ([Column("luck rate", "right")] if luck else [])
        rows = []
        for c in sorted(self.cases, key=lambda c: (c["passed"] / c["judged"] if c["judged"] else 0, -c["hard"])):
            row = [c["scenario"], fmt_share(c["passed"], c["judged"]), str(c["errors"]), str(c["hard"]),
                   str(c["resumed"])]
            if luck:
                row.append(str(luck.cases[c["scenario"]]))
            rows.append(row)
        out.append(Table(f"{len(self.cases)} cases × k={r.k}", cols, rows, more="cases"))
        passed, judged = r.passes()
        out.append(line(f"output passed {fmt_share(passed, judged)} of runs with a verdict; {r.errors} raised "
                        "(recorded as hard violations)"))
        out.append(line("not recorded (--no-ledger)" if self.ledger is None else
                        f"ledger {self.ledger}: {r.added} added, {r.resumed} already there"))
        graded = f", graded by spec {r.spec_digest[:12]}" if r.spec_digest else ", not graded (no spec)"
        out.append(note(f"conditional on version {r.version[:12]}{graded}"))
        raised = [x.run for x in r.results if x.run.error is not None]
        out += [line(f"  raised: {run.scenario} trial {run.trial}: {run.error[:200]}") for run in raised[:10]]
        if len(raised) > 10:
            out.append(note(f"  … and {len(raised) - 10} more (see --json)"))
        if luck is not None:
            out.append(line(f"luck rate, pooled: {luck.pooled} ({luck.conditional_on})"))
        return out


def run_suite(ledger, suite_file: str, *, k: int | None = None, spec: str | None = None, seed: int | None = None,
              identity: dict | None = None, executor: str = "local", workers: int | None = None,
              progress: Callable | None = None) -> SuiteRunResult:
    """Run SUITE.py's agent k times on each case, grade, and record each run as it finishes."""
    from ..runner import evaluate, load_suite

    suite = load_suite(suite_file)
    ident = {**suite.identity, **(identity or {})}
    k = k if k is not None else (suite.k or 5)
    result = evaluate(suite.cases, suite.agent, k=k, spec=spec if spec is not None else suite.spec, ledger=ledger,
                      identity=ident, seed=seed if seed is not None else (suite.seed or 0), executor=executor,
                      workers=workers, progress=progress)
    luck = None
    if result.spec_digest is not None:
        from ..grading import luck_rate

        luck = luck_rate(result.grades())
    from ..format import safe

    return SuiteRunResult(suite_file, ident, None if ledger is None else safe(ledger.url), result,
                          tuple(_cases(result)), result.gate(), luck)
