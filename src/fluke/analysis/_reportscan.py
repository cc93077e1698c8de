"""The report's one pass over the runs: each run reduced as it streams, a bounded sample kept whole.

:func:`scan_runs` reads the selected runs' stored JSON once. Each run adds to a
:class:`fluke.report.RunTally` (runs, deaths per step, outcomes per condition, tags), is
reduced to a :class:`fluke.analysis.RunFacts` when two versions are compared (what
``fluke compare`` keeps of a run), and to a luck mark (scenario, output ok, path ok: what the
luck rate reads of a grade) when it is graded. Only the runs the explorer shows are kept whole
(:class:`fluke.report.ExplorerPick`), so memory grows with the reductions, not the runs.

Grades come from the spec given (each run graded as it streams) or from the ledger: the
grades stored under ``spec_digest`` (a prefix), else under the newest stored spec that grades
any selected run; each stored grade is reduced as it is read, and the explorer's runs fetch
their violations at the end.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "s.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=t < 2))
...                    for t in range(5)])
>>> v = ledger.versions()[0].version
>>> scan = scan_runs(ledger, [v], {v: "m"}, max_runs=2)
>>> scan.tally.runs[v], [r.trial for r in scan.explorer.runs], scan.explorer.total, scan.why[:23]
(5, [2, 3], 5, 'no grades stored in the')
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Sequence

import orjson

from ..format import fluke_command

#: What the scan keeps of a run it does not show (a reduction for a comparison; else its counts).
FACT_BYTES = 400
TALLY_BYTES = 64


class LuckMark:
    """What the luck rate reads of a grade: ``scenario``, ``output_ok``, ``path_ok`` (shared)."""

    __slots__ = ("scenario", "output_ok", "path_ok")

    def __init__(self, scenario: str, output_ok: bool | None, path_ok: bool) -> None:
        self.scenario, self.output_ok, self.path_ok = scenario, output_ok, path_ok


_MARKS: dict[tuple, LuckMark] = {}


def _mark(scenario: str, output_ok: bool | None, path_ok: bool) -> LuckMark:
    key = (scenario, output_ok, path_ok)
    mark = _MARKS.get(key)
    if mark is None:
        mark = _MARKS[key] = LuckMark(*key)
    return mark


@dataclass
class Scan:
    """What one pass over the runs left: counts, the explorer, the comparison's reductions (shared
    between runs alike, see :func:`_shared`; ``hard`` is the ``hard_index`` they go with), grades."""

    tally: Any
    explorer: Any
    facts: list = field(default_factory=list)
    luck: list | None = None
    hard: dict[str, int] | None = None
    used: str | None = None
    why: str = ""


def _key(run_hash: str) -> int:
    """A run's first 64 bits: the key the ledger itself stores runs under (``runs.k``), held as one int."""
    return int(run_hash[:16], 16)


def _stored(ledger, digest: str, chosen: Sequence[str]) -> dict[int, tuple] | None:
    """:func:`_key` of a run → (luck mark, first hard violation or None), shared between grades alike,
    of every grade stored under ``digest``; None when every grade names its version and none is of
    ``chosen`` (no pass over the runs needed)."""
    from ..grading import RunGrade, first_hard_index

    out, pairs, ours, unnamed, mine = {}, {}, set(chosen), False, False
    for run_hash, body in ledger.stream("SELECT run_hash, body FROM grades WHERE spec_digest = ?", (digest,)):
        grade = RunGrade.from_dict(orjson.loads(body))
        unnamed |= grade.version is None
        mine |= grade.version in ours
        pair = (_mark(grade.scenario, grade.output_ok, grade.path_ok), first_hard_index(grade))
        out[_key(run_hash)] = pairs.setdefault(pair, pair)
    return out if (mine or unnamed) else None


def _violations(ledger, digest: str, hashes: Sequence[str]) -> dict[str, list]:
    """The stored violations of ``hashes`` under ``digest`` (for the explorer's runs only)."""
    from ..report import violations_from
    from ..grading import RunGrade

    out: dict[str, list] = {}
    hashes = list(hashes)
    for start in range(0, len(hashes), 500):
        part = hashes[start:start + 500]
        rows = ledger.query(f"SELECT body FROM grades WHERE spec_digest = ? AND run_hash IN "
                            f"({', '.join('?' * len(part))})", (digest, *part))
        out.update(violations_from(RunGrade.from_dict(orjson.loads(b)) for (b,) in rows))
    return out


def _specs(ledger, spec_digest: str | None) -> list:
    from ..errors import SelectorError

    docs = ledger.documents("spec")
    if spec_digest is None:
        return list(reversed(docs))  # newest first
    found = [d for d in docs if d.digest.startswith(spec_digest)]
    if len(found) != 1:
        held = ", ".join(d.digest[:12] for d in docs) or "none"
        raise SelectorError(f"--spec-digest {spec_digest}: {'no' if not found else len(found)} stored specs "
                            f"match; the ledger holds {held}")
    return found


def scan_runs(ledger, chosen: Sequence[str], labels: dict[str, str], *, spec: Any = None,
              spec_digest: str | None = None, max_runs: int = 1000) -> Scan:
    """One pass over the runs of ``chosen`` (full hashes): see the module docstring. ``spec`` is
    a loaded grading spec (grade every run now), else stored grades are looked for."""
    if spec is not None:
        return _pass(ledger, chosen, labels, spec=spec, max_runs=max_runs)
    for doc in _specs(ledger, spec_digest):
        stored = _stored(ledger, doc.digest, chosen)
        if stored is None:
            continue
        scan = _pass(ledger, chosen, labels, stored=stored, digest=doc.digest, max_runs=max_runs)
        if scan.luck:
            return scan
    scan = _pass(ledger, chosen, labels, max_runs=max_runs)
    scan.why = (f"no grades stored for the selected runs under spec {spec_digest}" if spec_digest is not None
                else "no grades stored in the ledger (pass --spec SPEC, or grade the runs first with: "
                     f"{fluke_command(ledger, 'grade', '--spec', 'SPEC')})")
    return scan


def _pass(ledger, chosen: Sequence[str], labels: dict[str, str], *, spec: Any = None, stored: dict | None = None,
          digest: str | None = None, max_runs: int) -> Scan:
    from ..ledger import row_run
    from ..record import condition_key
    from ..report import PICK_RULE, Explorer, ExplorerPick, RunTally, explorer_run, quotas, violations_from
    from ._facts import identity_names, reduce_body

    held = {v: 0 for v in chosen}
    for r in ledger.counts(version=list(chosen)):
        held[r.version] = held.get(r.version, 0) + r.trials
    tally, pick = RunTally(), ExplorerPick(quotas(held, max_runs))
    compare = len(chosen) == 2
    luck: list = []
    facts: list = []
    same: dict[tuple, Any] = {}
    if spec is not None:
        from ..grading import first_hard_index, grade_run
    for body, source in ledger.run_bodies(version=list(chosen)):
        doc = orjson.loads(body)
        run_hash = hashlib.sha256(body.encode() if isinstance(body, str) else body).hexdigest()
        outcome = doc.get("outcome") or {}
        passed, died_at = outcome.get("passed"), outcome.get("died_at")
        scenario, trial = doc["scenario"], doc.get("trial", 0)
        if not compare:
            version = identity_names(doc.get("identity") or {})[0]
        cond = condition_key(doc.get("condition") or {})
        run, marks, mark, first = None, (), None, None
        if spec is not None:
            run = row_run(body, source, ledger=ledger.name)   # graded now: whole, then dropped unless shown
            grade = grade_run(run, spec)
            mark, first = _mark(grade.scenario, grade.output_ok, grade.path_ok), first_hard_index(grade)
            marks = violations_from([grade]).get(run_hash, ())
        elif stored is not None:
            mark, first = stored.get(_key(run_hash), (None, None))
        if mark is not None:
            luck.append(mark)
        first = first if passed is False and died_at is None else None
        if compare:
            facts.append(_shared(reduce_body(body, doc, {run_hash: first}), first, same))
            version = facts[-1].version
        tally.add(version, scenario, cond, passed=passed, label=outcome.get("label"), died_at=died_at,
                  events=len(doc.get("events") or ()), tags=doc.get("tags") or (),
                  conditioned=bool(doc.get("condition")))
        pick.offer(version, scenario, cond, trial, run_hash, passed, item=(run_hash, body, source, run, marks))
    picked = pick.picked()
    if stored is not None:
        found = _violations(ledger, digest, [item[0] for _, item in picked])
    shown = []
    for version, (run_hash, body, source, run, marks) in picked:
        if run is None:
            run = row_run(body, source, ledger=ledger.name)
        if stored is not None:
            marks = found.get(run_hash, ())
        shown.append(explorer_run(run, marks, label=labels[version]))
    total = sum(tally.runs.values())
    explorer = Explorer(runs=shown, total=total, rule="" if total <= max_runs else PICK_RULE)
    graded = spec is not None or stored is not None
    hard = {_hard_key(f): f for f in {key[-1] for key in same} if f is not None}
    return Scan(tally, explorer, facts, luck if graded else None, hard if graded else None, digest)


def _hard_key(first: int | None) -> str:
    return "" if first is None else f"hard violation at {first}"


def _shared(facts, first: int | None, same: dict[tuple, Any]):
    """One :class:`fluke.analysis.RunFacts` for every run the comparison cannot tell apart.

    :func:`fluke.comparison.compare_versions` reads of a run its version, scenario, condition,
    outcome, events and, for its first hard violation, ``hash`` as a key into ``hard_index``; it
    does not read the trial. Runs alike in all of that share one object whose ``hash`` names the
    violation's step (``Scan.hard`` maps it back), so a million runs are a million pointers to a
    few thousand objects, and the comparison gives the answer it gives on the runs themselves."""
    from ._facts import RunFacts

    key = (facts.version, facts.scenario, facts.condition_key(), id(facts.outcome), id(facts.events), first)
    found = same.get(key)
    if found is None:
        found = same[key] = RunFacts(facts.scenario, 0, _hard_key(first), facts.version, facts.label, facts.outcome,
                                     facts.events, facts.condition_key())
    return found
