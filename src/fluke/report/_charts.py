"""The report's charts, each a pure function from a model section to an inline SVG string.

>>> from fluke.report._model import ForestRow, Forest
>>> svg = forest_chart(Forest(contrasts=[ForestRow(label="memory on", estimate=0.1, lo=-0.02, hi=0.22)]))
>>> svg.startswith("<svg") and 'data-chart="contrasts"' in svg
True
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from ..format import fmt_is, natural_key
from ._model import (Boundary, Calibration, Comparison, Forest, LeaderboardSection, LuckSection, NullSection, PairedRow,
                     SuiteBoard)
from ._svg import Scale, Svg, distinct, fmt_count_share, fmt_pct, fmt_prob, middle

#: Characters of a row label an SVG chart shows (the rest: hover, and the table below).
LABEL = 34

WIDTH = 900
ROW = 22

#: Lower edges of the P(θ > bar) colour bins, highest first: class p4 (≥ 0.95) … p0 (< 0.2).
PROB_BINS = (0.95, 0.8, 0.5, 0.2)


def prob_class(p: float) -> str:
    """The colour class for a probability of clearing the bar.

    >>> prob_class(0.97), prob_class(0.47), prob_class(0.01)
    ('p4', 'p1', 'p0')
    """
    for i, edge in enumerate(PROB_BINS):
        if p >= edge:
            return f"p{4 - i}"
    return "p0"



def _pct_axis(v: float) -> str:
    return f"{100 * v:.0f}%"


def suite_board_chart(board: SuiteBoard, *, key: str = "0") -> str:
    """Each scenario's credible interval against the bar, coloured by P(θ > bar), worst first."""
    rows = sorted(board.rows, key=lambda r: (r.p_above_bar, r.mean, natural_key(r.scenario), natural_key(r.condition)))
    left, right, top = 250, WIDTH - 170, 26
    height = top + ROW * len(rows) + 44
    x = Scale(0.0, 1.0, left, right)
    svg = Svg(WIDTH, height, chart=f"suite-board-{key}",
              title=f"Suite board for {board.label}: {len(rows)} scenario cells against the bar {board.bar:g}",
              desc=f"{board.level:.0%} credible intervals of each scenario's pass rate; colour by P(θ > bar)")
    bottom = top + ROW * len(rows)
    for i in range(0, len(rows), 2):  # stripes first, so grid, bar and marks sit on top of them
        svg.rect(0, top + ROW * i, WIDTH, ROW, class_="stripe")
    svg.x_axis(x, bottom + 4, ticks=x.ticks(5), fmt=_pct_axis, label="pass rate θ", grid_top=top - 6)
    svg.line(x(board.bar), top - 10, x(board.bar), bottom + 4, class_="bar-line")
    svg.text(x(board.bar), top - 14, f"bar {board.bar:g}", anchor="middle", class_="bar-label")
    svg.text(WIDTH - 4, top - 14, "passes · P(θ > bar)", anchor="end", class_="col-head")
    names = [r.scenario + (f" [{r.condition}]" if r.condition else "") for r in rows]
    for i, (r, name, shown) in enumerate(zip(rows, names, distinct(names, LABEL), strict=True)):
        cy = top + ROW * i + ROW / 2
        tip = (f"{name}: {r.successes}/{r.trials} passed; mean {r.mean:.3f}; "
               f"{board.level:.0%} interval {r.lo:.3f}–{r.hi:.3f}; P(θ > {board.bar:g}) = {r.p_above_bar:.3f}")
        svg.text(6, cy + 4, shown, tip=tip)
        cls = prob_class(r.p_above_bar)
        svg.rect(x(r.lo), cy - 4, x(r.hi) - x(r.lo), 8, class_=f"iv {cls}", tip=tip)
        svg.circle(x(r.mean), cy, 4.5, class_=f"pt {cls}", tip=tip)
        svg.text(right + 60, cy + 4, f"{r.successes}/{r.trials}", anchor="end", class_="num")
        svg.text(WIDTH - 4, cy + 4, fmt_prob(r.p_above_bar, 2), anchor="end", class_=f"num prob {cls}-text")
    return svg.render()


def luck_chart(luck: LuckSection) -> str:
    """Luck rate per case (lucky / green) with its interval; '—' where nothing was green."""
    cases = list(luck.cases) + ([luck.pooled] if luck.pooled else [])
    left, right, top = 250, WIDTH - 190, 14
    height = top + ROW * len(cases) + 44
    x = Scale(0.0, 1.0, left, right)
    svg = Svg(WIDTH, height, chart="luck", title=f"Luck rate for {len(luck.cases)} cases",
              desc="share of green (output-ok) runs whose path was not ok, with counts")
    bottom = top + ROW * len(cases)
    svg.x_axis(x, bottom + 4, ticks=x.ticks(5), fmt=_pct_axis, label="luck rate", grid_top=top)
    shown = distinct([c.case for c in luck.cases], LABEL) + ["all cases (pooled)"]
    for i, c in enumerate(cases):
        cy = top + ROW * i + ROW / 2
        pooled = luck.pooled is not None and i == len(cases) - 1
        svg.text(6, cy + 4, shown[i],
                 class_="lbl strong" if pooled else "lbl", tip=c.case)
        text = f"{fmt_pct(c.share)} ({c.lucky}/{c.green} green)"
        if c.share is None:
            svg.text(left + 4, cy + 4, "— nothing green, no luck to measure", class_="muted")
        else:
            svg.rect(left, cy - 5, x(c.share) - left, 10, class_="luck-bar", tip=text)
            if c.lo is not None and c.hi is not None:
                svg.line(x(c.lo), cy, x(c.hi), cy, class_="whisker")
        svg.text(WIDTH - 4, cy + 4, text, anchor="end", class_="num")
    return svg.render()


def forest_chart(forest: Forest) -> str:
    """Contrasts as points with interval whiskers against the no-effect line."""
    rows = forest.contrasts
    lo = min([c.lo for c in rows] + [forest.null_value])
    hi = max([c.hi for c in rows] + [forest.null_value])
    pad = (hi - lo) * 0.08 or 0.1
    left, right, top = 250, WIDTH - 170, 14
    height = top + ROW * len(rows) + 44
    x = Scale(lo - pad, hi + pad, left, right)
    svg = Svg(WIDTH, height, chart="contrasts", title=f"Forest plot of {len(rows)} contrasts ({forest.measure})",
              desc="estimate and interval per contrast; the dashed line is no effect")
    bottom = top + ROW * len(rows)
    svg.x_axis(x, bottom + 4, ticks=x.ticks(6), label=forest.measure, grid_top=top)
    svg.line(x(forest.null_value), top - 4, x(forest.null_value), bottom + 4, class_="null-line")
    for i, c in enumerate(rows):
        cy = top + ROW * i + ROW / 2
        clear = c.lo > forest.null_value or c.hi < forest.null_value
        cls = "clear" if clear else "unclear"
        tip = f"{c.label}: {c.estimate:.3g} [{c.lo:.3g}, {c.hi:.3g}]"
        svg.text(6, cy + 4, middle(c.label, LABEL), tip=tip)
        svg.line(x(c.lo), cy, x(c.hi), cy, class_=f"whisker {cls}")
        svg.rect(x(c.estimate) - 4.5, cy - 4.5, 9, 9, class_=f"est {cls}", tip=tip)
        svg.text(WIDTH - 4, cy + 4, f"{c.estimate:+.3g} [{c.lo:.3g}, {c.hi:.3g}]", anchor="end", class_="num")
    return svg.render()


def deaths_chart(comparison: Comparison) -> str:
    """Deaths at each step, one bar per arm, each step placed at its value (56, 61 and 102 are not
    evenly spaced) and named by what died there when one tool dominates; steps whose q-value clears
    alpha are marked."""
    steps, arms = comparison.steps, comparison.arms
    names = comparison.step_labels or [None] * len(steps)
    left, right, top, plot_h = 56, WIDTH - 12, 16, 220
    ymax = max([max(a.deaths, default=0) for a in arms] + [1])
    y = Scale(0.0, float(ymax) * 1.08, top + plot_h, top)
    lo, hi = (min(steps), max(steps)) if steps else (0, 1)
    x = Scale(lo - 0.5, hi + 0.5, left + 8, right - 8)
    unit = (x.r1 - x.r0) / max(hi - lo + 1, 1)  # pixels per step
    gap = min([b - a for a, b in pairwise(steps)] + [1]) * unit
    bar = max(min(gap * 0.8 / len(arms), 22), 1.5)
    qstrip = comparison.qvalues is not None
    named = any(names)
    height = top + plot_h + (62 if qstrip else 44) + (14 if named else 0) + 6 + 16 * len(arms)
    svg = Svg(WIDTH, height, chart="comparison",
              title="Deaths by step: " + " vs ".join(a.label for a in arms),
              desc="number of failed runs that died at each event index, per arm; steps placed at their values")
    ticks = [t for t in y.ticks(5) if abs(t - round(t)) < 1e-9]
    svg.y_axis(y, left, ticks=ticks, fmt=lambda v: f"{v:.0f}", label="deaths", grid_right=right)
    base = top + plot_h
    last_label = -1e9
    for j, step in enumerate(steps):
        cx = x(step)
        x0 = cx - bar * len(arms) / 2
        what = f" ({names[j]})" if names[j] else ""
        for a, arm in enumerate(arms):
            d = arm.deaths[j]
            svg.rect(x0 + a * bar, y(d), bar - 0.5, base - y(d), class_=f"arm{a}",
                     tip=f"{arm.label}: {d} of {arm.runs} runs died at step {step}{what}")
        room = 64 if named else 26
        if cx - last_label >= room:  # a label only where it does not collide with the previous one
            svg.text(cx, base + 15, str(step), anchor="middle", class_="tick")
            if names[j]:
                after = x(steps[j + 1]) - cx if j + 1 < len(steps) else 2 * (right - cx)
                before = cx - last_label if last_label > -1e8 else 2 * (cx - left + 40)
                fits = int(min(after - 6, before - 6, 170) / 6.2)  # 11px labels, about 6 px a character
                svg.text(cx, base + 28, middle(names[j], max(fits, 8)), anchor="middle", class_="tick tool",
                         tip=f"step {step}: {names[j]}")
            last_label = cx
    svg.line(left, base, right, base, class_="axis")
    strip = base + (36 if named else 22)
    label_y = strip + 10
    if qstrip:
        for j, q in enumerate(comparison.qvalues or []):
            hit = q is not None and q < comparison.alpha
            w = max(min(gap, 24) - 2, 2)
            svg.rect(x(steps[j]) - w / 2, strip, w, 10, class_="q-hit" if hit else "q-cell",
                     tip=f"step {steps[j]}{f' ({names[j]})' if names[j] else ''}: {fmt_is('q', q, kind='p')}")
        svg.text(left - 6, strip + 9, "q", anchor="end", class_="tick")
        label_y = strip + 28
    svg.text((left + right) / 2, label_y, "step (event index where the run died" + (", and the tool called there)"
             if named else ")"), anchor="middle", class_="axis-label")
    for a, arm in enumerate(arms):  # one line per arm, so long labels never run off the chart
        ly = height - 16 * (len(arms) - a) + 12
        svg.rect(left, ly - 9, 10, 10, class_=f"arm{a}")
        svg.text(left + 14, ly, f"{middle(arm.label, 80)} ({sum(arm.deaths)} deaths in {arm.runs} runs)",
                 class_="legend", tip=arm.label)
    return svg.render()


def pvalue_histogram(null: NullSection) -> str:
    """Histogram of null p-values against the flat line a calibrated test gives."""
    counts = np.asarray(null.histogram, dtype=int)
    bins = len(counts)
    edges = np.linspace(0.0, 1.0, bins + 1)
    left, right, top, plot_h = 56, WIDTH - 12, 16, 200
    total = int(counts.sum())
    expected = total / bins
    y = Scale(0.0, float(max(counts.max(initial=0), expected, 1) * 1.1), top + plot_h, top)
    x = Scale(0.0, 1.0, left, right)
    svg = Svg(WIDTH, top + plot_h + 46, chart="null-calibration",
              title=f"p-values of {total} unchanged pairs",
              desc="a calibrated test gives a flat histogram; the dashed line is the flat expectation")
    svg.y_axis(y, left, ticks=[t for t in y.ticks(5) if t == int(t)], fmt=lambda v: f"{v:.0f}",
               label="pairs", grid_right=right)
    svg.rect(x(0), top, x(null.alpha) - x(0), plot_h, class_="alpha-zone", tip=f"p < α = {null.alpha:g}")
    for c, a, b in zip(counts, edges[:-1], edges[1:], strict=True):
        svg.rect(x(a) + 1, y(c), x(b) - x(a) - 2, y(0) - y(c), class_="hist",
                 tip=f"{c} p-values in [{a:.2f}, {b:.2f})")
    svg.line(x(0), y(expected), x(1), y(expected), class_="null-line")
    svg.x_axis(x, top + plot_h, ticks=x.ticks(10), label="p-value")
    return svg.render()


_SEGMENTS = (("works", "works"), ("should_ask", "ask"), ("fails", "fails"), ("errors", "errors"))


_REGION_TEXT = {"works": "works", "uncertain": "uncertain", "fails": "fails", "not run": "named, not run"}


def boundary_chart(boundary: Boundary, *, key: str = "0") -> str:
    """Each condition's outcomes as a stacked bar: works, should ask, fails, errors; or not yet run.

    When the regions were called (a condition space was charted), each row starts with its region's
    mark (works, uncertain, fails, named but not run), and incidents at conditions the space never
    named get a row each, outlined."""
    cells = boundary.cells
    regions = any(c.region for c in cells)
    left, right, top = (330 if regions else 250), WIDTH - 230, 14
    rows = len(cells) + len(boundary.never_named)
    height = top + ROW * rows + (48 if regions else 30)
    svg = Svg(WIDTH, height, chart=f"boundary-{key}",
              title=f"Boundary chart for {boundary.label}: {len(cells)} conditions"
                    + (f", {len(boundary.never_named)} never named" if boundary.never_named else ""),
              desc="share of runs at each condition that worked, should have asked, failed, or errored"
                   + ("; each row's region first" if regions else ""))
    for i, c in enumerate(cells):
        cy = top + ROW * i + ROW / 2
        svg.text(6, cy + 4, middle(c.condition or "(no condition)", LABEL), tip=c.condition or "(no condition)")
        if c.region:
            name = c.region.replace(" ", "-")
            svg.rect(left - 80, cy - 6, 12, 12, class_=f"region region-{name}",
                     tip=f"{c.condition}: {_REGION_TEXT[c.region]}" + (f" ({c.label})" if c.label else ""))
            svg.text(left - 64, cy + 4, _REGION_TEXT[c.region], class_=f"legend region-text-{name}")
        if c.trials == 0:
            svg.rect(left, cy - 6, right - left, 12, class_="not-run", tip=f"{c.condition}: not yet run")
            svg.text((left + right) / 2, cy + 4, "not yet run", anchor="middle", class_="muted")
        else:
            x0 = float(left)
            for field, name in _SEGMENTS:
                n = getattr(c, field)
                w = (right - left) * n / c.trials
                if n:
                    svg.rect(x0, cy - 6, w, 12, class_=f"seg-{name}",
                             tip=f"{c.condition}: {fmt_count_share(n, c.trials)} {name}")
                x0 += w
        counts = " · ".join(f"{getattr(c, f)} {n}" for f, n in _SEGMENTS if getattr(c, f))
        svg.text(WIDTH - 4, cy + 4, f"{c.status}: {counts}" if c.trials else "—", anchor="end",
                 class_=f"num status-{c.status.replace(' ', '-')}")
    for j, nn in enumerate(boundary.never_named):
        cy = top + ROW * (len(cells) + j) + ROW / 2
        svg.text(6, cy + 4, middle(nn.condition, LABEL), tip=nn.condition)
        svg.rect(left - 80, cy - 6, 12, 12, class_="region region-never-named", tip=f"{nn.condition}: never named")
        svg.text(left - 64, cy + 4, "never named", class_="legend region-text-never-named")
        svg.rect(left, cy - 6, right - left, 12, class_="never-named",
                 tip=f"{nn.condition}: {nn.incidents} production incident(s), not on the chart")
        svg.text((left + right) / 2, cy + 4, f"{nn.incidents} production incident{'s' if nn.incidents != 1 else ''}"
                 ", never named", anchor="middle", class_="muted")
    if regions:
        y = top + ROW * rows + 36
        lx = float(left)
        for name in ("works", "uncertain", "fails", "not-run", "never-named"):
            svg.rect(lx, y - 9, 10, 10, class_=f"region region-{name}")
            svg.text(lx + 14, y, name.replace("-", " "), class_="legend")
            lx += 110
    y = top + ROW * rows + 16
    lx = float(left)
    for _field, name in _SEGMENTS:
        svg.rect(lx, y - 9, 10, 10, class_=f"seg-{name}")
        svg.text(lx + 14, y, name, class_="legend")
        lx += 70
    return svg.render()


def calibration_chart(calibration: Calibration) -> str:
    """Reliability diagram: observed share against mean forecast per bin, sized by count."""
    size, left, top = 300, 70, 14
    x = Scale(0.0, 1.0, left, left + size)
    y = Scale(0.0, 1.0, top + size, top)
    svg = Svg(WIDTH, top + size + 46, chart="calibration",
              title=f"Calibration of {calibration.n} forecasts in {len(calibration.bins)} bins",
              desc="points on the diagonal are calibrated; point area is the number of forecasts")
    svg.y_axis(y, left, ticks=y.ticks(5), fmt=_pct_axis, label="observed share", grid_right=left + size)
    svg.x_axis(x, top + size, ticks=x.ticks(5), fmt=_pct_axis, label="forecast", grid_top=top)
    svg.line(x(0), y(0), x(1), y(1), class_="diagonal")
    nmax = max([b.n for b in calibration.bins] + [1])
    tx = left + size + 40
    svg.text(tx, top + 12, "bin: forecast → observed (n)", class_="col-head")
    for i, b in enumerate(calibration.bins):
        tip = f"forecasts {b.lo:.2f}–{b.hi:.2f}: mean {b.mean_forecast:.2f}, observed {b.observed_share:.2f} of {b.n}"
        svg.circle(x(b.mean_forecast), y(b.observed_share), 3 + 9 * (b.n / nmax) ** 0.5, class_="cal-pt", tip=tip)
        svg.text(tx, top + 32 + 18 * i, f"{fmt_pct(b.mean_forecast)} → {fmt_pct(b.observed_share)} ({b.n})",
                 class_="num")
    return svg.render()


def paired_chart(rows: list[PairedRow], *, label_a: str, label_b: str, key: str = "0") -> str:
    """Each cell's posterior mean under A (hollow) and B (filled), joined by the shift, with P(θ_B > θ_A)."""
    left, right, top = 250, WIDTH - 150, 26
    height = top + ROW * len(rows) + 44
    x = Scale(0.0, 1.0, left, right)
    svg = Svg(WIDTH, height, chart=f"paired-{key}",
              title=f"Paired view: {label_b} against {label_a}, {len(rows)} cells",
              desc="posterior mean pass rate of each cell under A (hollow) and B (filled); P(θ_B > θ_A) at right")
    bottom = top + ROW * len(rows)
    for i in range(0, len(rows), 2):
        svg.rect(0, top + ROW * i, WIDTH, ROW, class_="stripe")
    svg.x_axis(x, bottom + 4, ticks=x.ticks(5), fmt=_pct_axis, label="posterior mean pass rate", grid_top=top - 6)
    svg.text(WIDTH - 4, top - 10, "A → B · P(B > A)", anchor="end", class_="col-head")
    names = [r.scenario + (f" [{r.condition}]" if r.condition else "") for r in rows]
    for i, (r, name, shown) in enumerate(zip(rows, names, distinct(names, LABEL), strict=True)):
        cy = top + ROW * i + ROW / 2
        mean_a, mean_b = (1 + r.passes_a) / (2 + r.runs_a), (1 + r.passes_b) / (2 + r.runs_b)
        tip = (f"{name}: A {r.passes_a}/{r.runs_a}, B {r.passes_b}/{r.runs_b}; shift {100 * r.shift:+.1f} points; "
               f"P(θ_B > θ_A) = {r.p_b_better:.3f}; {r.move}")
        cls = {"worse": "mv-worse", "better": "mv-better"}.get(r.move, "mv-flat")
        svg.text(6, cy + 4, shown, tip=tip)
        svg.line(x(mean_a), cy, x(mean_b), cy, class_=f"shift {cls}")
        svg.circle(x(mean_a), cy, 4, class_="pt-a", tip=tip)
        svg.circle(x(mean_b), cy, 4.5, class_=f"pt-b {cls}", tip=tip)
        svg.text(right + 70, cy + 4, f"{r.passes_a}/{r.runs_a} → {r.passes_b}/{r.runs_b}", anchor="end", class_="num")
        svg.text(WIDTH - 4, cy + 4, fmt_prob(r.p_b_better, 2), anchor="end", class_=f"num prob {cls}-text")
    return svg.render()


def leaderboard_chart(board: LeaderboardSection) -> str:
    """Each version's pass rate (points) with its interval, best first, coloured by group; rank
    interval and P(first) at right."""
    rows = board.rows
    lo = min([r.low for r in rows] + [100.0])
    hi = max([r.high for r in rows] + [0.0])
    left, right, top = 250, WIDTH - 190, 26
    height = top + ROW * len(rows) + 44
    x = Scale(max(lo - 5, 0.0), min(hi + 5, 100.0), left, right)
    svg = Svg(WIDTH, height, chart="leaderboard", title=f"Leaderboard of {len(rows)} versions",
              desc="pass rate in points with its interval per version, best first; rank interval and P(first)")
    bottom = top + ROW * len(rows)
    for i in range(0, len(rows), 2):
        svg.rect(0, top + ROW * i, WIDTH, ROW, class_="stripe")
    svg.x_axis(x, bottom + 4, ticks=x.ticks(6), fmt=lambda v: f"{v:g}", label="pass rate (points, mean over strata)",
               grid_top=top - 6)
    svg.text(WIDTH - 4, top - 10, "group · rank interval · P(first)", anchor="end", class_="col-head")
    groups = sorted({r.group for r in rows if r.group})
    for i, r in enumerate(rows):
        cy = top + ROW * i + ROW / 2
        cls = f"grp{groups.index(r.group) % 4}" if r.group else "grp0"
        tip = (f"{r.label}: {r.rate:.1f} points ({r.passes}/{r.trials}), interval {r.low:.1f}–{r.high:.1f}; "
               f"rank {r.rank} ({r.rank_low}–{r.rank_high}); P(first) = {r.p_first:.3f}"
               + (f"; group {r.group}" if r.group else ""))
        svg.text(6, cy + 4, middle(r.label, LABEL), tip=tip)
        svg.line(x(r.low), cy, x(r.high), cy, class_=f"whisker {cls}")
        svg.rect(x(r.rate) - 4.5, cy - 4.5, 9, 9, class_=f"est {cls}", tip=tip)
        svg.text(WIDTH - 4, cy + 4, f"{r.group + ' · ' if r.group else ''}{r.rank_low}–{r.rank_high} · "
                 f"{fmt_prob(r.p_first, 2)}", anchor="end", class_="num")
    return svg.render()
