"""The report: a plain data model, a self-contained HTML renderer, and collectors from the ledger.

Build a :class:`ReportData` (by hand, or with :func:`collect_report` from a ledger), then
:func:`render_html` writes one HTML file that works opened from disk with no network.

>>> from fluke.report import ReportData, render_html
>>> html = render_html(ReportData(title="empty"))
>>> "Not computed" in html
True
"""

from ._collect import collect_report, deaths_by_step, explorer_run, uniform_beta_board
from ._html import redacted, render_html, script_json
from ._model import (
    REPORT_FORMAT_VERSION,
    SECTIONS,
    Arm,
    Boundary,
    BoundaryCell,
    Calibration,
    CalibrationBin,
    Comparison,
    Contrast,
    Explorer,
    ExplorerEvent,
    ExplorerRun,
    ExplorerViolation,
    Forest,
    LuckCase,
    LuckRate,
    NullCalibration,
    ReportData,
    ScenarioPosterior,
    SuiteBoard,
    SuiteQuestion,
    SuiteQuestions,
    VersionRef,
)

__all__ = [
    "REPORT_FORMAT_VERSION", "SECTIONS", "Arm", "Boundary", "BoundaryCell", "Calibration", "CalibrationBin",
    "Comparison", "Contrast", "Explorer", "ExplorerEvent", "ExplorerRun", "ExplorerViolation", "Forest",
    "LuckCase", "LuckRate", "NullCalibration", "ReportData", "ScenarioPosterior", "SuiteBoard", "SuiteQuestion",
    "SuiteQuestions", "VersionRef", "collect_report", "deaths_by_step", "explorer_run", "redacted",
    "render_html", "script_json", "uniform_beta_board",
]
