"""HTML for each report section: a heading, what the section shows, the chart, the numbers.

Every string that may have come from a run passes through :func:`esc`.
"""

from __future__ import annotations

import math

from collections.abc import Callable, Iterable, Iterator

from . import _charts as charts
from ._model import ReportData
from ..format import fmt_interval, natural_key
from ._svg import esc, fmt_count_share, fmt_p, fmt_pct, fmt_prob

#: section -> (heading, one sentence on what it shows)
TITLES: dict[str, tuple[str, str]] = {
    "paired": ("Paired view: A against B", ("Scenario by scenario, what moved between the two versions, "
               "strongest evidence first.")),
    "leaderboard": ("Leaderboard: many versions", ("Every version's pass rate on the strata all of them ran, "
                    "best first, with its interval, its rank interval and the groups that cannot be told apart.")),
    "decision": ("Decision: cost, severe failures, expected loss", ("Each version's pass rate beside what a "
                 "success costs, how often it broke a severe check (with an exact upper bound), and its expected "
                 "loss per task under the declared loss table; the version the table chooses is first.")),
    "suite_board": ("Suite board", ("Each scenario's pass rate as a credible interval against the bar, "
                    "coloured by the probability that the rate clears it. Worst first.")),
    "suite_questions": ("Suite questions", "What the per-scenario posteriors say about the whole suite."),
    "luck": ("Luck rate", "Of the runs whose output was right, how many got there on a path that broke the spec."),
    "judges": ("Judges", ("Each judge of these runs: how often it disagrees with itself, how it agrees with people, "
               "its pass rate corrected by their labels, and a pairwise judge's taste for the first slot.")),
    "contrasts": ("Contrasts", ("Each contrast's estimate with its interval; intervals that cross the dashed "
                  "no-effect line do not settle the sign.")),
    "comparison": ("Comparison: deaths by step", ("Where failed runs died (the event index), per arm, with "
                   "per-step q-values when the comparison was computed.")),
    "interventions": ("Interventions beside the comparison", ("What a declared change at a step of recorded "
                      "runs did to the pass rate over continuations re-executed through the simulator, next to "
                      "what the recorded versions show by observation.")),
    "null_calibration": ("Null calibration", ("p-values from pairs with no planted change: a calibrated test "
                         "gives a flat histogram and a false-alarm share near α.")),
    "boundary": ("Boundary chart", "What happened at each condition: works, should ask, fails, or not yet run."),
    "calibration": ("Calibration", "Predictions recorded before a batch, against what happened."),
    "explorer": ("Run explorer", ("Pick a run to read its trajectory; violations are marked at the event "
                 "where they happened. Trajectory text is shown as plain text, with secrets redacted.")),
}


def _cond(text: str) -> str:
    return f'<p class="cond"><b>Conditional on:</b> {esc(text)}</p>' if text else ""


_NUM = ' class="n"'


def _table(headers: list[str], rows: list[list[str]], numeric: set[int] = frozenset()) -> str:
    head = "".join(f'<th scope="col"{_NUM if i in numeric else ""}>{esc(h)}</th>' for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f'<td{_NUM if i in numeric else ""}>{esc(c)}</td>' for i, c in enumerate(row))
                   + "</tr>" for row in rows)
    return f'<table class="data"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _details(summary: str, inner: str) -> str:
    return f"<details><summary>{esc(summary)}</summary>{inner}</details>"


def _opened(summary: str, *inner: str) -> Iterator[str]:
    """:func:`_details` of the pieces ``inner``, a piece at a time (no copy of a large table or chart)."""
    yield f"<details><summary>{esc(summary)}</summary>"
    yield from inner
    yield "</details>"


def _chart(svg: str) -> str:
    return f'<div class="chart-wrap">{svg}</div>'


_LEGEND = ('<ul class="legend-row" aria-label="colour key for P(θ &gt; bar)">'
           '<li><span class="sw p4"></span>≥ 0.95</li><li><span class="sw p3"></span>0.80–0.95</li>'
           '<li><span class="sw p2"></span>0.50–0.80</li><li><span class="sw p1"></span>0.20–0.50</li>'
           '<li><span class="sw p0"></span>&lt; 0.20</li></ul>')


def _one_run_board(board) -> str:
    """One run per cell: every passed cell has the same posterior, and every failed one, so the
    board is two counts (with that posterior) and the list of failed cells, not a bar per cell."""
    failed = sorted((r for r in board.rows if r.successes == 0), key=lambda r: natural_key(_cell(r)))
    passed = [r for r in board.rows if r.successes == 1]
    chips = []
    for name, rows, tone in (("failed", failed, "bad"), ("passed", passed, "good")):
        if rows:
            r = rows[0]
            chips.append(f'<li class="mv tone-{tone}"><b>{len(rows)}</b> {name} <span class="sub">each: mean '
                         f'{r.mean:.3f}, {board.level:.0%} interval {r.lo:.3f}–{r.hi:.3f}, P(θ &gt; {board.bar:g}) '
                         f'{esc(fmt_prob(r.p_above_bar))}</span></li>')
    items = "".join(f"<li>{esc(_cell(r))}</li>" for r in failed)
    listing = _details(f"the {len(failed)} failed cells", f'<ul class="cells">{items}</ul>') if failed else ""
    return (f'<p class="sub">One run per scenario cell: each cell\'s posterior is one of two, so the board shows '
            f'counts.</p><ul class="moves one-run" data-board="{esc(board.version[:12])}" aria-label="cells by '
            f'outcome">{"".join(chips)}</ul>{listing}')


def family_groups(board, rows) -> tuple[str, dict[str, list]]:
    """``rows`` grouped for "show all": by the family tag their scenarios declare
    (``board.families``; undeclared ones under "(no family tag)") when any scenario of the board
    declares one, else by the scenario id's prefix before "/" (the rule before tags were read).
    Returns what the grouping is by, and family → rows."""
    groups: dict[str, list] = {}
    if board.families:
        for r in rows:
            groups.setdefault(board.families.get(r.scenario, ""), []).append(r)
        return "family tag", groups
    for r in rows:
        groups.setdefault(r.scenario.split("/", 1)[0] if "/" in r.scenario else "", []).append(r)
    return "scenario prefix", groups


def _board_charts(board, key: str) -> Iterator[str]:
    """The board's chart: the worst :data:`SHOW` cells, the rest behind "show all", grouped by
    family (:func:`family_groups`) when the rest holds more than one; a chart at a time."""
    rows = sorted(board.rows, key=lambda r: (r.p_above_bar, r.mean, natural_key(r.scenario)))
    shown, rest = rows[:SHOW], rows[SHOW:]
    out = charts.suite_board_chart(board.model_copy(update={"rows": shown}), key=key)
    if not rest:
        yield _chart(out)
        return
    yield f'<p class="sub">The {len(shown)} worst of {len(rows)} cells; the rest below.</p>' + _chart(out)
    yield f"<details><summary>{esc(f'show all {len(rows)} cells ({len(rest)} more)')}</summary>"
    by, families = family_groups(board, rest)
    if len(families) > 1:
        none = "(no family tag)" if by == "family tag" else "(no family)"
        yield f'<p class="sub">Grouped by {esc(by)}, each group worst first.</p>'
        for j, (fam, rs) in enumerate(sorted(families.items(), key=lambda kv: (kv[0] == "", natural_key(kv[0])))):
            yield (f'<h4 class="family" data-family="{esc(fam)}">{esc(fam or none)} ({len(rs)})</h4>'
                   '<div class="chart-wrap">')
            yield charts.suite_board_chart(board.model_copy(update={"rows": rs}), key=f"{key}-{j}")
            yield "</div>"
    else:
        yield '<div class="chart-wrap">'
        yield charts.suite_board_chart(board.model_copy(update={"rows": rest}), key=f"{key}-rest")
        yield "</div>"
    yield "</details>"


def suite_board(data: ReportData) -> Iterator[str]:
    """The boards, a piece at a time (a board of 10,000 cells is megabytes of HTML)."""
    for i, board in enumerate(data.suite_board or []):
        k = sum(r.successes for r in board.rows)
        n = sum(r.trials for r in board.rows)
        clear = sum(r.p_above_bar >= 0.95 for r in board.rows)
        yield (f'<h3>{esc(board.label)} <span class="mono sub">{esc(board.version[:12])}</span></h3>'
                   f'<p>{len(board.rows)} scenario cells, {esc(fmt_count_share(k, n))} runs passed; '
                   f'{clear} of {len(board.rows)} clear the bar {board.bar:g} with probability ≥ 0.95.</p>')
        if board.rows and all(r.trials == 1 for r in board.rows):
            yield _one_run_board(board) + _cond(board.conditional_on)
        else:
            yield _LEGEND
            yield from _board_charts(board, str(i))
            yield _cond(board.conditional_on)
        rows = [[r.scenario + (f" [{r.condition}]" if r.condition else ""), fmt_count_share(r.successes, r.trials),
                 f"{r.mean:.3f}", f"{r.lo:.3f}–{r.hi:.3f}", fmt_prob(r.p_above_bar)]
                for r in sorted(board.rows, key=lambda r: (r.p_above_bar, r.mean, natural_key(r.scenario)))]
        yield from _opened("the numbers", _table(["scenario", "passed", "mean", f"{board.level:.0%} interval",
                                                  f"P(θ > {board.bar:g})"], rows, {1, 2, 3, 4}))


#: Rows a board or paired chart shows before "show all".
SHOW = 50

_MOVE_TONE = {"broken": "bad", "worse": "bad", "fixed": "good", "better": "good"}


def _cell(r) -> str:
    return r.scenario + (f" [{r.condition}]" if r.condition else "")


def paired(data: ReportData) -> Iterator[str]:
    """The paired view, a piece at a time (its charts, then its table)."""
    view = data.paired
    assert view is not None
    chips = "".join(f'<li class="mv tone-{_MOVE_TONE.get(m, "neutral")}"><b>{n}</b> {esc(m)}</li>'
                    for m, n in view.counts.items())
    out = [f'<p>A = <b>{esc(view.label_a)}</b> <span class="mono sub">{esc(view.version_a[:12])}</span>, '
           f'B = <b>{esc(view.label_b)}</b> <span class="mono sub">{esc(view.version_b[:12])}</span>; '
           f'{len(view.rows)} scenario cells in both'
           + ('' if view.single_run else '; hollow circle A, filled circle B')
           + f'.</p><ul class="moves" aria-label="scenario cells by move">{chips}</ul>']
    if view.single_run:
        for move in view.counts:
            cells = [r for r in view.rows if r.move == move]
            if not cells:
                continue
            items = "".join(f"<li>{esc(_cell(r))}</li>" for r in cells)
            body = f'<ul class="cells">{items}</ul>'
            out.append(f"<h3>{esc(move)} ({len(cells)})</h3>{body}" if move in ("broken", "fixed")
                       else _details(f"{move}: {len(cells)} cells", body))
        yield "".join(out) + _cond(view.conditional_on)
        return
    shown, rest = view.rows[:SHOW], view.rows[SHOW:]
    yield "".join(out) + _chart(charts.paired_chart(shown, label_a=view.label_a, label_b=view.label_b))
    if rest:
        yield from _opened(f"show all {len(view.rows)} cells ({len(rest)} more, weaker evidence)",
                           '<div class="chart-wrap">',
                           charts.paired_chart(rest, label_a=view.label_a, label_b=view.label_b, key="rest"), "</div>")
    yield _cond(view.conditional_on)
    rows = [[_cell(r), f"{r.passes_a}/{r.runs_a}", f"{r.passes_b}/{r.runs_b}", f"{100 * r.shift:+.1f}",
             fmt_prob(r.p_b_better), r.move] for r in view.rows]
    yield from _opened("the numbers", _table(
        ["scenario", "A passed", "B passed", "shift (points)", "P(θ_B > θ_A)", "move"], rows, {1, 2, 3, 4}))


def leaderboard(data: ReportData) -> str:
    lb = data.leaderboard
    assert lb is not None
    letter = {r.label: r.group for r in lb.rows}
    groups = ("" if not lb.groups else "<p>Groups (no pair inside found different): " + esc("; ".join(
        f"{letter.get(g[0]) or '?'} = {', '.join(g)}" for g in lb.groups)) + ".</p>")
    level = f"{lb.level:.0%}"
    rows = [[str(r.rank), r.label, f"{r.rate:.1f} ({r.passes}/{r.trials})", f"{r.low:.1f}–{r.high:.1f}",
             f"{r.rank_low}–{r.rank_high}", fmt_prob(r.p_first), r.group or "—"] for r in lb.rows]
    return (f"<p>{len(lb.rows)} versions on {lb.strata} strata ({lb.scenarios} scenarios).</p>" + groups
            + _chart(charts.leaderboard_chart(lb)) + _cond(lb.conditional_on)
            + _details("the numbers", _table(["rank", "version", "pass rate", f"{level} interval", f"rank {level}",
                                              "P(first)", "group"], rows, {0, 2, 3, 4, 5})))


def _money(x: float | None) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:.4f}"


def decision(data: ReportData) -> str:
    d = data.decision
    assert d is not None
    if d.choice is None:
        head = f"<p><b>No version is chosen:</b> {esc(d.reason or 'none is eligible')}.</p>"
    else:
        head = (f"<p>The table <b>{esc(d.table)}</b> chooses <b>{esc(d.choice_label or d.choice[:12])}</b>; "
                f"P(wrong choice) {esc(fmt_prob(d.p_wrong))}.</p>")
    def with_interval(x, lo, hi) -> str:
        return _money(x) + ("" if lo is None else f" ({_money(lo)}–{_money(hi)})")

    rows = [[r.label, fmt_count_share(r.passes, r.runs), with_interval(r.cost_per_success, r.cost_low, r.cost_high),
             str(r.unknown_cost), "—" if r.hard_upper is None else f"{r.hard} (≤ {fmt_pct(r.hard_upper, 1)})",
             with_interval(r.expected_loss, r.loss_low, r.loss_high),
             fmt_prob(r.p_best) if r.eligible else f"out: {r.why_not}"] for r in d.rows]
    severe = "".join(f"<li>{esc(r.label)}: {esc('; '.join(r.severe))}</li>" for r in d.rows if r.severe)
    return (head + _table(["version", "passed", "cost per success", "no cost", "hard failures", "expected loss",
                           "P(best)"], rows, {1, 2, 3, 4, 5, 6})
            + (f'<ul class="cells">{severe}</ul>' if severe else "") + _cond(d.conditional_on))


def suite_questions(data: ReportData) -> str:
    out = []
    for block in data.suite_questions or []:
        items = "".join(f'<dt>{esc(q.name)}</dt><dd><span class="v">{esc(q.display)}</span>'
                        f'<br><span class="sub">conditional on {esc(q.conditional_on)}</span></dd>'
                        for q in block.questions)
        out.append(f'<h3>{esc(block.label)} <span class="mono sub">{esc(block.version[:12])}</span></h3>'
                   f'<dl class="questions">{items}</dl>')
    return "".join(out)


def luck(data: ReportData) -> str:
    out = []
    for luck in data.luck or []:
        rows = [[c.case, fmt_count_share(c.lucky, c.green),
                 "—" if c.lo is None else f"{fmt_pct(c.lo)}–{fmt_pct(c.hi)}"] for c in luck.cases]
        if luck.pooled:
            p = luck.pooled
            rows.append(["all cases (pooled)", fmt_count_share(p.lucky, p.green),
                         "—" if p.lo is None else f"{fmt_pct(p.lo)}–{fmt_pct(p.hi)}"])
        spec = f' <span class="sub">graded against spec {esc(luck.spec)}</span>' if luck.spec else ""
        out.append((f'<h3>{esc(luck.label)} <span class="mono sub">{esc(luck.version[:12])}</span>{spec}</h3>'
                    if luck.label or luck.version else "")
                   + (f'<p class="missing">{esc(luck.warning)}</p>' if luck.warning else "")
                   + _chart(charts.luck_chart(luck)) + _cond(luck.conditional_on)
                   + _details("the numbers", _table(["case", "lucky of green", "interval"], rows, {1, 2})))
    return "".join(out)


def _figure(f, *, percent: bool = True, points: bool = False) -> str:
    """A figure and its interval, or "too small to tell" (the judge verbs' Estimate, as data)."""
    if f is None or f.value is None:
        return "too small to tell"
    if points:
        ends = "" if f.low is None else f" [{f.low:+.1f}, {f.high:+.1f}]"
        return f"{f.value:+.1f} points{ends}"
    if percent:
        return fmt_pct(f.value, 1) + ("" if f.low is None else f" {fmt_interval(f.low, f.high, percent=True)}")
    return f"{f.value:.3f}" + ("" if f.low is None else f" {fmt_interval(f.low, f.high)}")


def judges(data: ReportData) -> str:
    out = []
    for j in (data.judges.judges if data.judges else []):
        rows = [["judged runs", str(j.judged)]]
        if j.pass_rate is not None:
            rows.append(["judge pass rate", fmt_pct(j.pass_rate, 1)])
        if j.flips is not None:
            rows.append([f"runs whose label flips over K = {j.replicates}", _figure(j.flips)])
            rows.append(["Krippendorff's alpha", _figure(j.alpha, percent=False)])
        if j.first_slot is not None:
            rows.append(["share choosing the first slot (0.5: no bias)", _figure(j.first_slot, percent=False)])
            rows.append(["share preferring a", _figure(j.a_share, percent=False)])
        a = j.audit
        if a is not None:
            rows += [["human labels", f"{a.labelled} of {a.population} judged runs"],
                     ["Cohen's kappa with people", _figure(a.kappa, percent=False)
                      + ("" if a.human_rate is None else f" at a human pass rate of {fmt_pct(a.human_rate, 1)}")],
                     ["raw agreement", _figure(a.agreement)],
                     ["judge bias", _figure(a.bias_points, points=True)],
                     ["pass rate corrected (PPI++)", _figure(a.corrected)],
                     ["pass rate, human labels only", _figure(a.human_only)],
                     ["pass rate, judge only (assumes the judge is right)", _figure(a.judge_only)],
                     ["may this judge gate?", f"{a.may_gate}: {a.reason}"]]
        kind = ' <span class="sub">pairwise</span>' if j.pairwise else ""
        out.append(f'<h3>{esc(j.model)} <span class="mono sub">{esc(j.digest[:12])}</span>{kind}</h3>'
                   + _table(["figure", "value"], rows, {1})
                   + _cond(j.conditional_on))
    return "".join(out)


def contrasts(data: ReportData) -> str:
    forest = data.contrasts
    assert forest is not None
    rows = [[c.label, f"{c.estimate:+.4g}", f"{c.lo:.4g}", f"{c.hi:.4g}"] for c in forest.contrasts]
    return (_chart(charts.forest_chart(forest)) + _cond(forest.conditional_on)
            + _details("the numbers", _table(["contrast", forest.measure, "low", "high"], rows, {1, 2, 3})))


def _p_phrase(p: float | None) -> str:
    """'p = 0.031', or 'p < 0.001' at the floor (never 'p = <0.001')."""
    text = fmt_p(p)
    return f"p {text[0]} {text[1:]}" if text.startswith("<") else f"p = {text}"


def comparison(data: ReportData) -> str:
    cmp_ = data.comparison
    assert cmp_ is not None
    if cmp_.verdict is not None:
        limit = ("—" if cmp_.detection_limit is None or not math.isfinite(cmp_.detection_limit)
                 else f"{cmp_.detection_limit:.1f} points")
        ceiling = "" if cmp_.ceiling is None else f" (declared ceiling {cmp_.ceiling:g})"
        said = (esc(cmp_.limit_text) if cmp_.limit_text else
                f'could not have detected a difference in pass rate below <strong>{esc(limit)}</strong>{esc(ceiling)}')
        verdict = (f'<div class="verdict" role="status"><strong>{esc(cmp_.verdict)}</strong> · '
                   f'{esc(_p_phrase(cmp_.pvalue))} · {said}</div>')
    else:
        verdict = ('<p class="missing">Verdict not computed: this report shows deaths by step only '
                   '(the stratified log-rank comparison was not run).</p>')
    labelled = cmp_.step_labels is not None and any(cmp_.step_labels)
    headers = (["step"] + (["what died there"] if labelled else []) + [f"{a.label}: deaths" for a in cmp_.arms]
               + (["q-value"] if cmp_.qvalues is not None else []))
    rows = []
    for j, step in enumerate(cmp_.steps):
        row = ([str(step)] + ([cmp_.step_labels[j] or "—"] if labelled else [])
               + [str(a.deaths[j]) for a in cmp_.arms])
        if cmp_.qvalues is not None:
            row.append(fmt_p(cmp_.qvalues[j]))
        rows.append(row)
    arms = "; ".join(f"{a.label}: {sum(a.deaths)} deaths in {a.runs} runs" for a in cmp_.arms)
    note = f"<p>{esc(cmp_.note)}</p>" if cmp_.note else ""
    closing = ('<p class="closing">A difference between two stored runs is a difference between those runs; '
               'reading it as a difference between versions assumes the runs represent them.</p>'
               if len(cmp_.arms) > 1 else "")
    return (verdict + f"<p>{esc(arms)}.</p>" + note + _chart(charts.deaths_chart(cmp_)) + _cond(cmp_.conditional_on)
            + _details("deaths and q-values by step",
                       _table(headers, rows, set(range(2 if labelled else 1, len(headers))))) + closing)


def _points(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:+.1f}"


def interventions(data: ReportData) -> str:
    section = data.interventions
    assert section is not None
    rows = []
    for r in section.rows:
        interval = "—" if r.low is None or r.high is None else f"[{_points(r.low)}, {_points(r.high)}]"
        factor = "—" if r.variance_factor is None else f"{r.variance_factor:.2f}"
        rows.append([f"{r.description}{' (stale reuse FORCED: biased)' if r.stale else ''}", str(r.step),
                     f"{r.baseline}: {fmt_count_share(r.baseline_passes, r.baseline_trials)}",
                     f"{r.intervened}: {fmt_count_share(r.intervened_passes, r.intervened_trials)}",
                     f"{_points(r.effect)} {interval}" + (f" ({r.reason})" if r.reason else ""), r.target, factor])
    observed = (f"<p>Observational comparison: <strong>{esc(section.observational)}</strong>.</p>"
                if section.observational else
                '<p class="missing">No observational comparison in this report (it needs two versions).</p>')
    headers = ["intervention", "step", "baseline arm", "intervened arm", "effect, points [interval]", "target",
               "variance factor"]
    return (observed + _table(headers, rows, {1, 4, 6})
            + '<p class="closing">An intervention\'s effect is conditional on the recorded prefix of the runs it '
              'continued; an observational difference between two versions also carries whatever else differed '
              'between their runs.</p>')


def null_calibration(data: ReportData) -> str:
    null = data.null_calibration
    assert null is not None
    interval = "" if null.lo is None else f" (interval {fmt_pct(null.lo, 1)}–{fmt_pct(null.hi, 1)})"
    return (f"<p>False alarms at α = {null.alpha:g}: <strong>{esc(fmt_count_share(null.false_alarms, null.pairs))}"
            f"</strong>{esc(interval)}.</p>" + _chart(charts.pvalue_histogram(null)) + _cond(null.conditional_on))


def boundary(data: ReportData) -> str:
    out = []
    for i, b in enumerate(data.boundary or []):
        regions = any(c.region for c in b.cells)
        head = ["condition", "status", "works", "should ask", "fails", "errors", "runs"]
        rows = [[c.condition or "(no condition)", c.status, str(c.works), str(c.should_ask), str(c.fails),
                 str(c.errors), str(c.trials)] for c in b.cells]
        if regions:
            head = ["condition", "region", "colour", "settle by", *head[2:]]
            rows = [[r[0], c.region or "", c.colour or "—", c.label or "", *r[2:]]
                    for r, c in zip(rows, b.cells, strict=True)]
        rows += [[n.condition, "never named", "—", f"{n.incidents} incident(s)", "", "", "", "", "0"]
                 for n in b.never_named]
        rule = f'<p class="sub">{esc(b.rule)}</p>' if b.rule else ""
        out.append(f'<h3>{esc(b.label)} <span class="mono sub">{esc(b.version[:12])}</span></h3>' + rule
                   + _chart(charts.boundary_chart(b, key=str(i))) + _cond(b.conditional_on)
                   + _details("the numbers", _table(head, rows, set(range(len(head) - 5, len(head))))))
    return "".join(out)


def calibration(data: ReportData) -> str:
    cal = data.calibration
    assert cal is not None
    brier = "" if cal.brier is None else (
        f"<p>Brier score <strong>{cal.brier:.3f}</strong> over {cal.n} forecasts"
        + ("" if cal.baseline_brier is None else
           f"; always predicting the average scores {cal.baseline_brier:.3f} (lower is better)") + ".</p>")
    rows = [[f"{b.lo:.2f}–{b.hi:.2f}", f"{b.mean_forecast:.3f}", f"{b.observed_share:.3f}", str(b.n)] for b in cal.bins]
    return (brier + _chart(charts.calibration_chart(cal)) + _cond(cal.conditional_on)
            + _details("the numbers", _table(["bin", "mean forecast", "observed share", "n"], rows, {1, 2, 3})))


def explorer(data: ReportData) -> str:
    ex = data.explorer
    assert ex is not None
    shown = (f"The explorer shows {len(ex.runs):,} of {ex.total:,} runs" + (f": {ex.rule}." if ex.rule else ".")
             if ex.total > len(ex.runs) else f"{len(ex.runs):,} runs.")
    return (f'<p class="explorer-note">{esc(shown)}</p><div class="explorer"><div>'
            '<label for="run-filter" class="sub">Filter by scenario, version or outcome</label>'
            '<input id="run-filter" type="search" autocomplete="off" placeholder="e.g. fail">'
            '<p id="run-count" class="sub" aria-live="polite"></p><ul id="run-list" aria-label="runs"></ul></div>'
            '<div id="run-detail" aria-live="polite"><p class="hint">Select a run to read its trajectory.</p>'
            '</div></div><noscript><p class="missing">The run explorer needs JavaScript; the rest of the '
            'report does not.</p></noscript>')


#: Section → its renderer: the section's HTML, as one string or a piece at a time.
RENDERERS: dict[str, Callable[[ReportData], str | Iterable[str]]] = {
    "paired": paired, "leaderboard": leaderboard, "decision": decision,
    "suite_board": suite_board, "suite_questions": suite_questions, "luck": luck, "judges": judges,
    "contrasts": contrasts,
    "comparison": comparison, "interventions": interventions, "null_calibration": null_calibration,
    "boundary": boundary,
    "calibration": calibration, "explorer": explorer,
}
