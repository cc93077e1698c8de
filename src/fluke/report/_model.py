"""The report's data model: plain, documented, JSON-serialisable sections.

Every section is optional. A renderer shows what is present and says "not computed" (with
the reason from :attr:`ReportData.missing` when there is one) for the rest. The same model
is what ``fluke report --json`` prints.

>>> data = ReportData(title="t", suite_board=[SuiteBoard(version="ab" * 32, label="m", bar=0.9,
...     rows=[ScenarioPosterior(scenario="s", successes=5, trials=5, mean=6/7, lo=0.59, hi=0.996,
...                             p_above_bar=0.47)])])
>>> data.present()
['suite_board']
>>> ReportData.model_validate_json(data.model_dump_json()) == data
True
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: The version of the report document. Bump on an incompatible change.
REPORT_FORMAT_VERSION = 1

#: Section names, in the order the HTML report shows them.
SECTIONS = ("paired", "leaderboard", "decision", "suite_board", "suite_questions", "luck", "judges", "contrasts",
            "comparison", "null_calibration",
            "boundary", "calibration", "explorer")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ScenarioPosterior(_Model):
    """One scenario's Beta posterior against the bar: counts, credible interval, P(θ > bar)."""

    scenario: str
    condition: str = ""
    successes: int = Field(ge=0)
    trials: int = Field(ge=0)
    mean: float
    lo: float
    hi: float
    p_above_bar: float


class SuiteBoard(_Model):
    """Per-scenario posteriors of one version, under a stated prior and credible level."""

    version: str
    label: str
    bar: float
    prior: tuple[float, float] = (1.0, 1.0)
    level: float = 0.95
    rows: list[ScenarioPosterior]
    conditional_on: str = ""
    #: Scenario → the family tag it declares (``Run.tags``), for the scenarios that declare one.
    families: dict[str, str] = Field(default_factory=dict)


class SuiteQuestion(_Model):
    """One suite-level answer: a number (or None when undefined), how to print it, and its condition."""

    name: str
    value: float | None
    display: str
    conditional_on: str


class SuiteQuestions(_Model):
    version: str
    label: str
    questions: list[SuiteQuestion]


class LuckCase(_Model):
    """Luck rate of one case: lucky / green; ``share`` is None when nothing was green."""

    case: str
    green: int = Field(ge=0)
    lucky: int = Field(ge=0)
    share: float | None
    lo: float | None = None
    hi: float | None = None


class LuckSection(_Model):
    """One version's luck rate, per case and pooled, as ``fluke grade --json`` gives it under ``luck``,
    with the spec it rests on (``spec``: its name or path, and its digest)."""

    version: str = ""
    label: str = ""
    spec: str = ""
    spec_digest: str = ""
    #: Why no luck rate is claimed from this spec (most tools the runs called are unknown to it); "" when it fits.
    warning: str = ""
    cases: list[LuckCase]
    pooled: LuckCase | None = None
    conditional_on: str = ""


class ForestRow(_Model):
    label: str
    estimate: float
    lo: float
    hi: float


class Forest(_Model):
    """Contrasts with their intervals, drawn against ``null_value`` (no effect)."""

    measure: str = "difference"
    null_value: float = 0.0
    contrasts: list[ForestRow]
    conditional_on: str = ""


class DeathArm(_Model):
    """One arm of a comparison: deaths at each step of ``Comparison.steps``."""

    label: str
    version: str
    runs: int = Field(ge=0)
    deaths: list[int]


class Comparison(_Model):
    """Deaths by step per arm; the test's verdict, p-value and detection limit when computed."""

    arms: list[DeathArm]
    steps: list[int]
    #: What died at each step where one thing dominates (the tool at that event index), if known.
    step_labels: list[str | None] | None = None
    qvalues: list[float | None] | None = None
    verdict: str | None = None
    pvalue: float | None = None
    detection_limit: float | None = None
    ceiling: float | None = None
    alpha: float = 0.05
    #: B − A in points with its interval (``level``), and the passes behind it, when computed.
    difference: float | None = None
    difference_lo: float | None = None
    difference_hi: float | None = None
    difference_level: float | None = None
    passes: list[int] | None = None
    uninformative: int | None = None
    #: Which runs the deaths per step count and where a failed run died (the comparison's own words).
    where: str = ""
    conditional_on: str = ""
    note: str = ""


class NullSection(_Model):
    """The histogram of p-values of unchanged pairs (equal-width bins over [0, 1]); it should be flat."""

    histogram: list[int] = Field(min_length=1)
    alpha: float = 0.05
    false_alarms: int = Field(ge=0)
    pairs: int = Field(ge=0)
    lo: float | None = None
    hi: float | None = None
    conditional_on: str = ""


BoundaryStatus = Literal["works", "should ask", "fails", "not yet run"]


BoundaryRegion = Literal["works", "uncertain", "fails", "not run"]


class BoundaryCell(_Model):
    """Outcome counts at one condition; ``trials`` = 0 marks a named condition not yet run.

    ``region``, ``colour`` and ``label`` are ``fluke boundary``'s (its posterior per point), present
    when the report charted a condition space."""

    condition: str
    works: int = 0
    should_ask: int = 0
    fails: int = 0
    errors: int = 0
    region: BoundaryRegion | None = None
    colour: Literal["completes", "asks", "fails"] | None = None
    label: str | None = None
    p_works: float | None = None
    incidents: int = 0

    @property
    def trials(self) -> int:
        return self.works + self.should_ask + self.fails + self.errors

    @property
    def status(self) -> BoundaryStatus:
        """The most common outcome (ties go to the worse one); 'not yet run' without runs."""
        if self.trials == 0:
            return "not yet run"
        ranked = [(self.fails + self.errors, 2, "fails"), (self.should_ask, 1, "should ask"), (self.works, 0, "works")]
        return max(ranked)[2]


class NeverNamed(_Model):
    """Production incidents at a condition the space does not name."""

    condition: str
    incidents: int


class Boundary(_Model):
    version: str
    label: str
    cells: list[BoundaryCell]
    conditional_on: str = ""
    never_named: list[NeverNamed] = Field(default_factory=list)
    rule: str = ""        # how the regions were called, when they were


class CalibrationBin(_Model):
    lo: float
    hi: float
    mean_forecast: float
    observed_share: float
    n: int = Field(ge=1)


class Calibration(_Model):
    """A reliability diagram: forecasts binned, each bin's observed share, with the Brier scores."""

    bins: list[CalibrationBin]
    brier: float | None = None
    baseline_brier: float | None = None
    n: int = 0
    conditional_on: str = ""


class ExplorerEvent(_Model):
    """One trajectory event, flattened for display. Strings are untrusted and already redacted."""

    index: int
    kind: Literal["user", "agent", "tool"]
    actor: str = ""
    text: str = ""
    tool: str = ""
    args: str = ""
    ok: bool | None = None
    result: str = ""
    error: str = ""


class ExplorerViolation(_Model):
    check: str
    severity: str
    index: int | None
    message: str


class ExplorerRun(_Model):
    hash: str
    version: str
    label: str
    scenario: str
    trial: int
    condition: str = ""
    passed: bool | None
    reward: float | None = None
    outcome: str | None = None
    died_at: int | None = None
    events: list[ExplorerEvent]
    violations: list[ExplorerViolation] = Field(default_factory=list)


class Explorer(_Model):
    runs: list[ExplorerRun]
    total: int = Field(ge=0, description="runs selected in the ledger; more than len(runs) when capped")
    #: How the shown runs were picked when capped ("" when every selected run is shown).
    rule: str = ""


class HeadlineClaim(_Model):
    """One headline answer, in seed 001's four parts: what happened, what we infer, what it is
    conditional on, what was carried. ``section`` is the anchor of the section it summarises."""

    question: str
    answer: str
    happened: str
    infer: str
    conditional_on: str
    carried: str
    section: str = ""
    tone: Literal["good", "bad", "warn", "neutral"] = "neutral"


class PairedRow(_Model):
    """One scenario cell under both versions: counts, the move, and the evidence for it.

    ``move`` is fixed / broken / both pass / both fail with one run a side, else "better",
    "worse" or "no clear shift"; ``p_b_better`` is P(θ_B > θ_A) under uniform priors."""

    scenario: str
    condition: str = ""
    passes_a: int = Field(ge=0)
    runs_a: int = Field(ge=0)
    passes_b: int = Field(ge=0)
    runs_b: int = Field(ge=0)
    shift: float
    p_b_better: float
    move: str


class Paired(_Model):
    """Scenario by scenario, what moved between version A and version B, sorted by evidence."""

    label_a: str
    label_b: str
    version_a: str
    version_b: str
    rows: list[PairedRow]
    #: move → scenario cells, in a fixed order.
    counts: dict[str, int]
    single_run: bool
    conditional_on: str = ""


class LeaderRow(_Model):
    """One version on the leaderboard, as ``fluke leaderboard --json`` lists it: pass rate in points
    over the strata with its interval, rank with its bootstrap interval, P(first), group ("" without
    groups), and the version's hash."""

    label: str
    passes: int = Field(ge=0)
    trials: int = Field(ge=0)
    rate: float
    low: float
    high: float
    rank: int
    rank_low: int
    rank_high: int
    p_first: float
    group: str = ""
    version: str = ""


class LeaderboardSection(_Model):
    """Many versions at once, best first, from :func:`fluke.analysis.leaderboard`."""

    rows: list[LeaderRow]
    groups: list[list[str]] | None = None
    strata: int = 0
    scenarios: int = 0
    level: float = 0.95
    conditional_on: str = ""


class Figure(_Model):
    """A figure with its interval, as the judge verbs give it (``value`` None: too small to tell)."""

    value: float | None = None
    low: float | None = None
    high: float | None = None
    n: int = 0
    method: str = ""


class JudgeAudit(_Model):
    """A judge against people, from ``fluke judge audit --labels --json``: agreement, bias and the
    pass rate corrected (PPI++) beside the judge-only and human-only ones."""

    labelled: int = Field(ge=0)
    population: int = Field(ge=0)
    kappa: Figure
    agreement: Figure
    bias_points: Figure
    human_rate: float | None = None
    judge_rate: float | None = None
    confusion: dict[str, int] = Field(default_factory=dict)
    corrected: Figure
    human_only: Figure
    judge_only: Figure
    may_gate: str = ""
    reason: str = ""
    source: str = ""


class JudgeEntry(_Model):
    """One judge of the reported runs: what it is, how often it disagrees with itself, and, where
    people checked it, how it agrees with them; for a pairwise judge, its taste for the first slot."""

    digest: str
    model: str
    endpoint: str = ""
    replicates: int = 1
    pairwise: bool = False
    judged: int = Field(ge=0)
    pass_rate: float | None = None
    flips: Figure | None = None
    alpha: Figure | None = None
    first_slot: Figure | None = None
    a_share: Figure | None = None
    audit: JudgeAudit | None = None
    conditional_on: str = ""


class JudgesSection(_Model):
    """Every judge that judged the reported runs (``fluke judge run``, ``judge pairs``, ``judge import``)."""

    judges: list[JudgeEntry]


class DecisionRow(_Model):
    """One version under a loss table: pass share, cost per success, severe failures, expected loss."""

    version: str
    label: str
    passes: int = Field(ge=0)
    runs: int = Field(ge=0)
    cost_per_success: float | None = None
    cost_low: float | None = None
    cost_high: float | None = None
    unknown_cost: int = 0
    severe: list[str] = Field(default_factory=list)     # one sentence per severity, as fluke decide prints it
    hard: int = 0
    hard_upper: float | None = None
    expected_loss: float | None = None
    loss_low: float | None = None
    loss_high: float | None = None
    p_best: float | None = None
    eligible: bool = True
    why_not: str | None = None


class DecisionSection(_Model):
    """What ``fluke decide --json`` says: every version's costs and loss, the choice, P(wrong choice)."""

    rows: list[DecisionRow]
    choice: str | None = None
    choice_label: str | None = None
    p_wrong: float | None = None
    reason: str | None = None
    table: str = "loss table"
    conditional_on: str = ""


class VersionRef(_Model):
    version: str
    label: str
    runs: int = 0


class ReportData(_Model):
    """The whole report. ``missing`` maps a section name to why it was not computed."""

    format_version: int = REPORT_FORMAT_VERSION
    kind: Literal["report"] = "report"
    title: str = "fluke report"
    generated_at: str | None = None
    ledger: str | None = None
    versions: list[VersionRef] = Field(default_factory=list)
    headline: list[HeadlineClaim] | None = None
    paired: Paired | None = None
    leaderboard: LeaderboardSection | None = None
    decision: DecisionSection | None = None
    suite_board: list[SuiteBoard] | None = None
    suite_questions: list[SuiteQuestions] | None = None
    luck: list[LuckSection] | None = None
    judges: JudgesSection | None = None
    #: Warnings the page shows above the headline (a spec whose vocabulary does not fit the runs, …).
    warnings: list[str] = Field(default_factory=list)
    contrasts: Forest | None = None
    comparison: Comparison | None = None
    null_calibration: NullSection | None = None
    boundary: list[Boundary] | None = None
    calibration: Calibration | None = None
    explorer: Explorer | None = None
    missing: dict[str, str] = Field(default_factory=dict)

    def present(self) -> list[str]:
        """The sections that hold data, in display order."""
        return [name for name in SECTIONS if getattr(self, name) is not None]
