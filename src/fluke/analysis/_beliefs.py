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
from ._select import pick_version, version_label, versions


@dataclass
class Beliefs:
    """Everything ``believe`` and ``predict`` compute for one version."""

    version: str
    label: str
    cells: list[tuple[str, str]]          # (scenario, condition)
    k: np.ndarray
    n: np.ndarray
    belief: Any = None                    # BetaPosterior, or BetaMixture with change detection
    state: Any = None                     # BetaPosterior carried forward (for certification)
    prior_text: list[str] = field(default_factory=list)
    families: list[str | None] = field(default_factory=list)
    carried: list[str] = field(default_factory=list)
    change: Any = None
    origin: str | None = None
    delta: np.ndarray | None = None
    account: Any = None                   # RunningAccount with account=True
    account_labels: list[str] | None = None

    def check(self):
        """(P(changed), surprise) of the latest batch per scenario, when a change check ran."""
        if self.change is not None:
            return self.change.p_changed, self.change.surprise
        if self.account is not None and self.account.odds is not None and len(self.account_labels) > 1:
            return self.account.p_changed[-1], self.account.surprise[-1]
        return None


def cell_name(cell: tuple[str, str]) -> str:
    """``scenario [condition]`` (or the scenario alone).

    >>> cell_name(("refund/1", "name=ambiguous")), cell_name(("s", ""))
    ('refund/1 [name=ambiguous]', 's')
    """
    return f"{cell[0]} [{cell[1]}]" if cell[1] else cell[0]


def _tags(ledger, version: str) -> dict[str, list[str]]:
    tags: dict[str, set[str]] = {}
    for run in ledger.runs(version=version):
        tags.setdefault(run.scenario, set()).update(run.tags)
    return {s: sorted(t) for s, t in tags.items()}


def _family_of(tags: list[str], prefix: str) -> str | None:
    chosen = [t for t in tags if t.startswith(prefix)]
    return chosen[0] if chosen else None


def beliefs(ledger, *, version: str | None = None, prior: str = "uniform", carry_from: str | None = None,
            delta: float = 0.5, touched: tuple[str, ...] = (), odds: float | None = None, family_prefix: str = "",
            want_tags: bool = False, account: bool = False) -> Beliefs:
    """One version's per-cell beliefs: its own runs, or evidence carried from earlier versions."""
    from .. import inference as inf

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
    n = np.array([r.trials for r in rows], float)
    tags = _tags(ledger, version) if (want_tags or prior == "family" or touched) else {}
    families = [_family_of(tags.get(s, []), family_prefix) for s, _ in cells]
    if prior == "family":
        fam = inf.family_priors(k, n, families)
        base = fam.prior
        prior_text = [fam.describe(i) for i in range(len(cells))]
    else:
        try:
            chosen = inf.parse_prior(prior)
        except ValueError as exc:
            raise UsageError(f"--prior: {exc}") from None
        base = inf.posterior(np.zeros(len(cells)), np.zeros(len(cells)), prior=chosen)
        prior_text = [chosen.describe()] * len(cells)
    out = Beliefs(version, version_label(ledger, version), cells, k, n, prior_text=prior_text, families=families,
                  carried=["nothing; this version's runs only."] * len(cells))
    if account:
        return _account(ledger, out, base, tags, delta=delta, touched=touched, odds=odds)
    if carry_from is None:
        out.belief = out.state = inf.posterior(k, n, prior=base)
        return out
    old = ledger.resolve_version(carry_from)
    if old == version:
        raise UsageError("--carry-from names the same version as --version; carry from an earlier version")
    old_counts = {(r.scenario, r.condition): r for r in ledger.counts(version=old)}
    ok = np.array([c in old_counts for c in cells])
    ko = np.array([old_counts[c].passes if c in old_counts else 0 for c in cells], float)
    no = np.array([old_counts[c].trials if c in old_counts else 0 for c in cells], float)
    d = inf.footprint_discount([tags.get(s, []) for s, _ in cells], touched, inside=delta) if touched \
        else np.full(len(cells), delta)
    carried = inf.discount(inf.posterior(ko, no, prior=base), d)
    out.origin, out.delta = version_label(ledger, old), d
    if odds is None:
        out.belief = out.state = inf.posterior(k, n, prior=carried)
        out.carried = [inf.carried_text(out.origin, float(d[i])) if ok[i] else out.carried[i]
                       for i in range(len(cells))]
        return out
    change = inf.detect_change(carried, k, n, odds=odds, reset=base)
    out.change, out.belief = change, change.mixture
    reset = change.p_changed >= 0.5
    out.state = inf.BetaPosterior(np.where(reset, change.changed.alpha, change.unchanged.alpha),
                                  np.where(reset, change.changed.beta, change.unchanged.beta), base.prior)
    out.carried = [inf.carried_text(out.origin, float(d[i]), p_changed=float(change.p_changed[i]), odds=odds,
                                    reset=bool(reset[i])) if ok[i] else out.carried[i]
                   for i in range(len(cells))]
    return out


def _account(ledger, out: Beliefs, base, tags, *, delta: float, touched, odds) -> Beliefs:
    """The running account through every version recorded up to this one, in recording order."""
    from .. import inference as inf

    infos = versions(ledger)
    upto = [i.version for i in infos].index(out.version) + 1
    chain = infos[:upto]
    index = {c: j for j, c in enumerate(out.cells)}
    k = np.zeros((len(chain), len(out.cells)))
    n = np.zeros_like(k)
    for t, info in enumerate(chain):
        for r in ledger.counts(version=info.version):
            j = index.get((r.scenario, r.condition))
            if j is not None:
                k[t, j], n[t, j] = r.passes, r.trials
    d = inf.footprint_discount([tags.get(s, []) for s, _ in out.cells], touched, inside=delta) if touched \
        else np.full(len(out.cells), delta)
    acc = inf.running_account(k, n, prior=base, delta=d, odds=odds, bar=None)
    labels = [version_label(ledger, i.version) for i in chain]
    out.belief = out.state = acc.final
    out.account, out.account_labels, out.delta = acc, labels, d
    out.origin = labels[0] if len(chain) > 1 else None
    check = f"; change check at prior odds {odds:g}:1 for unchanged" if odds is not None else ""
    for j in range(len(out.cells)):
        if len(chain) == 1:
            break
        resets = int(acc.reset[:, j].sum())
        since = labels[int(acc.since[-1, j])]
        out.carried[j] = (f"the running account through {len(chain)} versions ({labels[0]} to {labels[-1]}), "
                          f"each carried at δ = {float(d[j]):g}{check}; {resets} reset(s); evidence runs from "
                          f"version {since}.")
    return out
