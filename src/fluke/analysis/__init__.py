"""One function per question asked of a ledger, each returning a result that renders itself.

The command line, the HTML report and the pytest plugin call these and print what they return;
none of them computes an answer of its own, so every surface gives the same one: the report's
page is laid out from the JSON documents of the verbs below (``compare``, ``believe``,
``grade``, ``leaderboard``, ``calibration``, ``contrast``, ``calibrate``). What no verb prints
(the paired view of two boards, deaths by step of a single version, the boundary chart's
counts, the run explorer) is counted by the report's own modules here (``_report_*``), never
in :mod:`fluke.report`, which only draws.

>>> from fluke.analysis import Result, render
>>> callable(render)
True
"""

from __future__ import annotations

from typing import Any

from .._lazy import lazy_exports

#: public name -> module that defines it (imported on first use, so ``import fluke.analysis`` is cheap): the
#: verbs, their result types and the constants they name; helpers stay in their modules (text formatting
#: in :mod:`fluke.format`, the unknown-outcome policy in :mod:`fluke.policies`).
_EXPORTS: dict[str, str] = {
    "Result": "_result", "dumps": "_result", "JSON_FORMAT_VERSION": "_result", "Arm": "_select",
    "EmptyLedger": "_select", "select_arm": "_select", "version_label": "_select", "RunFacts": "_facts",
    "reduce_run": "_facts", "reduce_body": "_facts", "write_runs": "_stream", "TABLE_ROWS": "_document",
    "grade": "_grade", "GradeResult": "_grade", "grade_ledger": "_grade_stream", "LedgerGrades": "_grade_stream",
    "GradeWriter": "_grade_write", "believe": "_believe", "predict": "_believe", "review": "_believe",
    "BeliefResult": "_believe", "PredictionResult": "_believe", "ReviewResult": "_believe", "report": "_report",
    "ReportResult": "_report", "demo": "_demo", "DemoSummary": "_demo", "run_demo": "_demo", "DemoResult": "_demo",
    "scan_runs": "_report_scan", "Scan": "_report_scan", "replay_runs": "_intervention",
    "intervene_runs": "_intervention", "ReplayResult": "_intervention", "InterventionResult": "_intervention",
    "parse_interventions": "_intervention", "ingest": "_record", "IngestReport": "_record", "parse_identity": "_record",
    "run_suite": "_record", "SuiteRunResult": "_record", "formats": "_record", "FormatsReport": "_record",
    "export": "_summary", "ExportReport": "_summary", "ExportWritten": "_summary", "export_parquet": "_lake",
    "LakeExportReport": "_lake", "summary": "_summary", "SummaryResult": "_summary", "list_runs": "_summary",
    "RunsResult": "_summary", "compare": "_compare", "ComparisonResult": "_compare", "compare_corrected": "_corrected",
    "CorrectedComparison": "_corrected", "leaderboard_corrected": "_corrected", "CorrectedLeaderboard": "_corrected",
    "fixcheck": "_fixcheck", "FixCheckResult": "_fixcheck", "consistency": "_fixcheck",
    "ConsistencyResult": "_fixcheck", "simulate": "_reveal", "SimulationResult": "_reveal", "reveal": "_reveal",
    "RevealResult": "_reveal", "SEAL_KIND": "_reveal", "calibrate": "_null_calibration",
    "NullCalibrationResult": "_null_calibration", "gate": "_gate", "DecisionResult": "_gate",
    "parse_gate_rule": "_gate", "load_gate_rule": "_gate", "seal_gate": "_gate", "GateSealResult": "_gate",
    "GATE_SEAL_KIND": "_gate", "Claim": "_claims", "claim_reliable": "_claims", "claim_luck": "_claims",
    "claim_not_worse": "_claims", "claim_gate": "_claims", "interval": "_interval", "IntervalResult": "_interval",
    "VersionInterval": "_interval", "passk": "_interval", "PassKResult": "_interval", "VersionPassK": "_interval",
    "contrast": "_contrast", "ContrastResult": "_contrast", "seal": "_seal", "SealResult": "_seal", "unseal": "_seal",
    "UnsealResult": "_seal", "seals": "_seal", "SealList": "_seal", "calibration": "_prediction_calibration",
    "CalibrationResult": "_prediction_calibration", "read_prediction_matches": "_prediction_calibration",
    "UNKNOWN_POLICIES": "_unknowns", "UnknownPolicy": "_unknowns", "leaderboard": "_leaderboard",
    "LeaderboardResult": "_leaderboard", "plan": "_plan", "PlanResult": "_plan", "boundary": "_boundary",
    "BoundaryResult": "_boundary", "explore": "_boundary", "ExploreResult": "_boundary", "incident": "_boundary",
    "IncidentResult": "_boundary", "judge": "_judge", "JudgeRunResult": "_judge",
    "judge_audit": "_judge", "judge_audit_draw": "_judge", "AuditResult": "_judge", "AuditDrawResult": "_judge",
    "judge_pairwise": "_judge", "PairwiseResult": "_judge", "import_judgments": "_judge", "ImportResult": "_judge",
    "claim_judge": "_judge", "decide": "_decide", "DecideResult": "_decide", "VersionCosts": "_decide",
    "version_costs": "_decide", "seal_loss": "_decide", "LossSealResult": "_decide", "claim_severe": "_decide",
    "LOSS_SEAL_KIND": "_decide", "export_findings": "_export_findings",
}

__all__ = sorted(_EXPORTS) + ["render"]


def render(result, fmt: str = "text", **options: Any) -> str:
    """A result as ``"text"``, ``"markdown"`` or ``"json"`` (the same as ``result.render(fmt)``)."""
    return result.render(fmt, **options)


__getattr__, __dir__ = lazy_exports(__name__, {f".{m}": tuple(n for n, h in _EXPORTS.items() if h == m)
                                               for m in set(_EXPORTS.values())}, globals())
