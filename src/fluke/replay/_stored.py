"""Interventions read back from the ledger: the stored arms paired again, the effect recomputed.

An intervened arm's identity names its origin (the origin runs' version and digest, the step,
the seed, the coupling and its baseline's seed), so the pair of arms, and the effect, can be
rebuilt from the runs alone — which is how the report shows an intervention beside the
observational comparison without running anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ._effect import ContinuationEffect, continuation_effect
from ._intervene import INTERVENTION
from ._interventions import Intervention

__all__ = ["StoredIntervention", "stored_interventions"]


@dataclass(frozen=True)
class StoredIntervention:
    """One stored intervention: what it did, where, the two arms' versions and the effect."""

    interventions: tuple[Intervention, ...]
    digest: str
    origin_version: str
    step: int
    coupling: str
    stale: bool
    baseline: str
    intervened: str
    baseline_passes: tuple[int, int]
    intervened_passes: tuple[int, int]
    effect: ContinuationEffect


def _origin(identity: Any) -> dict[str, Any] | None:
    harness = identity.harness
    if isinstance(harness, dict) and isinstance(harness.get("origin"), dict):
        origin = harness["origin"]
        return origin if origin.get("verb") == "intervene" else None
    return None


def stored_interventions(ledger: Any, versions: Sequence[str] | None = None) -> list[StoredIntervention]:
    """Every intervention stored in ``ledger`` (only those touching ``versions`` when given: an
    arm, or the origin runs' version, among them), each with its effect recomputed."""
    infos = [(i.version, _origin(i.identity)) for i in ledger.versions()]
    arms = {v: o for v, o in infos if o is not None}
    described = {d.body["digest"]: d.body["interventions"] for d in ledger.documents(INTERVENTION)}
    found = []
    for version, origin in arms.items():
        if origin["arm"] != "intervened":
            continue
        base = next((v for v, o in arms.items() if o["arm"] == "baseline" and o["runs"] == origin["runs"]
                     and o["step"] == origin["step"] and o["seed"] == origin["baseline_seed"]), None)
        if base is None:
            continue
        if versions is not None and not {version, base, origin["version"]} & set(versions):
            continue
        y = {}
        for arm in (base, version):
            y[arm] = {(r.condition.get("origin"), r.trial): int(r.outcome.passed)
                      for r in ledger.runs(version=arm) if r.outcome.passed is not None}
        coupled = origin["coupling"] == "coupled"
        if coupled:
            keys = sorted(set(y[base]) & set(y[version]))
            effect = continuation_effect([y[base][k] for k in keys], [y[version][k] for k in keys], coupled=True)
        else:
            effect = continuation_effect(list(y[base].values()), list(y[version].values()), coupled=False)
        changes = tuple(Intervention(**i) for i in described.get(origin["intervention"], ()))
        found.append(StoredIntervention(changes, origin["intervention"], origin["version"], origin["step"],
                                        origin["coupling"], bool(origin.get("stale")), base, version,
                                        (sum(y[base].values()), len(y[base])),
                                        (sum(y[version].values()), len(y[version])), effect))
    return sorted(found, key=lambda s: (s.origin_version, s.step, s.digest, s.coupling))
