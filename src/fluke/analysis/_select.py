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

from ..errors import EmptyLedgerError, InputError, SelectorError, UsageError


#: The ledger holds no runs: every verb that reads runs answers this the same way.
EmptyLedger = EmptyLedgerError


def versions(ledger) -> list:
    """``ledger.versions()`` asked once per ledger object (it aggregates the count table)."""
    cache = getattr(ledger, "_fluke_versions", None)
    if cache is None:
        cache = ledger.versions()
        try:
            ledger._fluke_versions = cache
        except AttributeError:  # pragma: no cover - a ledger with __slots__
            pass
    return cache


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
            return f"{version[:12]} ({info.identity.label()})"
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
            raise InputError(None, where, "trials", f"cannot read trials {text!r}",
                             hint="write @0-1 or @0,2,4 after the selector") from None
    return out


@dataclasses.dataclass(frozen=True)
class Arm:
    """Runs picked out of the ledger by one selector (maybe several versions, maybe some trials)."""

    selector: str
    versions: tuple[str, ...]
    labels: tuple[str, ...]
    trials: tuple[int, ...] | None
    runs: tuple[Any, ...]

    def describe(self) -> dict[str, Any]:
        return {"selector": self.selector, "versions": list(self.versions), "labels": list(self.labels),
                "trials": None if self.trials is None else list(self.trials), "runs": len(self.runs)}

    def line(self) -> str:
        """``selector (hash label, ...; trials ...)`` for a report line."""
        trials = "" if self.trials is None else f" trials {','.join(map(str, self.trials))}"
        names = ", ".join(f"{v[:8]} {lab}" for v, lab in zip(self.versions, self.labels))
        return f"{self.selector} ({names}{trials})"


def select_arm(ledger, text: str, *, scenario: str | None = None, condition: str | None = None) -> Arm:
    """The runs one arm selector names: ``selector[@trials]``."""
    selector, _, trials_text = text.partition("@")
    require_runs(ledger)
    versions_ = ledger.select_versions(selector) if selector else [i.version for i in versions(ledger)]
    if not versions_:
        ledger.resolve_version(selector)  # raises, listing what the ledger holds
    trials = parse_trials(trials_text, text) if trials_text else None
    runs = [r for r in ledger.runs(version=versions_, scenario=scenario, condition=condition)
            if trials is None or r.trial in trials]
    if not runs:
        raise SelectorError(f"{text!r} names {len(versions_)} version(s) but no runs"
                            + (f" in scenario {scenario!r}" if scenario else "")
                            + (f" with trials {sorted(trials)}" if trials else ""))
    labels = {r.version: r.identity.label() for r in runs}
    return Arm(text, tuple(v for v in versions_ if v in labels), tuple(labels[v] for v in versions_ if v in labels),
               tuple(sorted(trials)) if trials is not None else None, tuple(runs))


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
