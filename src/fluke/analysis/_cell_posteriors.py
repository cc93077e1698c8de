"""The beliefs of one version per scenario cell: counts, prior, what was carried, and the posterior.

Shared by ``believe`` (which prints them) and ``predict`` (which records them).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "b.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True))
...                    for t in range(5)])
>>> b = beliefs(ledger)
>>> round(float(b.belief.mean[0]), 3), b.prior_text[0]
(0.857, 'uniform Beta(1, 1)')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import UsageError
from ..format import natural_key
from ._unknowns import apply_to_counts, check_unknown
from ._select import pick_version, version_label, versions


@dataclass
class Beliefs:
    """Everything ``believe`` and ``predict`` compute for one version: one posterior feeds every line."""

    version: str
    label: str
    cells: list[tuple[str, str]]          # (scenario, condition)
    k: np.ndarray
    n: np.ndarray
    found: Any = None                     # fluke.inference.Belief
    families: list[str | None] = field(default_factory=list)
    earlier: list[str] = field(default_factory=list)   # labels of the versions carried, oldest first
    delta: np.ndarray | None = None
    account: bool = False
    odds: float | None = None
    unknowns: np.ndarray | None = None     # per cell: runs whose outcome is unknown (in ``n`` under "fail")
    unknown_policy: str = "fail"

    @property
    def total_unknowns(self) -> int:
        return 0 if self.unknowns is None else int(self.unknowns.sum())

    @property
    def belief(self):
        """The posterior per scenario (a Beta, or a mixture where a change check ran)."""
        return self.found.posterior

    @property
    def prior_text(self) -> list[str]:
        """The prior actually used, per scenario (a scenario new in this version keeps the declared one)."""
        return list(self.found.prior_text)

    @property
    def carried(self) -> list[str]:
        """What was carried into each scenario, in words."""
        return list(self.found.carried_text)

    @property
    def origin(self) -> str | None:
        return self.earlier[0] if self.earlier else None

    @property
    def account_labels(self) -> list[str] | None:
        return [*self.earlier, self.label] if self.account else None

    def check(self):
        """(P(changed), surprise) of the latest batch per scenario, when a change check ran."""
        if self.odds is None or not self.earlier:
            return None
        return self.found.p_changed[-1], self.found.surprise[-1]

    def resets(self) -> np.ndarray:
        """Per scenario, how many carries the change check reset."""
        return self.found.resets().sum(axis=0)

    def since(self) -> list[str]:
        """Per scenario, the version its evidence most probably starts at."""
        labels = [*self.earlier, self.label]
        return [labels[int(i)] for i in self.found.since]


def cell_name(cell: tuple[str, str]) -> str:
    """``scenario [condition]`` (or the scenario alone).

    >>> cell_name(("refund/1", "name=ambiguous")), cell_name(("s", ""))
    ('refund/1 [name=ambiguous]', 's')
    """
    return f"{cell[0]} [{cell[1]}]" if cell[1] else cell[0]


def _tags(ledger, version: str) -> dict[str, list[str]]:
    import orjson

    tags: dict[str, set[str]] = {}
    for body, _ in ledger.run_bodies(version=version):   # two fields of each stored run, not the whole Run
        doc = orjson.loads(body)
        tags.setdefault(doc["scenario"], set()).update(doc.get("tags") or ())
    return {s: sorted(t) for s, t in tags.items()}


def _family_of(tags: list[str], prefix: str) -> str | None:
    chosen = [t for t in tags if t.startswith(prefix)]
    return chosen[0] if chosen else None


def beliefs(ledger, *, version: str | None = None, prior: str = "uniform", carry_from: str | None = None,
            delta: float = 0.5, touched: tuple[str, ...] = (), odds: float | None = None, family_prefix: str = "",
            want_tags: bool = False, account: bool = False, unknown: str = "fail") -> Beliefs:
    """One version's per-cell beliefs: its own runs, or evidence carried from earlier versions.

    ``carry_from`` carries one earlier version; ``account`` every version recorded before this one,
    oldest first. Each carry keeps ``delta`` of its evidence (1 inside the footprint's complement
    when ``touched`` names the tags a change touched); with ``odds`` each carry is checked for a
    change and the posterior mixes both branches. Only carried evidence is discounted: a scenario
    new in this version keeps the declared prior, and says so. A run whose outcome is unknown
    is a failed trial (``unknown="fail"``) or is left out (``"exclude"``), in every version.
    """
    from .. import inference as inf

    unknown = check_unknown(unknown)

    if carry_from is None and not account and (odds is not None or touched):
        raise UsageError("--odds/--touched: a change check or a footprint needs an earlier version "
                         "(add --carry-from VERSION, or --account to carry through every earlier version)")
    if carry_from is not None and account:
        raise UsageError("--carry-from/--account: choose one: one earlier version, or all of them")
    if not 0 <= delta <= 1:
        raise UsageError(f"discount={delta!r} must be between 0 and 1")
    version = pick_version(ledger, version)
    rows = sorted(ledger.counts(version=version), key=lambda r: (natural_key(r.scenario), r.condition))
    cells = [(r.scenario, r.condition) for r in rows]
    k = np.array([r.passes for r in rows], float)
    n = np.array([apply_to_counts(r.trials, r.passes, r.unknowns, unknown)[0] for r in rows], float)
    tags = _tags(ledger, version) if (want_tags or prior == "family" or touched) else {}
    families = [_family_of(tags.get(s, []), family_prefix) for s, _ in cells]
    prior_text = None
    if prior == "family":
        fam = inf.family_priors(k, n, families)
        base = fam.prior
        prior_text = [fam.describe(i) for i in range(len(cells))]
    else:
        try:
            base = inf.parse_prior(prior)
        except ValueError as exc:
            raise UsageError(f"--prior: {exc}") from None
    if account:
        infos = versions(ledger)
        chain = [i.version for i in infos[:[i.version for i in infos].index(version)]]
    elif carry_from is not None:
        old = ledger.resolve_version(carry_from)
        if old == version:
            raise UsageError("--carry-from names the same version as --version; carry from an earlier version")
        chain = [old]
    else:
        chain = []
    earlier = []
    for v in chain:
        counts = {(r.scenario, r.condition): r for r in ledger.counts(version=v)}
        earlier.append(inf.EarlierVersion(
            version_label(ledger, v), [counts[c].passes if c in counts else 0 for c in cells],
            [apply_to_counts(counts[c].trials, 0, counts[c].unknowns, unknown)[0] if c in counts else 0
             for c in cells], present=[c in counts for c in cells]))
    d = inf.footprint_discount([tags.get(s, []) for s, _ in cells], touched, inside=delta) if touched \
        else np.full(len(cells), float(delta))
    label = version_label(ledger, version)
    found = inf.belief_from_counts(k, n, prior=base, earlier=earlier, delta=d, odds=odds, label=label,
                                   prior_text=prior_text)
    return Beliefs(version, label, cells, k, n, found, families, [e.label for e in earlier],
                   d if earlier else None, account, odds, np.array([r.unknowns for r in rows]), unknown)
