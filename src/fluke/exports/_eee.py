"""Every Eval Ever (schema v0.2.1): one evaluation document per version, uncertainty filled from fluke.

A version's document holds its suite pass rate, with fluke's interval clustered by scenario
(``score_details.uncertainty``: the standard error, the interval and its level, the number of
runs), and one pass rate per scenario with the Beta(1, 1) posterior's equal-tailed interval.
An interval fluke cannot give (one scenario, no runs) is left out and ``details`` says so:
too small to tell, never a made-up width. ``evaluation_id`` is the schema's identity for
deduplication (``eval_name/model_id/retrieved_timestamp``); ``retrieved_timestamp`` is when the
version's last run was recorded, so exporting the same runs again gives the same identity.

The schema is vendored unchanged in ``schemas/`` with its source, commit and licence.

>>> eee_schema()["version"]
'0.2.1'
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import orjson

from ._findings import Findings, VersionRate, clean

EEE_SCHEMA_VERSION = "0.2.1"
_SCHEMA = Path(__file__).parent / "schemas" / f"every_eval_ever-{EEE_SCHEMA_VERSION}.schema.json"


def eee_schema() -> dict[str, Any]:
    """The vendored Every Eval Ever evaluation schema (JSON Schema draft-07)."""
    return orjson.loads(_SCHEMA.read_bytes())


def _fluke_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fluke")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "unknown"


def _epoch(text: str | None) -> str:
    from .._time import utc_time

    moment = utc_time(text) if text else None
    return "0" if moment is None else f"{moment.timestamp():.0f}"


def _strings(values: dict[str, Any]) -> dict[str, str]:
    """``additional_details`` and ``details`` hold strings only."""
    return {k: clean(v) for k, v in values.items() if v is not None}


def _uncertainty(se: float, low: float, high: float, level: float, n: int, method: str,
                 se_method: str) -> dict[str, Any]:
    out: dict[str, Any] = {"num_samples": int(n)}
    if math.isfinite(se):
        out["standard_error"] = {"value": float(se), "method": se_method}
    if math.isfinite(low) and math.isfinite(high):
        out["confidence_interval"] = {"lower": float(low), "upper": float(high), "confidence_level": float(level),
                                      "method": method}
    return out


def _metric(description: str) -> dict[str, Any]:
    return {"evaluation_description": description, "lower_is_better": False, "score_type": "continuous",
            "min_score": 0.0, "max_score": 1.0}


def _results(v: VersionRate, found: Findings, dataset: dict[str, Any]) -> list[dict[str, Any]]:
    import numpy as np

    from ..inference import posterior

    too_small = "" if v.defined else "; too small to tell: fluke gives no interval here (one scenario, or none)"
    suite = {
        "evaluation_name": "fluke pass rate (suite)",
        "source_data": dataset,
        "metric_config": _metric("Share of runs whose outcome passed, over every scenario of the suite"),
        "score_details": {
            "score": float(v.rate),
            "details": _strings({"passes": v.passes, "runs": v.samples, "scenarios": len(v.scenarios),
                                 "unknown_outcomes": f"{v.unknowns} ({found.unknown})",
                                 "sampling_unit": "scenario", "rests_on": found.rests_on + too_small}),
            "uncertainty": _uncertainty(v.standard_error, v.low, v.high, v.level, v.samples,
                                        f"fluke clustered interval by scenario ({v.method})",
                                        "cluster-robust, clustered by scenario")}}
    out = [suite] if math.isfinite(v.rate) else []   # no run with a known outcome: no score to give
    for s in v.scenarios:
        if s.runs == 0:
            continue
        belief = posterior([s.passes], [s.runs])
        low, high = (float(np.asarray(x).reshape(-1)[0]) for x in belief.interval(v.level))
        a, b = (float(np.asarray(x).reshape(-1)[0]) for x in (belief.alpha, belief.beta))
        sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
        out.append({
            "evaluation_name": f"fluke pass rate: {s.scenario}",
            "source_data": dataset,
            "metric_config": _metric(f"Share of runs of scenario {s.scenario} whose outcome passed"),
            "score_details": {
                "score": s.passes / s.runs,
                "details": _strings({"passes": s.passes, "runs": s.runs, "prior": "Beta(1, 1) (uniform)",
                                     "unknown_outcomes": found.unknown}),
                "uncertainty": _uncertainty(sd, low, high, v.level, s.runs,
                                            "Beta(1, 1) posterior, equal-tailed credible interval",
                                            "posterior standard deviation")}})
    return out


def eee_documents(found: Findings, *, organization: str = "unknown",
                  relationship: str = "other", recorded: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """One Every Eval Ever document per version of ``found``.

    ``recorded`` maps a version to when its last run was recorded (ISO time; the identity's
    timestamp), ``organization`` and ``relationship`` fill ``source_metadata``.
    """
    docs = []
    for v in found.versions:
        model_id = clean(v.identity.get("model") or v.identity.get("harness") or v.version[:12])
        stamp = _epoch((recorded or {}).get(v.version) or v.first_recorded)
        dataset = {"dataset_name": found.ledger, "source_type": "other",
                   "additional_details": _strings({"ledger": found.ledger, "spec": found.spec})}
        docs.append({
            "schema_version": EEE_SCHEMA_VERSION,
            "evaluation_id": f"fluke/{model_id}/{stamp}",
            "retrieved_timestamp": stamp,
            "source_metadata": {"source_name": f"fluke ledger {found.ledger}", "source_type": "evaluation_run",
                                "source_organization_name": clean(organization),
                                "evaluator_relationship": relationship,
                                "additional_details": _strings({"fluke_version_hash": v.version})},
            "model_info": {"name": v.label, "id": model_id,
                           "additional_details": _strings({"fluke_version_hash": v.version, **v.identity})},
            "eval_library": {"name": "fluke", "version": _fluke_version()},
            "evaluation_results": _results(v, found, dataset)})
    return docs


def last_recorded(ledger, versions: list[str]) -> dict[str, str]:
    """When each version's last run was recorded (the documents' ``retrieved_timestamp``)."""
    from .._time import utc_time

    out = {}
    for version in versions:
        times = ledger.recorded_times(version=version)
        if times:
            out[version] = max(times.values(), key=utc_time)
    return out


def write_eee(found: Findings, path: str | Path, *, ledger=None, **options: Any) -> int:
    """Write the documents as JSON Lines (one per version; one version: one JSON document); return how many."""
    from ._write import write_atomic

    if ledger is not None and "recorded" not in options:
        options["recorded"] = last_recorded(ledger, [v.version for v in found.versions])
    docs = eee_documents(found, **options)
    write_atomic(path, b"".join(orjson.dumps(d) + b"\n" for d in docs))
    return len(docs)
