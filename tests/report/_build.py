"""Reports for the tests: one real τ-bench run made hostile, and every section filled.

The hostile run is a real gpt-4o airline run from ../shared/data with one tool result replaced
by markup that would run script if it were ever inserted as HTML, and with secrets planted
in a user message and in tool arguments.
"""

from __future__ import annotations

import numpy as np

from fluke.adapters import read_file
from fluke.ledger import CountRow
from fluke.record import Run, ToolCall, UserMessage
from fluke.analysis._report_collect import deaths_by_step, explorer_run
from fluke.analysis._report_paired import paired_from
from fluke.report._model import Figure, JudgeAudit, JudgeEntry, JudgesSection
from fluke.report import (
    DecisionRow,
    DecisionSection,
    Boundary,
    BoundaryCell,
    Calibration,
    CalibrationBin,
    ForestRow,
    Explorer,
    Forest,
    LeaderboardSection,
    LeaderRow,
    LuckCase,
    LuckSection,
    ReportData,
    NullSection,
    ScenarioPosterior,
    SuiteBoard,
    SuiteQuestion,
    SuiteQuestions,
    VersionRef,
)

PAYLOAD = ('</script><script>window.__pwned = 1; document.title = "pwned";</script>'
           '<img src="x" onerror="window.__pwned = 2; document.title = \'pwned\'">'
           '<svg onload="window.__pwned = 3"></svg>\u2028&lt;b&gt;')
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
API_KEY = "sk-proj-Q8vT4nR2mK9xL5wE7yU3iO1pA6sD0fGh"
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7fluke\n-----END RSA PRIVATE KEY-----"
SECRETS = (AWS_KEY, API_KEY, "MIIEowIBAAKCAQEA7fluke", "hunter2-very-secret")


def beta_board(counts, *, version: str, label: str, bar: float = 0.9, level: float = 0.95) -> SuiteBoard:
    """A suite board laid out by hand from count rows, its Beta(1 + k, 1 + n − k) posteriors by scipy."""
    from scipy.stats import beta

    rows = []
    for r in counts:
        dist = beta(1 + r.passes, 1 + r.trials - r.passes)
        rows.append(ScenarioPosterior(scenario=r.scenario, condition=r.condition or "", successes=r.passes,
                                      trials=r.trials, mean=float(dist.mean()), lo=float(dist.ppf((1 - level) / 2)),
                                      hi=float(dist.ppf((1 + level) / 2)), p_above_bar=float(dist.sf(bar))))
    return SuiteBoard(version=version, label=label, bar=bar, level=level, rows=rows,
                      conditional_on=f"prior Beta(1, 1); bar {bar:g}")


def pvalue_section(pvalues, *, alpha: float = 0.05, bins: int = 20, conditional_on: str = "") -> NullSection:
    """A null-calibration section laid out by hand from p-values (numpy's histogram)."""
    p = np.clip(np.asarray(pvalues, dtype=float), 0.0, 1.0)
    counts, _ = np.histogram(p, bins=bins, range=(0.0, 1.0))
    return NullSection(histogram=counts.tolist(), alpha=alpha, false_alarms=int((p < alpha).sum()), pairs=int(p.size),
                       conditional_on=conditional_on)


def tau_runs(path) -> list[Run]:
    return list(read_file(path, identity={"model": "gpt-4o"}))


def hostile(run: Run) -> tuple[Run, int]:
    """The run with its first tool result replaced by the payload and secrets planted.

    Returns the new run and the event index of the hostile tool result.
    """
    events = list(run.events)
    index = next(i for i, e in enumerate(events) if isinstance(e, ToolCall))
    call = events[index]
    events[index] = ToolCall(**{**call.model_dump(), "result": PAYLOAD, "ok": True,
                                "args": {**(call.args or {}), "password": "hunter2-very-secret"}})
    events.insert(1, UserMessage(text=f"my keys: {AWS_KEY} and {API_KEY}\n{PRIVATE_KEY}\n"
                                      "Authorization: Bearer abcdefghijklmnop"))
    body = run.model_dump(mode="json")
    body["events"] = [e.model_dump(mode="json") for e in events]
    body["outcome"] = {**body["outcome"], "died_at": None}
    return Run.model_validate(body), index + 1


def full_report(runs: list[Run]) -> tuple[ReportData, Run, int]:
    """A report with every section present: real runs for the board, deaths and explorer;
    fixed illustrative figures for the sections whose capabilities are not in this branch."""
    bad, bad_index = hostile(next(r for r in runs if r.outcome.passed is False))
    version, label = runs[0].version, "gpt-4o"
    per_scenario: dict[str, list[int]] = {}
    for r in runs:
        per_scenario.setdefault(r.scenario, [0, 0])
        per_scenario[r.scenario][0] += 1
        per_scenario[r.scenario][1] += bool(r.outcome.passed)
    counts = [CountRow(version, s, "", n, k) for s, (n, k) in per_scenario.items()]
    board = beta_board(counts, version=version, label=label, bar=0.9)
    half = len(runs) // 2
    halves = []
    for part, name in ((runs[:half], "first half"), (runs[half:], "second half")):
        tally: dict[str, list[int]] = {}
        for r in part:
            tally.setdefault(r.scenario, [0, 0])
            tally[r.scenario][0] += 1
            tally[r.scenario][1] += bool(r.outcome.passed)
        halves.append(beta_board([CountRow(version, s, "", n, k) for s, (n, k) in tally.items()],
                                         version=version, label=name))
    comparison = deaths_by_step([("first half", version, runs[:half]), ("second half", "f" * 64, runs[half:])])
    comparison = comparison.model_copy(update={
        "qvalues": [0.5 if d == 0 else 0.02 for d in comparison.arms[0].deaths],
        "verdict": "no significant difference", "pvalue": 0.21, "detection_limit": 1.41, "ceiling": 1.3})
    rng = np.random.default_rng(3)
    pvalues = rng.uniform(size=400).round(4).tolist()
    violations = {bad.hash: [{"check": "forbidden", "severity": "hard", "index": bad_index,
                              "message": "called a forbidden tool <img src=x onerror=alert(1)>"},
                             {"check": "max_steps", "severity": "warn", "index": None, "message": "long run"}]}
    shown = [bad] + runs[:40]
    data = ReportData(
        title="fluke report <script>document.title='pwned'</script>",
        generated_at="2026-11-30 09:00 UTC", ledger="test",
        versions=[VersionRef(version=version, label=label, runs=len(runs))],
        suite_board=[board], paired=paired_from(*halves),
        leaderboard=LeaderboardSection(rows=[
            LeaderRow(label="gpt-4o <b>", version=version, passes=84, trials=200, rate=42.0, low=35.1, high=48.9,
                      rank=1, rank_low=1, rank_high=2, p_first=0.7, group="a"),
            LeaderRow(label="second half", version="f" * 64, passes=40, trials=100, rate=40.0, low=30.2, high=49.8,
                      rank=2, rank_low=1, rank_high=2, p_first=0.3, group="a")],
            groups=[["gpt-4o <b>", "second half"]], strata=50, scenarios=50, conditional_on="illustrative"),
        decision=DecisionSection(rows=[
            DecisionRow(version=version, label="gpt-4o <b>", passes=84, runs=200, cost_per_success=0.12,
                        cost_low=0.1, cost_high=0.15, severe=["hard: 0 of 200 runs (0.0%), at most 1.5% at 95%"],
                        hard=0, hard_upper=0.0149, expected_loss=1.2, loss_low=1.0, loss_high=1.4, p_best=0.8),
            DecisionRow(version="f" * 64, label="second half", passes=40, runs=100, cost_per_success=0.2,
                        hard=2, hard_upper=0.062, expected_loss=1.5, p_best=0.2)],
            choice=version, choice_label="gpt-4o <b>", p_wrong=0.2, table="table <i>", conditional_on="illustrative"),
        suite_questions=[SuiteQuestions(version=version, label=label, questions=[
            SuiteQuestion(name="average pass rate", value=0.42, display="0.42 (0.36–0.49)",
                          conditional_on="uniform priors per scenario"),
            SuiteQuestion(name="P(every scenario clears 0.9)", value=0.0, display="<0.001",
                          conditional_on="independent scenarios")])],
        luck=[LuckSection(version=version, label=label, spec="demo.yaml", cases=[
            LuckCase(case="airline/1", green=3, lucky=1, share=1 / 3, lo=0.05, hi=0.75),
                             LuckCase(case="airline/0", green=0, lucky=0, share=None)],
                      pooled=LuckCase(case="pooled", green=3, lucky=1, share=1 / 3, lo=0.05, hi=0.75),
                      conditional_on="spec demo.yaml")],
        judges=JudgesSection(judges=[JudgeEntry(
            digest="3f" * 32, model="judge <i>", endpoint="fake", replicates=3, judged=200, pass_rate=0.62,
            flips=Figure(value=0.12, low=0.08, high=0.17, n=200), alpha=Figure(value=0.71, low=0.64, high=0.78, n=200),
            audit=JudgeAudit(labelled=60, population=200, kappa=Figure(value=0.55, low=0.33, high=0.74, n=60),
                             agreement=Figure(value=0.8, low=0.68, high=0.88, n=60),
                             bias_points=Figure(value=9.0, low=1.0, high=17.0, n=60), human_rate=0.5, judge_rate=0.6,
                             corrected=Figure(value=0.53, low=0.44, high=0.62), human_only=Figure(value=0.5, low=0.38,
                                                                                                   high=0.62),
                             judge_only=Figure(value=0.62, low=0.55, high=0.68), may_gate="too small to tell",
                             reason="kappa's lower end under the floor"),
            conditional_on="illustrative"),
            JudgeEntry(digest="4e" * 32, model="pairwise judge", pairwise=True, replicates=2, judged=50,
                       first_slot=Figure(value=0.7, low=0.61, high=0.78, n=100),
                       a_share=Figure(value=0.5, low=0.4, high=0.6, n=100), conditional_on="illustrative")]),
        contrasts=Forest(measure="difference in pass rate", contrasts=[
            ForestRow(label="memory on − off", estimate=0.08, lo=-0.03, hi=0.19),
            ForestRow(label="retry 3 − 1", estimate=0.15, lo=0.05, hi=0.25)],
            conditional_on="clustered by environment"),
        comparison=comparison,
        null_calibration=pvalue_section(pvalues, conditional_on="400 simulated unchanged pairs"),
        boundary=[Boundary(version=version, label=label, cells=[
            BoundaryCell(condition="name=unique", works=9, fails=1), BoundaryCell(condition="name=ambiguous", works=2,
                                                                                 should_ask=5, fails=3),
            BoundaryCell(condition="write=timeout")])],
        calibration=Calibration(bins=[CalibrationBin(lo=0.0, hi=0.5, mean_forecast=0.3, observed_share=0.25, n=8),
                                      CalibrationBin(lo=0.5, hi=1.0, mean_forecast=0.8, observed_share=0.7, n=20)],
                                brier=0.18, baseline_brier=0.22, n=28),
        explorer=Explorer(runs=[explorer_run(r, violations.get(r.hash, ()), label=label) for r in shown],
                          total=len(runs)))
    return data, bad, bad_index
