"""The headline panel: one sentence per question the report answers, each in four parts.

Seed 001's four parts: what happened (the counts), what we infer (under a stated model),
what that is conditional on, and what was carried from before. Every claim is derived from
the report's own sections, so the panel can never say more than the sections below it.

>>> from fluke.report import ReportData, SuiteBoard, ScenarioPosterior
>>> board = SuiteBoard(version="ab" * 32, label="m", bar=0.9, rows=[
...     ScenarioPosterior(scenario="s", successes=5, trials=5, mean=6/7, lo=0.59, hi=0.996, p_above_bar=0.47)])
>>> [c.answer for c in headline_from(ReportData(suite_board=[board]))]
['m: 0 of 1 scenario cells clear the bar 0.9 with probability ≥ 0.95.']
"""

from __future__ import annotations

import math

from ..format import fmt_is, fmt_p, fmt_pct, fmt_share
from ._model import HeadlineClaim, ReportData

#: What a section carries from before: the report computes every figure from the selected runs alone.
NOTHING_CARRIED = "nothing: uniform Beta(1, 1) priors, no runs or beliefs carried from other versions"



#: Characters of a version's name in a headline answer (the bold line); the full name is in the
#: parts below it, so long model ids do not turn a card into five bold lines.
ANSWER_NAME = 28


def _name(label: str) -> str:
    """A version's name as the bold answer shows it.

    >>> _name("ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm"), _name("gpt-4.1")
    ('ft:gpt-4.1-202…-sft:BzrYdMNm', 'gpt-4.1')
    """
    from ..record import redact_text
    from ._svg import middle

    return middle(redact_text(label), ANSWER_NAME)  # redacted whole first: a cut secret is no longer found

def _every(data: ReportData, board) -> str:
    for block in data.suite_questions or []:
        if block.version == board.version:
            q = next((q for q in block.questions if q.name.startswith("P(every")), None)
            if q is not None:
                op = q.display[0] + " " + q.display[1:] if q.display[:1] in "<>" else "= " + q.display
                return f"P(every scenario clears {board.bar:g}) {op}"
    return ""


def _boards_claim(data: ReportData) -> list[HeadlineClaim]:
    """One claim for every version's board: how many cells clear the bar, with what probability."""
    boards = data.suite_board or []
    if not boards:
        return []
    answers, happened, infer, conds = [], [], [], []
    all_clear = none_clear = True
    for board in boards:
        k = sum(r.successes for r in board.rows)
        n = sum(r.trials for r in board.rows)
        cells = len(board.rows)
        clear = sum(r.p_above_bar >= 0.95 for r in board.rows)
        below = sum(r.p_above_bar < 0.5 for r in board.rows)
        per = sorted({r.trials for r in board.rows})
        each = (f"{per[0]} run{'s' if per[0] != 1 else ''} each" if len(per) == 1
                else f"{per[0]}–{per[-1]} runs each")
        who = f"{_name(board.label)}: " if len(boards) > 1 else ""
        answers.append(f"{who}{clear} of {cells} scenario cells clear the bar {board.bar:g} with probability ≥ 0.95")
        happened.append(f"{who}{fmt_share(k, n)} runs passed in {cells} cells ({each})")
        infer.append(f"{who}{below} of {cells} more likely below {board.bar:g} than above"
                     + (f"; {_every(data, board)}" if _every(data, board) else ""))
        conds.append(board.conditional_on or f"version {board.version[:12]}")
        all_clear &= clear == cells
        none_clear &= clear == 0
    lead = "" if len(boards) > 1 else f"{_name(boards[0].label)}: "
    answer = lead + "; ".join(answers) + "."
    if len(boards) > 2:  # many versions: the range, each version's own count is in the parts and the boards
        clears = [sum(r.p_above_bar >= 0.95 for r in b.rows) for b in boards]
        span = f"{min(clears)}" if min(clears) == max(clears) else f"{min(clears)}–{max(clears)}"
        answer = (f"In each of {len(boards)} versions, {span} scenario cells clear the bar "
                  f"{boards[0].bar:g} with probability ≥ 0.95.")
    return [HeadlineClaim(question="Which scenarios clear the bar?", answer=answer,
                  happened="; ".join(happened), infer="; ".join(infer), conditional_on=conds[0] if len(set(
                      c.split(";", 1)[-1] for c in conds)) == 1 else " | ".join(conds),
                  carried=NOTHING_CARRIED, section="suite-board",
                  tone="good" if all_clear else ("bad" if none_clear else "warn"))]


def _comparison_claims(data: ReportData) -> list[HeadlineClaim]:
    c = data.comparison
    if c is None or c.verdict is None or len(c.arms) != 2:
        return []
    a, b = c.arms
    limit = (f"{c.detection_limit:.1f} points" if c.detection_limit is not None and math.isfinite(c.detection_limit)
             else "no limit (no stratum carries information)")
    diff = ""
    if c.difference is not None:
        diff = f"B − A = {c.difference:+.1f} points"
        if c.difference_lo is not None and c.difference_hi is not None:
            level = f"{c.difference_level:.0%} " if c.difference_level else ""
            diff += f" ({level}interval {c.difference_lo:+.1f} to {c.difference_hi:+.1f})"
        diff += "; "
    happened = f"{a.label} (A): {a.runs} runs; {b.label} (B): {b.runs} runs"
    if c.passes is not None:
        happened = (f"{a.label} (A): {fmt_share(c.passes[0], a.runs)} passed; "
                    f"{b.label} (B): {fmt_share(c.passes[1], b.runs)} passed")
    p = fmt_p(c.pvalue)
    p = f"p {p[0]} {p[1:]}" if p.startswith("<") else f"p = {p}"
    out = [HeadlineClaim(question="Did the pass rate change?",
                 answer=f"{_name(b.label)} against {_name(a.label)}: {c.verdict}; a difference below {limit} "
                        "could not have been detected.",
                 happened=happened, infer=f"{diff}{p}",
                 conditional_on=c.conditional_on, carried="nothing: each version's own runs, paired by scenario",
                 section="comparison",
                 tone={"different": "bad", "no difference": "good"}.get(c.verdict, "warn"))]
    if c.qvalues is None or not c.steps:
        return out
    labels = c.step_labels or [None] * len(c.steps)
    hits = [j for j, q in enumerate(c.qvalues) if q is not None and q < c.alpha]
    died = f"{a.label}: {sum(a.deaths)} deaths; {b.label}: {sum(b.deaths)} deaths, over {len(c.steps)} steps"
    if hits:
        named = ", ".join(f"step {c.steps[j]}" + (f" ({labels[j]})" if labels[j] else "") for j in hits)
        shown = "; ".join(f"step {c.steps[j]}: {a.deaths[j]} against {b.deaths[j]}, "
                          f"{fmt_is('q', c.qvalues[j], kind='p')}" for j in hits[:3])
        answer, infer, tone = f"The change sits at {named}.", f"deaths differ there ({shown})", "bad"
    else:
        qs = [q for q in c.qvalues if q is not None]
        answer = "No single step's deaths differ between the versions."
        infer = f"smallest q-value {fmt_p(min(qs)) if qs else '—'} (α {c.alpha:g})"
        tone = "neutral"
    return out + [HeadlineClaim(question="Where does the change sit?", answer=answer, happened=died, infer=infer,
                        conditional_on=(c.where or "runs whose failure step is known")
                        + "; Benjamini–Hochberg q-values across steps",
                        carried="nothing", section="comparison", tone=tone)]


def _luck_claim(data: ReportData) -> list[HeadlineClaim]:
    """One claim per graded version, naming the spec the luck rate rests on."""
    out = []
    for luck in data.luck or []:
        if luck.pooled is None:
            continue
        p = luck.pooled
        interval = "" if p.lo is None else f"interval {fmt_pct(p.lo, 1)}–{fmt_pct(p.hi, 1)}"
        spec = f"spec {luck.spec}" if luck.spec else "the spec"
        who = f"{luck.label}: " if luck.label else ""
        if luck.warning:
            out.append(HeadlineClaim(
                question="How often was a pass luck?",
                answer=f"{who}not claimed: the runs do not speak the vocabulary of {spec}.",
                happened=luck.warning, infer=f"no luck rate inferred from {spec}",
                conditional_on=f"{spec}; {luck.conditional_on}" if luck.conditional_on else spec,
                carried=NOTHING_CARRIED, section="luck", tone="warn"))
            continue
        out.append(HeadlineClaim(
            question="How often was a pass luck?",
            answer=f"{who}{p.lucky} of {p.green} green runs ({fmt_pct(p.share, 1)}) got the right output on a path "
                   f"that broke {spec}.",
            happened=f"{p.green} runs with the right output; {p.lucky} of them broke a rule of {spec} on the way",
            infer=interval or "no interval (nothing green)",
            conditional_on=f"{spec}; {luck.conditional_on}" if luck.conditional_on else spec,
            carried=NOTHING_CARRIED, section="luck", tone="good" if p.lucky == 0 else "warn"))
    return out


def _leader_claim(data: ReportData) -> list[HeadlineClaim]:
    lb = data.leaderboard
    if lb is None or not lb.rows:
        return []
    top = lb.rows[0]
    tied = [r.label for r in lb.rows if r.rank_low == 1]
    answer = (f"{_name(top.label)} ranks first (P(first) = {top.p_first:.2f})" if len(tied) == 1 else
              f"{len(tied)} of {len(lb.rows)} versions could rank first; {_name(top.label)} does most often "
              f"(P(first) = {top.p_first:.2f})")
    groups = (f"; {len(lb.groups)} group{'s' if len(lb.groups) != 1 else ''} that cannot be told apart"
              if lb.groups else "")
    return [HeadlineClaim(question="Which version is best?", answer=answer + groups + ".",
                  happened=f"{len(lb.rows)} versions on the {lb.strata} strata all of them ran; {top.label}: "
                           f"{fmt_share(top.passes, top.trials)} passed",
                  infer=f"{top.label}: {top.rate:.1f} points ({lb.level:.0%} interval {top.low:.1f}–{top.high:.1f}), "
                        f"rank interval {top.rank_low}–{top.rank_high}",
                  conditional_on=lb.conditional_on or "the strata every version ran", carried="nothing",
                  section="leaderboard", tone="neutral")]


def _decision_claim(data: ReportData) -> list[HeadlineClaim]:
    """The loss table's choice, with each version's pass rate, cost per success and hard failures beside it."""
    d = data.decision
    if d is None or not d.rows:
        return []
    def money(x):
        return "—" if x is None else f"{x:.4f}"

    parts = [f"{r.label}: {fmt_share(r.passes, r.runs)} passed, {money(r.cost_per_success)} per success"
             + ("" if r.hard_upper is None else f", {r.hard} hard failures (≤ {fmt_pct(r.hard_upper, 1)})")
             for r in d.rows]
    if d.choice is None:
        answer, tone = f"No version is chosen: {d.reason}.", "bad"
    else:
        p = "undefined" if d.p_wrong is None else f"{d.p_wrong:.2f}"
        answer, tone = (f"{_name(d.choice_label or d.choice[:12])} has the least expected loss under {d.table} "
                        f"(P(wrong choice) = {p})."), "neutral"
    losses = "; ".join(f"{r.label}: {money(r.expected_loss)}" + ("" if r.loss_low is None else
                       f" ({money(r.loss_low)}–{money(r.loss_high)})") for r in d.rows)
    return [HeadlineClaim(question="What does a success cost, and which version should ship?", answer=answer,
                          happened="; ".join(parts), infer=f"expected loss per task {losses}",
                          conditional_on=d.conditional_on or d.table, carried=NOTHING_CARRIED, section="decision",
                          tone=tone)]


def headline_from(data: ReportData) -> list[HeadlineClaim]:
    """The headline claims of ``data``: the comparison and where it sits, the bar per version,
    the luck rate; in that order, each only when its section holds data."""
    compared = _comparison_claims(data)
    return (compared[:1] + _leader_claim(data) + _decision_claim(data) + _boards_claim(data) + _luck_claim(data)
            + compared[1:])
