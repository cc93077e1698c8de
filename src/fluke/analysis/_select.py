"""Picking what a question is about out of a ledger: versions, their labels, arms of a comparison.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "sel.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True))
...                    for t in range(4)])
>>> arm = select_arm(ledger, "model=m@0-1")
>>> arm.trials, len(arm.runs)
((0, 1), 2)
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ..errors import EmptyLedgerError, SelectorError, UsageError


#: The ledger holds no runs: every verb that reads runs answers this the same way.
EmptyLedger = EmptyLedgerError


def versions(ledger) -> list:
    """``ledger.versions()``, asked afresh: nothing is kept on the caller's ledger, so a version
    ingested since the last question is always seen (the query reads the small counts table)."""
    return ledger.versions()


def require_runs(ledger) -> list:
    """The versions of a ledger that has runs, or :class:`EmptyLedger`."""
    infos = versions(ledger)
    if not infos:
        raise EmptyLedger()
    return infos


def version_label(ledger, version: str) -> str:
    """``"<hash prefix> (<identity label>)"`` for a version hash."""
    for info in versions(ledger):
        if info.version == version:
            return f"{version[:12]} ({info.label()})"
    return version[:12]


def pick_version(ledger, selector: str | None) -> str:
    """The version a selector names, or the most recently recorded one when it is ``None``."""
    infos = require_runs(ledger)
    if selector:
        return ledger.resolve_version(selector)
    return infos[-1].version


def select_versions(ledger, selector: str | None) -> list[str] | None:
    """Every version hash a selector names (``None`` for no selector); raises when it names none."""
    if not selector:
        return None
    require_runs(ledger)
    found = ledger.select_versions(selector)
    if not found:
        ledger.resolve_version(selector)  # raises, listing what the ledger holds
    return found


def parse_trials(text: str, where: str) -> set[int]:
    """``"0-1,4"`` as ``{0, 1, 4}``.

    >>> sorted(parse_trials("0-2,5", "a@0-2,5"))
    [0, 1, 2, 5]
    """
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                out.update(range(lo, hi + 1))
            else:
                out.add(int(part))
        except ValueError:
            raise UsageError(f"{where}: cannot read trials {text!r}", argument="trials",
                             hint="write @0-1 or @0,2,4 after the selector") from None
    return out


#: What an arm keeps of one run (a :class:`fluke.analysis.RunFacts`), for the memory check.
FACT_BYTES = 400


@dataclasses.dataclass(frozen=True)
class Arm:
    """Runs picked out of the ledger by one selector (maybe several versions, maybe some trials).

    ``runs`` holds each run reduced as it streamed (:class:`fluke.analysis.RunFacts`: scenario,
    condition, trial, hash, version, outcome, the events a comparison reads), never whole runs;
    ``hard`` maps a failed run's hash to its first hard violation when a grading spec was given.
    An arm read from the ledger's counts (:func:`fluke.analysis._facts.counted_arm`) holds no runs:
    ``counted`` is its :class:`fluke.analysis._facts.CountedArm` and ``size`` how many runs it names.
    """

    selector: str
    versions: tuple[str, ...]
    labels: tuple[str, ...]
    trials: tuple[int, ...] | None
    runs: tuple[Any, ...]
    hard: dict[str, Any] | None = dataclasses.field(default=None, compare=False)
    counted: Any = dataclasses.field(default=None, compare=False)
    size: int | None = None

    def describe(self) -> dict[str, Any]:
        return {"selector": self.selector, "versions": list(self.versions), "labels": list(self.labels),
                "trials": None if self.trials is None else list(self.trials),
                "runs": len(self.runs) if self.size is None else self.size}

    def line(self) -> str:
        """``selector (hash label, ...; trials ...)`` for a report line."""
        trials = "" if self.trials is None else f" trials {','.join(map(str, self.trials))}"
        names = ", ".join(f"{v[:8]} {lab}" for v, lab in zip(self.versions, self.labels, strict=True))
        return f"{self.selector} ({names}{trials})"


def select_arm(ledger, text: str, *, scenario: str | None = None, condition: str | None = None,
               spec: Any = None) -> Arm:
    """The runs one arm selector names: ``selector[@trials]``, each reduced as it streams.

    With ``spec`` (a loaded grading spec) every failed run without ``died_at`` is graded as it
    streams and its first hard violation kept in ``Arm.hard``.
    """
    import hashlib

    import orjson

    from ._facts import reduce_body

    selector, _, trials_text = text.partition("@")
    require_runs(ledger)
    versions_ = ledger.select_versions(selector) if selector else [i.version for i in versions(ledger)]
    if not versions_:
        ledger.resolve_version(selector)  # raises, listing what the ledger holds
    trials = parse_trials(trials_text, text) if trials_text else None
    from ._budget import check_budget

    check_budget(ledger.count(version=versions_, scenario=scenario, condition=condition), f"the arm {text!r}",
                 FACT_BYTES, hint="narrow the arm to fewer versions, trials (@0-4) or scenarios (--scenario)")
    hard: dict[str, Any] | None = None if spec is None else {}
    runs = []
    for body, source in ledger.run_bodies(version=versions_, scenario=scenario, condition=condition):
        doc = orjson.loads(body)
        if trials is not None and doc.get("trial", 0) not in trials:
            continue
        outcome = doc.get("outcome") or {}
        if hard is not None and outcome.get("passed") is False and outcome.get("died_at") is None:
            from ..grading import first_hard_index, grade_run
            from ..record import Run

            if source is not None:
                doc["source"] = orjson.loads(source)
            run = Run.model_validate(doc)   # only a run the spec must place is built whole
            hard[hashlib.sha256(body.encode() if isinstance(body, str) else body).hexdigest()] = \
                first_hard_index(grade_run(run, spec))
        runs.append(reduce_body(body, doc, hard))
    if not runs:
        raise SelectorError(f"{text!r} names {len(versions_)} version(s) but no runs"
                            + (f" in scenario {scenario!r}" if scenario else "")
                            + (f" with trials {sorted(trials)}" if trials else ""))
    labels = {r.version: r.label for r in runs}
    return Arm(text, tuple(v for v in versions_ if v in labels), tuple(labels[v] for v in versions_ if v in labels),
               tuple(sorted(trials)) if trials is not None else None, tuple(runs), hard)


def disjoint(*arms: Arm) -> None:
    """Refuse arms that select the same runs (the same version and overlapping trials)."""
    for i, a in enumerate(arms):
        for b in arms[i + 1:]:
            shared = set(a.versions) & set(b.versions)
            if shared and (a.trials is None or b.trials is None or set(a.trials) & set(b.trials)):
                raise UsageError(f"{a.selector!r} and {b.selector!r} select the same runs (version "
                                 f"{min(shared)[:12]}); pick two different versions, or split one version's "
                                 "trials with @0-1 / @2-3")


def check_level(value: float, name: str = "level") -> float:
    """A probability strictly between 0 and 1 (a credible or confidence level, α, power).

    The one level check (:func:`fluke.inference.check_level`), naming the option as given.

    >>> check_level(0.9)
    0.9
    """
    from ..inference import check_level as check

    return check(value, name)


def sorted_cells(rows: Sequence, key=None) -> list:
    """Count rows in natural order of scenario, then condition."""
    from ..format import natural_key

    return sorted(rows, key=key or (lambda r: (natural_key(r.scenario), r.condition)))
