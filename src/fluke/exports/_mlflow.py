"""MLflow (the optional ``mlflow`` extra): a fluke result's claims as feedback on an MLflow run.

MLflow keeps assessments on traces, so the claims go on one trace (``fluke claims``) made
inside the run: one ``mlflow.log_feedback`` per claim, named by its check, its value fluke's
status (``holds``, ``fails``, ``too small to tell``), its rationale the claim with every reason
and what it rests on, and its source an ``AssessmentSource`` of type ``CODE`` (``fluke``).
The run also gets a ``fluke.status`` tag and one ``fluke.holds.<check>`` metric per claim
(1 holds, 0 does not), which MLflow's run views can sort by.

mlflow is imported only here; without it the error says how to install it.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..errors import UsageError
from ._findings import claim_dicts, clean


def _mlflow():
    try:
        import mlflow
        from mlflow.entities import AssessmentSource, AssessmentSourceType
    except ImportError:
        raise UsageError("logging to MLflow needs mlflow: pip install 'fluke[mlflow]'") from None
    return mlflow, AssessmentSource, AssessmentSourceType


def _metric_name(check: str) -> str:
    return "fluke.holds." + "".join(c if c.isalnum() or c in "_-." else "_" for c in check)


def log_to_mlflow(claims: Iterable[Any], *, tracking_uri: str | None = None, experiment: str = "fluke",
                  run_id: str | None = None, run_name: str = "fluke claims", title: str = "fluke claims",
                  status: str | None = None) -> dict[str, Any]:
    """Log claims as feedback on an MLflow run (``run_id``, or a new run in ``experiment``).

    Returns ``{"run_id", "trace_id", "assessments"}``. Every string is redacted and made
    inert before MLflow sees it.
    """
    mlflow, AssessmentSource, AssessmentSourceType = _mlflow()
    safe = claim_dicts(claims)
    before = mlflow.get_tracking_uri() if tracking_uri else None
    if tracking_uri:
        mlflow.set_tracking_uri(tracking_uri)
    try:
        return _log(mlflow, AssessmentSource(source_type=AssessmentSourceType.CODE, source_id="fluke"), safe,
                    experiment=experiment, run_id=run_id, run_name=run_name, title=title, status=status)
    finally:
        if before is not None:
            mlflow.set_tracking_uri(before)


def _log(mlflow, source, safe: list[dict], *, experiment: str, run_id: str | None, run_name: str, title: str,
         status: str | None) -> dict[str, Any]:
    if run_id is None:
        mlflow.set_experiment(experiment)
    worst = status or next((s for s in ("fails", "too small to tell") if any(c["status"] == s for c in safe)), "holds")
    with mlflow.start_run(run_id=run_id, run_name=None if run_id else run_name) as run:
        with mlflow.start_span(name=clean(title)) as span:
            span.set_inputs({"claims": [c["asked"] for c in safe]})
            span.set_outputs({c["check"]: c["status"] for c in safe})
        trace_id = span.trace_id
        mlflow.set_tag("fluke.status", worst)
        for c in safe:
            mlflow.log_metric(_metric_name(c["check"]), 1.0 if c["status"] == "holds" else 0.0)
    mlflow.flush_trace_async_logging()
    for c in safe:
        rationale = "\n".join([f"{c['status']}: {c['asked']}", *(c.get("reasons") or [c.get("found", "")]),
                               *([f"detection limit: {c['limit']}"] if c.get("limit") else []),
                               f"rests on: {c.get('rests_on', '')}"])
        mlflow.log_feedback(trace_id=trace_id, name=c["check"], value=c["status"], source=source,
                            rationale=rationale,
                            metadata={k: str(c[k]) for k in ("asked", "found", "rests_on", "version", "limit")
                                      if c.get(k) is not None})
    return {"run_id": run.info.run_id, "trace_id": trace_id, "assessments": len(safe)}
