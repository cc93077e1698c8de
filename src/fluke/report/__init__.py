"""The report: a plain data model, a self-contained HTML renderer, and collectors from the ledger.

Build a :class:`ReportData` (by hand, or with :func:`collect_report` from a ledger), then
:func:`render_html` writes one HTML file that works opened from disk with no network.

>>> from fluke.report import ReportData, render_html
>>> html = render_html(ReportData(title="empty"))
>>> "Not computed" in html
True
"""

from ._collect import (
    cells_from_outcomes,
    collect_report,
    deaths_by_step,
    deaths_from_counts,
    explorer_run,
    uniform_beta_board,
)
from ._demo import DemoResult, run_demo
from ._enrich import enrich
from ._feed import (
    board_from,
    calibration_from,
    comparison_from,
    contrasts_from,
    leaderboard_from,
    luck_from,
    null_from,
    null_from_pvalues,
    suite_questions_from,
    violations_from,
)
from ._headline import headline_from
from ._tally import PICK_RULE, ExplorerPick, RunTally, quotas
from ._paired import p_b_better, paired_from
from ._html import headline_panel, redacted, render_html, render_redacted, script_json
from ._model import (
    REPORT_FORMAT_VERSION,
    SECTIONS,
    Arm,
    Boundary,
    BoundaryCell,
    Calibration,
    CalibrationBin,
    Claim,
    Comparison,
    Contrast,
    Explorer,
    ExplorerEvent,
    ExplorerRun,
    ExplorerViolation,
    Forest,
    Leaderboard,
    LeaderRow,
    LuckCase,
    LuckRate,
    NullCalibration,
    Paired,
    PairedRow,
    ReportData,
    ScenarioPosterior,
    SuiteBoard,
    SuiteQuestion,
    SuiteQuestions,
    VersionRef,
)

__all__ = [
    "PICK_RULE",
    "ExplorerPick",
    "RunTally",
    "cells_from_outcomes",
    "deaths_from_counts",
    "quotas",
    "REPORT_FORMAT_VERSION",
    "SECTIONS",
    "Arm",
    "Boundary",
    "BoundaryCell",
    "Calibration",
    "CalibrationBin",
    "Claim",
    "Comparison",
    "Contrast",
    "DemoResult",
    "Explorer",
    "ExplorerEvent",
    "ExplorerRun",
    "ExplorerViolation",
    "Forest",
    "Leaderboard",
    "LeaderRow",
    "LuckCase",
    "LuckRate",
    "NullCalibration",
    "Paired",
    "PairedRow",
    "ReportData",
    "ScenarioPosterior",
    "SuiteBoard",
    "SuiteQuestion",
    "SuiteQuestions",
    "VersionRef",
    "board_from",
    "calibration_from",
    "collect_report",
    "comparison_from",
    "contrasts_from",
    "deaths_by_step",
    "enrich",
    "explorer_run",
    "leaderboard_from",
    "headline_from",
    "headline_panel",
    "luck_from",
    "null_from",
    "null_from_pvalues",
    "p_b_better",
    "paired_from",
    "redacted",
    "render_html",
    "render_redacted",
    "run_demo",
    "script_json",
    "suite_questions_from",
    "uniform_beta_board",
    "violations_from",
]
