"""HTML for each report section: a heading, what the section shows, the chart, the numbers.

Every string that may have come from a run passes through :func:`esc`.
"""

from __future__ import annotations

import math

from collections.abc import Callable

from . import _charts as charts
from ._model import ReportData
from ..format import natural_key
from ._svg import esc, fmt_count_share, fmt_p, fmt_pct, fmt_prob

#: section -> (heading, one sentence on what it shows)
TITLES: dict[str, tuple[str, str]] = {
    "suite_board": ("Suite board", ("Each scenario's pass rate as a credible interval against the bar, "
                    "coloured by the probability that the rate clears it. Worst first.")),
    "suite_questions": ("Suite questions", "What the per-scenario posteriors say about the whole suite."),
    "luck": ("Luck rate", "Of the runs whose output was right, how many got there on a path that broke the spec."),
    "contrasts": ("Contrasts", ("Each contrast's estimate with its interval; intervals that cross the dashed "
                  "no-effect line do not settle the sign.")),
    "comparison": ("Comparison: deaths by step", ("Where failed runs died (the event index), per arm, with "
                   "per-step q-values when the comparison was computed.")),
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


def _chart(svg: str) -> str:
    return f'<div class="chart-wrap">{svg}</div>'


_LEGEND = ('<ul class="legend-row" aria-label="colour key for P(θ &gt; bar)">'
           '<li><span class="sw p4"></span>≥ 0.95</li><li><span class="sw p3"></span>0.80–0.95</li>'
           '<li><span class="sw p2"></span>0.50–0.80</li><li><span class="sw p1"></span>0.20–0.50</li>'
           '<li><span class="sw p0"></span>&lt; 0.20</li></ul>')


def suite_board(data: ReportData) -> str:
    out = []
    for i, board in enumerate(data.suite_board or []):
        k = sum(r.successes for r in board.rows)
        n = sum(r.trials for r in board.rows)
        clear = sum(r.p_above_bar >= 0.95 for r in board.rows)
        out.append(f'<h3>{esc(board.label)} <span class="mono sub">{esc(board.version[:12])}</span></h3>'
                   f'<p>{len(board.rows)} scenario cells, {esc(fmt_count_share(k, n))} runs passed; '
                   f'{clear} of {len(board.rows)} clear the bar {board.bar:g} with probability ≥ 0.95.</p>')
        out.append(_LEGEND + _chart(charts.suite_board_chart(board, key=str(i))) + _cond(board.conditional_on))
        rows = [[r.scenario + (f" [{r.condition}]" if r.condition else ""), fmt_count_share(r.successes, r.trials),
                 f"{r.mean:.3f}", f"{r.lo:.3f}–{r.hi:.3f}", fmt_prob(r.p_above_bar)]
                for r in sorted(board.rows, key=lambda r: (r.p_above_bar, r.mean, natural_key(r.scenario)))]
        out.append(_details("the numbers", _table(["scenario", "passed", "mean", f"{board.level:.0%} interval",
                                                   f"P(θ > {board.bar:g})"], rows, {1, 2, 3, 4})))
    return "".join(out)


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
    luck = data.luck
    assert luck is not None
    rows = [[c.case, fmt_count_share(c.lucky, c.green),
             "—" if c.lo is None else f"{fmt_pct(c.lo)}–{fmt_pct(c.hi)}"] for c in luck.cases]
    if luck.pooled:
        p = luck.pooled
        rows.append(["all cases (pooled)", fmt_count_share(p.lucky, p.green),
                     "—" if p.lo is None else f"{fmt_pct(p.lo)}–{fmt_pct(p.hi)}"])
    return (_chart(charts.luck_chart(luck)) + _cond(luck.conditional_on)
            + _details("the numbers", _table(["case", "lucky of green", "interval"], rows, {1, 2})))


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
        verdict = (f'<div class="verdict" role="status"><strong>{esc(cmp_.verdict)}</strong> · {esc(_p_phrase(cmp_.pvalue))}'
                   f' · could not have detected a difference in pass rate below <strong>{esc(limit)}</strong>{esc(ceiling)}</div>')
    else:
        verdict = ('<p class="missing">Verdict not computed: this report shows deaths by step only '
                   '(the stratified log-rank comparison was not run).</p>')
    labelled = cmp_.step_labels is not None and any(cmp_.step_labels)
    headers = ["step"] + (["what died there"] if labelled else []) + [f"{a.label}: deaths" for a in cmp_.arms] + (["q-value"] if cmp_.qvalues is not None else [])
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
            + _details("deaths and q-values by step", _table(headers, rows, set(range(2 if labelled else 1, len(headers))))) + closing)


def null_calibration(data: ReportData) -> str:
    null = data.null_calibration
    assert null is not None
    interval = "" if null.lo is None else f" (interval {fmt_pct(null.lo, 1)}–{fmt_pct(null.hi, 1)})"
    return (f"<p>False alarms at α = {null.alpha:g}: <strong>{esc(fmt_count_share(null.false_alarms, null.pairs))}"
            f"</strong>{esc(interval)}.</p>" + _chart(charts.pvalue_histogram(null)) + _cond(null.conditional_on))


def boundary(data: ReportData) -> str:
    out = []
    for i, b in enumerate(data.boundary or []):
        rows = [[c.condition or "(no condition)", c.status, str(c.works), str(c.should_ask), str(c.fails),
                 str(c.errors), str(c.trials)] for c in b.cells]
        out.append(f'<h3>{esc(b.label)} <span class="mono sub">{esc(b.version[:12])}</span></h3>'
                   + _chart(charts.boundary_chart(b, key=str(i))) + _cond(b.conditional_on)
                   + _details("the numbers", _table(["condition", "status", "works", "should ask", "fails",
                                                     "errors", "runs"], rows, {2, 3, 4, 5, 6})))
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
    capped = (f" The ledger holds {ex.total} selected runs; the first {len(ex.runs)} are included."
              if ex.total > len(ex.runs) else "")
    return (f'<p>{len(ex.runs)} runs.{esc(capped)}</p><div class="explorer"><div>'
            '<label for="run-filter" class="sub">Filter by scenario, version or outcome</label>'
            '<input id="run-filter" type="search" autocomplete="off" placeholder="e.g. fail">'
            '<p id="run-count" class="sub" aria-live="polite"></p><ul id="run-list" aria-label="runs"></ul></div>'
            '<div id="run-detail" aria-live="polite"><p class="hint">Select a run to read its trajectory.</p>'
            '</div></div><noscript><p class="missing">The run explorer needs JavaScript; the rest of the '
            'report does not.</p></noscript>')


RENDERERS: dict[str, Callable[[ReportData], str]] = {
    "suite_board": suite_board, "suite_questions": suite_questions, "luck": luck, "contrasts": contrasts,
    "comparison": comparison, "null_calibration": null_calibration, "boundary": boundary,
    "calibration": calibration, "explorer": explorer,
}
