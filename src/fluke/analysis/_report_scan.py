"""The report's one pass over the runs: counts for the sections the verbs do not answer, a bounded
sample kept whole for the run explorer, and how far each stored spec's grades cover each version.

:func:`scan_runs` reads the selected runs' stored JSON once. Each run adds to a
:class:`RunTally` (runs, deaths per step, outcomes per condition, tags); only the runs the
explorer shows are kept whole (:class:`ExplorerPick`), so memory grows with the versions and
scenarios, not the runs. For each stored spec it is given, the pass counts how many of each
version's runs have a grade stored under it, so that the report uses a spec's grades only for
the versions they cover whole and says which versions are ungraded.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "s.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=t < 2))
...                    for t in range(5)])
>>> v = ledger.versions()[0].version
>>> scan = scan_runs(ledger, [v], max_runs=2)
>>> scan.tally.runs[v], [r.trial for r in explorer(ledger, scan, {v: "m"}).runs]
(5, [2, 3])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from ._report_tally import PICK_RULE, ExplorerPick, RunTally, quotas

#: What the scan keeps of a run it does not show (its counts).
TALLY_BYTES = 64


@dataclass
class Scan:
    """What one pass over the runs left: counts, the explorer's picks (``(version, (hash, body,
    source))``), and stored spec digest → version → runs with a grade stored under it."""

    tally: RunTally
    picked: list
    max_runs: int
    covered: dict[str, dict[str, int]] = field(default_factory=dict)


def _key(run_hash: str) -> int:
    """A run's first 64 bits: the key the ledger itself stores runs under (``runs.k``), held as one int."""
    return int(run_hash[:16], 16)


def _graded_keys(ledger, digest: str) -> set[int]:
    return {_key(h) for (h,) in ledger.stream("SELECT run_hash FROM grades WHERE spec_digest = ?", (digest,))}


def scan_runs(ledger, chosen: Sequence[str], *, digests: Sequence[str] = (), max_runs: int = 1000) -> Scan:
    """One pass over the runs of ``chosen`` (full hashes), each reduced as it streams
    (:func:`fluke.analysis.reduce_body`): see the module docstring."""
    from ._facts import reduce_body

    held = {v: 0 for v in chosen}
    for r in ledger.counts(version=list(chosen)):
        held[r.version] = held.get(r.version, 0) + r.trials
    tally, pick = RunTally(), ExplorerPick(quotas(held, max_runs))
    keys = {d: _graded_keys(ledger, d) for d in digests}
    covered: dict[str, dict[str, int]] = {d: {} for d in digests}
    for body, source in ledger.run_bodies(version=list(chosen)):
        facts = reduce_body(body, orjson.loads(body))
        tally.add_facts(facts)
        pick.offer(facts.version, facts.scenario, facts.condition_key(), facts.trial, facts.hash, facts.outcome.passed,
                   item=(facts.hash, body, source))
        if keys:
            k = _key(facts.hash)
            for digest, graded in keys.items():
                if k in graded:
                    covered[digest][facts.version] = covered[digest].get(facts.version, 0) + 1
    return Scan(tally, pick.picked(), max_runs, covered)


def stored_violations(ledger, digest: str) -> Callable[[Sequence[str]], dict[str, list]]:
    """The stored violations of some run hashes under ``digest`` (for the explorer's runs only)."""

    def read(hashes: Sequence[str]) -> dict[str, list]:
        from ..grading import RunGrade

        out: dict[str, list] = {}
        hashes = list(hashes)
        for start in range(0, len(hashes), 500):
            part = hashes[start:start + 500]
            rows = ledger.query(f"SELECT body FROM grades WHERE spec_digest = ? AND run_hash IN "
                                f"({', '.join('?' * len(part))})", (digest, *part))
            out.update(violations_of(RunGrade.from_dict(orjson.loads(b)) for (b,) in rows))
        return out

    return read


def violations_of(grades) -> dict[str, list[dict[str, Any]]]:
    """Run hash → violations (check, severity, index, message), for the explorer to mark."""
    out: dict[str, list[dict[str, Any]]] = {}
    for grade in grades:
        out.setdefault(grade.run_hash, []).extend(
            {"check": v.check, "severity": v.severity, "index": v.index, "message": v.message}
            for v in grade.violations)
    return out


def explorer(ledger, scan: Scan, labels: Mapping[str, str], *, spec: Any = None,
             violations: Callable[[Sequence[str]], dict[str, list]] | None = None):
    """The run explorer of the picked runs, marked with their violations: graded now against
    ``spec``, or read by ``violations`` (see :func:`stored_violations`), or none."""
    from ..ledger import row_run
    from ..report._model import Explorer
    from ._report_collect import explorer_run

    stored = violations([h for _, (h, _, _) in scan.picked]) if spec is None and violations is not None else {}
    shown = []
    for version, (_, body, source) in scan.picked:     # one run whole at a time, flattened as it is built
        run = row_run(body, source, ledger=ledger.name)
        if spec is not None:
            from ..grading import grade_run

            marks = violations_of([grade_run(run, spec)]).get(run.hash, ())
        else:
            marks = stored.get(run.hash, ())
        shown.append(explorer_run(run, marks, label=labels[version]))
    total = sum(scan.tally.runs.values())
    return Explorer(runs=shown,
                    total=total, rule="" if total <= scan.max_runs else PICK_RULE)
