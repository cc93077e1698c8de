"""Grade the path as well as the answer: specs, checks with severities, provenance and taint,
the gate, and the luck rate.

>>> from fluke.grading import load_spec, grade_run, evaluate_gate, luck_rate
>>> from fluke.record import Run, UserMessage, ToolCall, Outcome
>>> spec = load_spec({"tools": ["get_order", "refund"], "required": ["get_order"],
...                   "before": [["get_order", "refund"]]})
>>> run = Run(scenario="refund/1", events=[
...     UserMessage(text="Refund order W1234 please"),
...     ToolCall(tool="refund", args={"order_id": "W1234"}, ok=True)],
...     outcome=Outcome(passed=True))
>>> grade = grade_run(run, spec)
>>> [v.check for v in grade.violations]
['before', 'required']
>>> evaluate_gate([grade]).passed, str(luck_rate([grade]).pooled)
(False, '100.0% (1/1 output-ok runs), 95% CrI [14.7%, 100.0%]')
"""

from ._agreement import Agreement, Disagreement, reference_agreement
from ._body import ChunkGrader, ChunkGrades, grade_body, row_order
from ._grade import RunGrade, Violation, first_hard_index, grade_run, make_grade
from ._spec import CHECKS, SEVERITIES, Spec, load_spec
from ._matchers import equal
from ._pairing import pair_ordered, pair_unordered
from ._reference import MODES, ReferenceResult, call_text
from ._text import redact as redact_text   # one redaction for every output: fluke.record.redact_text
from ._tally import GradeTally
from ._verdict import CaseGate, GateResult, LuckRate, LuckReport, evaluate_gate, luck_rate, luck_rates, luck_report

__all__ = [
    "Agreement", "CHECKS", "CaseGate", "ChunkGrader", "ChunkGrades", "Disagreement", "GateResult", "GradeTally",
    "LuckRate", "LuckReport", "MODES", "ReferenceResult", "RunGrade", "SEVERITIES", "Spec", "Violation",
    "call_text", "equal", "evaluate_gate", "first_hard_index", "grade_body", "grade_run", "load_spec", "luck_rate",
    "luck_rates", "luck_report", "make_grade", "pair_ordered", "pair_unordered", "redact_text", "reference_agreement",
    "row_order",
]
