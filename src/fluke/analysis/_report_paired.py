"""The paired view: scenario by scenario, what moved between two versions.

With one run a side a scenario cell is fixed, broken, both pass or both fail; with more it
has a posterior shift (B's posterior mean minus A's) and P(θ_B > θ_A) under uniform priors,
computed exactly by integrating one Beta's cdf against the other's density.

>>> from fluke.report import ScenarioPosterior, SuiteBoard
>>> def board(v, k): return SuiteBoard(version=v * 64, label=v, bar=0.9, rows=[ScenarioPosterior(
...     scenario=s, successes=x, trials=1, mean=0, lo=0, hi=1, p_above_bar=0) for s, x in zip("pqr", k)])
>>> view = paired_from(board("a", [0, 1, 1]), board("b", [1, 0, 1]))
>>> view.counts, [r.move for r in view.rows]
({'broken': 1, 'fixed': 1, 'both fail': 0, 'both pass': 1}, ['broken', 'fixed', 'both pass'])
"""

from __future__ import annotations

import numpy as np

from ..format import natural_key
from ..report._model import Paired, PairedRow, SuiteBoard

#: Moves with one run a side, in the order the view sorts them (what changed first).
SINGLE_MOVES = ("broken", "fixed", "both fail", "both pass")
#: Moves with more runs: P(θ_B > θ_A) beyond these edges counts as a shift.
MANY_MOVES = ("worse", "better", "no clear shift")
EDGE = 0.95


def p_b_better(k_a: int, n_a: int, k_b: int, n_b: int, grid: int = 4001) -> float:
    """P(θ_B > θ_A) for independent Beta(1 + k, 1 + n − k) posteriors.

    >>> round(p_b_better(0, 0, 0, 0), 3), round(p_b_better(2, 10, 8, 10), 3)
    (0.5, 0.996)
    """
    from scipy.special import betainc, betaln, xlog1py, xlogy   # scipy.stats alone holds ~28 MB

    x = np.linspace(0.0, 1.0, grid)
    a, b = 1 + k_b, 1 + n_b - k_b
    density_b = np.exp(xlogy(a - 1, x) + xlog1py(b - 1, -x) - betaln(a, b))   # the Beta(a, b) density
    cdf_a = betainc(1 + k_a, 1 + n_a - k_a, x)
    f = density_b * cdf_a
    return float(np.clip(np.sum((f[1:] + f[:-1]) / 2 * np.diff(x)), 0.0, 1.0))  # trapezoid rule, numpy 1.26 too


def _move(k_a: int, n_a: int, k_b: int, n_b: int, p: float) -> str:
    if n_a == n_b == 1:
        return {(0, 1): "fixed", (1, 0): "broken", (0, 0): "both fail", (1, 1): "both pass"}[(k_a, k_b)]
    return "better" if p >= EDGE else ("worse" if p <= 1 - EDGE else "no clear shift")


def paired_from(a: SuiteBoard, b: SuiteBoard) -> Paired:
    """The paired view of board ``b`` against board ``a``, over the cells both hold, sorted by
    evidence (broken, fixed, both fail, both pass; or the strongest shift first, worse before better)."""
    theirs = {(r.scenario, r.condition): r for r in b.rows}
    rows = []
    for ra in a.rows:
        rb = theirs.get((ra.scenario, ra.condition))
        if rb is None:
            continue
        p = p_b_better(ra.successes, ra.trials, rb.successes, rb.trials)
        shift = (1 + rb.successes) / (2 + rb.trials) - (1 + ra.successes) / (2 + ra.trials)
        rows.append(PairedRow(scenario=ra.scenario, condition=ra.condition, passes_a=ra.successes, runs_a=ra.trials,
                              passes_b=rb.successes, runs_b=rb.trials, shift=shift, p_b_better=p,
                              move=_move(ra.successes, ra.trials, rb.successes, rb.trials, p)))
    single = bool(rows) and all(r.runs_a == r.runs_b == 1 for r in rows)
    moves = SINGLE_MOVES if single else MANY_MOVES
    if single:
        rows.sort(key=lambda r: (moves.index(r.move), natural_key(r.scenario), natural_key(r.condition)))
    else:
        rows.sort(key=lambda r: (min(r.p_b_better, 1 - r.p_b_better), r.p_b_better, natural_key(r.scenario)))
    only = len(a.rows) - len(rows), len(b.rows) - len(rows)
    unpaired = "" if not any(only) else f"; {only[0]} cells only in A and {only[1]} only in B are left out"
    how = ("one run a side: each cell either passed or failed under each version"
           if single else f"uniform Beta(1, 1) priors per cell and version; a shift is P(θ_B > θ_A) ≥ {EDGE:g} "
                          f"or ≤ {1 - EDGE:.2g}; shift = difference of posterior means")
    return Paired(label_a=a.label, label_b=b.label, version_a=a.version, version_b=b.version, rows=rows,
                  counts={m: sum(r.move == m for r in rows) for m in moves}, single_run=single,
                  conditional_on=(f"A = {a.label} ({a.version[:12]}), B = {b.label} ({b.version[:12]}); cells paired "
                                  f"by scenario and condition{unpaired}; {how}; cells independent, no correction "
                                  "for looking at many cells"))
