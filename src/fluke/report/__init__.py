"""The report: the page's layout types and a self-contained HTML renderer; it computes nothing.

Build a :class:`ReportData` by hand, or let :func:`fluke.analysis.report` build it from the
verbs' answers; :func:`render_html` draws one HTML file that works opened from disk with no
network. This package imports none of the packages that compute answers (a test holds it).

>>> from fluke.report import ReportData, render_html
>>> html = render_html(ReportData(title="empty"))
>>> "Not computed" in html
True
"""

from ._headline import headline_from
from ._html import (headline_panel, redacted, redacted_fields, render_html, render_redacted, script_json,
                    write_redacted)
from ._model import (
    REPORT_FORMAT_VERSION,
    SECTIONS,
    DeathArm,
    Boundary,
    BoundaryCell,
    NeverNamed,
    Calibration,
    CalibrationBin,
    HeadlineClaim,
    Comparison,
    DecisionRow,
    DecisionSection,
    ForestRow,
    Explorer,
    ExplorerEvent,
    ExplorerRun,
    ExplorerViolation,
    Forest,
    LeaderboardSection,
    LeaderRow,
    LuckCase,
    LuckSection,
    NullSection,
    InterventionRow,
    InterventionSection,
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
    "REPORT_FORMAT_VERSION",
    "SECTIONS",
    "DeathArm",
    "Boundary",
    "BoundaryCell",
    "NeverNamed",
    "Calibration",
    "CalibrationBin",
    "HeadlineClaim",
    "Comparison",
    "DecisionRow",
    "DecisionSection",
    "ForestRow",
    "InterventionRow",
    "InterventionSection",
    "Explorer",
    "ExplorerEvent",
    "ExplorerRun",
    "ExplorerViolation",
    "Forest",
    "LeaderboardSection",
    "LeaderRow",
    "LuckCase",
    "LuckSection",
    "NullSection",
    "Paired",
    "PairedRow",
    "ReportData",
    "ScenarioPosterior",
    "SuiteBoard",
    "SuiteQuestion",
    "SuiteQuestions",
    "VersionRef",
    "headline_from",
    "headline_panel",
    "redacted",
    "redacted_fields",
    "render_html",
    "render_redacted",
    "script_json",
    "write_redacted",
]
