"""The fix check: the re-run rule, run on the candidate and on the unchanged agent (the control).

The re-run rule takes the first run's failing episodes and looks at the same input re-run:
"fixed once" when the first re-run did not fail, "fixed within three" when any of up to three
re-runs did not fail. The failing episode at rank r of its input (its position among that
input's first-run trials) takes that input's re-runs at ranks r, r+1, r+2 (cyclically), so two
failures of one input start from different re-runs; rows of one input are correlated, which is
why every interval is clustered by input. On an agent whose failures are pure chance the rule
"fixes" 1 − p once and 1 − p³ within three with nothing changed: only the control can tell a
fix from that background.

Without a control there is no test of improvement: the by-input comparison against the very
failures that selected the inputs calls an unchanged agent "improved" (regression to the mean),
so it is not run, and a per-input flag is raised only where the candidate fails *more* than the
first run (the selection can only hide that, never fake it). Instead the check reports the *bar*: what a pure re-run
of this agent would "fix" by
itself, from the first run's own consistency (1 − C once; within k, one minus the chance that
an input which failed once fails k more times), which the candidate's share must clear before
a control is worth running.

>>> import numpy as np
>>> first = ["a", "a", "b", "b", "c", "c"], [1, 0, 1, 1, 1, 0], [0, 1, 0, 1, 0, 1]
>>> cand = ["a", "a", "b", "b", "c", "c"], [0, 0, 0, 1, 0, 0], [2, 3, 2, 3, 2, 3]
>>> rule = rerun_rule(*first, *cand)
>>> rule.rows, rule.inputs, round(rule.fixed_once.estimate, 2), rule.tries
(4, 3, 0.75, 2)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ..inference import lazy_stats as stats

from ..errors import UsageError
from ._consistency import consistency_from_counts
from ._data import failure_counts
from ._fisher import bh_qvalues, fisher_exact_many
from ._intervals import ClusteredMean, clustered_mean
from ._verdict import CLOSING_STATEMENT

__all__ = ["ByInputTest", "FixCheck", "InputFlag", "RerunBar", "RerunRule", "fix_check", "rerun_bar", "rerun_rule"]


@dataclass(frozen=True)
class RerunRule:
    """The re-run rule on one arm: shares of first-run failures "fixed", clustered by input."""

    fixed_once: ClusteredMean
    fixed_within: ClusteredMean
    tries: int
    rows: int
    inputs: int
    unmatched: int


@dataclass(frozen=True)
class InputFlag:
    """One failing input: failures out of re-runs on each side, Fisher p and BH q across inputs."""

    input: str
    failures_candidate: int
    trials_candidate: int
    failures_reference: int
    trials_reference: int
    pvalue: float
    qvalue: float
    flagged: bool


@dataclass(frozen=True)
class ByInputTest:
    """Sign test with inputs as the unit: did the failing inputs move together?"""

    improved: int
    worsened: int
    unchanged: int
    pvalue: float


@dataclass(frozen=True)
class RerunBar:
    """What re-running the unchanged agent would call "fixed" by itself: the bar to clear.

    ``once`` and ``within`` are shares (``within`` over ``tries`` re-runs); ``method`` says how
    they were estimated: from the first run's consistency, or, where no input ran often
    enough, the pure-chance ceiling 1 − p (which consistency can only lower).
    """

    once: float
    within: float
    tries: int
    method: str


def _falling(x: np.ndarray, k: int) -> np.ndarray:
    out = np.ones_like(x, dtype=float)
    for j in range(k):
        out = out * np.maximum(x - j, 0)
    return out


def rerun_bar(failures, trials, *, tries: int = 3) -> RerunBar:
    """The bar from per-input ``failures`` out of ``trials`` in the first run.

    P(fail again | failed once) is consistency's C; P(fail k more | failed once) is
    Σ f(f−1)…(f−k) / Σ f(n−1)…(n−k), the same without-replacement estimator over k + 1 trials.

    >>> bar = rerun_bar([2, 0, 1, 2], [2, 2, 2, 2], tries=1)
    >>> round(bar.once, 3), bar.method
    (0.2, 'consistency of the first run')
    """
    if tries < 1:
        raise UsageError(f"tries={tries} must be at least 1", argument="tries")
    f = np.asarray(failures, dtype=float).reshape(-1)
    n = np.asarray(trials, dtype=float).reshape(-1)
    c = consistency_from_counts(f, n)
    if not np.isfinite(c.c):
        p = c.p if np.isfinite(c.p) else float("nan")
        return RerunBar(1 - p, 1 - p**tries, tries, "pure chance 1 − p (no input ran twice): an upper bound")
    denom = float((f * _falling(n - 1, tries)).sum())
    if denom > 0:
        within = 1 - float(_falling(f, tries + 1).sum()) / denom
        how = "consistency of the first run"
    else:
        within, how = 1 - c.p**tries, f"consistency of the first run (within {tries}: pure chance, an upper bound)"
    return RerunBar(1 - c.c, within, tries, how)


@dataclass(frozen=True)
class FixCheck:
    """Candidate against control on the first run's failing inputs.

    ``reference`` names what the per-input flags and the by-input test compare the candidate
    with: ``"control"``, or ``"first run"`` when no control was given. Then there is no test
    (``by_input`` counts nothing, p undefined), no difference, and flags only where the
    candidate fails more; ``bar`` is what a pure re-run of the unchanged agent would "fix",
    beside the candidate's share. Nothing here calls a candidate without a control improved.
    """

    candidate: RerunRule
    control: RerunRule | None
    difference_once: ClusteredMean | None
    difference_within: ClusteredMean | None
    flags: tuple[InputFlag, ...]
    by_input: ByInputTest
    reference: str
    statement: str = CLOSING_STATEMENT
    bar: RerunBar | None = None

    @property
    def clears_bar(self) -> bool | None:
        """Without a control: whether the candidate's fixed-once interval lies above the bar.

        Clearing it is a reason to run a control, not a finding of improvement; None with a control.
        """
        if self.bar is None or not np.isfinite(self.candidate.fixed_once.low):
            return None
        return bool(self.candidate.fixed_once.low > self.bar.once)


def _arrays(inputs, failed, order, name):
    inputs = np.asarray(inputs).reshape(-1)
    failed = np.asarray(failed, dtype=bool).reshape(-1)
    order = np.asarray(order, dtype=float).reshape(-1)
    if not (inputs.size == failed.size == order.size):
        raise UsageError(f"{name}: inputs, failed and order must have one entry per run", argument="inputs")
    return inputs, failed, order


def _coded(arms: list, labels: list[str], names=None) -> tuple[np.ndarray, list]:
    """``(names, arms)`` with every arm's inputs as codes into one sorted array of distinct names.

    Inputs given as labels are coded here (one sort of them all); with ``names`` they are
    already codes into it, and are only checked (the ledger's tables give them so: no string
    is compared per run).
    """
    arms = [_arrays(*arm, label) for arm, label in zip(arms, labels, strict=True)]
    if names is None:
        names, codes = np.unique(np.concatenate([a[0].astype(str) for a in arms]), return_inverse=True)
        bounds = np.cumsum([a[0].size for a in arms])[:-1]
        return names, [(c, a[1], a[2]) for c, a in zip(np.split(codes.reshape(-1), bounds), arms, strict=True)]
    names = np.asarray(names).astype(str).reshape(-1)
    if names.size > 1 and not bool(np.all(names[1:] > names[:-1])):
        raise UsageError("names must be sorted and distinct (as np.unique gives them)", argument="names")
    for (codes, _, _), label in zip(arms, labels, strict=True):
        if codes.size and (codes.dtype.kind not in "iu" or codes.min() < 0 or codes.max() >= names.size):
            raise UsageError(f"{label}: with names, inputs must be integer codes 0..{names.size - 1} into them",
                             argument="inputs")
    return names, [(a[0].astype(np.intp, copy=False), a[1], a[2]) for a in arms]


def _ranked(codes, order, n_codes):
    """Rank of each run within its input (by ``order``, ties in the order given), and runs per input.

    Arrays already sorted by input, then order (as the ledger's table gives them) are not sorted again.
    """
    counts = np.bincount(codes, minlength=n_codes)
    step_code, step_order = np.diff(codes), np.diff(order)
    ready = bool(np.all((step_code > 0) | ((step_code == 0) & (step_order >= 0))))
    idx = None if ready else np.lexsort((order, codes))
    sorted_codes = codes if idx is None else codes[idx]
    starts = np.cumsum(counts) - counts                 # where each input begins, sorted
    position = np.arange(codes.size) - starts[sorted_codes]
    if idx is None:
        return position, counts
    rank = np.empty(codes.size, dtype=np.int64)
    rank[idx] = position
    return rank, counts


def _rows(first, rerun, within: int, n_names: int, cap=None):
    """For every failing first-run episode: its input's code, fixed once, fixed within, tries used.

    Both arms' inputs are codes below ``n_names`` (:func:`_coded`). ``once``/``fixed`` are NaN
    (and ``tries`` 0) where the input was never re-run. ``cap`` (one entry per failing episode)
    limits the tries, so two arms can be held to the same number.
    """
    f_code, f_failed, f_order = first
    r_code, r_failed, r_order = rerun
    f_rank, _ = _ranked(f_code, f_order, n_names)
    r_rank, r_count = _ranked(r_code, r_order, n_names)
    # inputs × re-run rank: 1 failed, 0 passed, NaN not run
    grid = np.full((n_names, max(int(r_count.max()) if r_count.size else 0, 1)), np.nan)
    grid[r_code, r_rank] = r_failed
    rows = np.flatnonzero(f_failed)
    code, rank = f_code[rows], f_rank[rows]
    avail = r_count[code]
    tries = np.minimum(within, avail) if cap is None else np.minimum(np.minimum(within, avail), cap)
    j = np.arange(within)[None, :]
    fails = grid[code[:, None], (rank[:, None] + j) % np.maximum(avail, 1)[:, None]]
    once = np.where(avail > 0, fails[:, 0] == 0, np.nan)
    fixed = np.where(avail > 0, np.any((j < tries[:, None]) & (fails == 0), axis=1), np.nan)
    return code, once, fixed, tries


def _rule(rows, confidence_level) -> RerunRule:
    labels, once, fixed, tries = rows
    ok = tries > 0
    return RerunRule(clustered_mean(once[ok], labels[ok], confidence_level=confidence_level),
                     clustered_mean(fixed[ok], labels[ok], confidence_level=confidence_level),
                     int(tries[ok].min()) if ok.any() else 0, int(ok.sum()),
                     int(np.unique(labels[ok]).size), int((~ok).sum()))


def rerun_rule(first_inputs, first_failed, first_order, rerun_inputs, rerun_failed, rerun_order,
               *, within: int = 3, confidence_level: float = 0.95, names=None) -> RerunRule:
    """The re-run rule on one arm. ``*_order`` orders runs within an input (e.g. the trial);
    with ``names`` (sorted, distinct) the inputs are integer codes into it.

    >>> rule = rerun_rule(["a", "b"], [True, True], [0, 0],
    ...                   ["a", "a", "a", "b", "b", "b"], [True, False, True, True, True, True], [1, 2, 3, 1, 2, 3])
    >>> rule.fixed_once.estimate, rule.fixed_within.estimate, rule.tries
    (0.0, 0.5, 3)
    """
    if within < 1:
        raise UsageError(f"within={within} must be at least 1", argument="within")
    names, (first, rerun) = _coded([(first_inputs, first_failed, first_order),
                                    (rerun_inputs, rerun_failed, rerun_order)], ["first run", "re-run"], names)
    return _rule(_rows(first, rerun, within, names.size), confidence_level)


def _per_input(codes, failed, failing, n_names: int):
    """Failures and runs of one arm on each of the ``failing`` input codes."""
    return (np.bincount(codes, weights=failed, minlength=n_names)[failing].astype(int),
            np.bincount(codes, minlength=n_names)[failing])


def fix_check(first, candidate, control=None, *, within: int = 3, q: float = 0.05,
              confidence_level: float = 0.95, names=None) -> FixCheck:
    """Run the re-run rule on the candidate and on the control and set them side by side.

    Without a control: the candidate's rule and the bar (see :class:`FixCheck`), nothing more.

    ``first``, ``candidate`` and ``control`` are each ``(inputs, failed, order)``: one entry per
    run. Rows are the first run's failing episodes, each held to the same number of tries on both
    arms (the fewer either has); the differences (candidate − control) are clustered by input; flags are per-input
    Fisher tests (BH across inputs, flagged when q < ``q``);
    the by-input test is a sign test over inputs of the change in failure share. With ``names``
    (sorted, distinct) every arm's inputs are integer codes into it, as the ledger's
    ``trial_outcomes`` gives them, and no label is compared per run.

    >>> first = (["a", "b", "c", "d"], [1, 1, 1, 1], [0, 0, 0, 0])
    >>> cand = (["a", "b", "c", "d"] * 3, [0] * 12, [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3])
    >>> ctrl = (["a", "b", "c", "d"] * 3, [1] * 12, [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3])
    >>> fc = fix_check(first, cand, ctrl)
    >>> fc.difference_once.estimate, fc.by_input.improved, round(fc.by_input.pvalue, 3)
    (1.0, 4, 0.125)
    """
    if within < 1:
        raise UsageError(f"within={within} must be at least 1", argument="within")
    arms, labels = [first, candidate], ["first run", "candidate"]
    if control is not None:
        arms.append(control)
        labels.append("control")
    names, coded = _coded(arms, labels, names)
    first_a, cand_a, g = coded[0], coded[1], names.size
    cand_rows = _rows(first_a, cand_a, within, g)
    cand = _rule(cand_rows, confidence_level)
    failing = np.unique(first_a[0][first_a[1]])
    ctrl_rule = diff_once = diff_within = None
    if control is not None:
        ctrl_a = coded[2]
        ctrl_rows = _rows(first_a, ctrl_a, within, g)
        # hold both arms to the same number of tries per episode, or "within N" favours the arm
        # that happened to be re-run more often
        cap = np.minimum(cand_rows[3], ctrl_rows[3])
        cand_rows, ctrl_rows = _rows(first_a, cand_a, within, g, cap), _rows(first_a, ctrl_a, within, g, cap)
        cand, ctrl_rule = _rule(cand_rows, confidence_level), _rule(ctrl_rows, confidence_level)
        # the same failing episodes on both sides: keep those both arms re-ran
        both = (cand_rows[3] > 0) & (ctrl_rows[3] > 0)
        labels = cand_rows[0][both]
        diff_once = clustered_mean(cand_rows[1][both] - ctrl_rows[1][both], labels,
                                   confidence_level=confidence_level)
        diff_within = clustered_mean(cand_rows[2][both] - ctrl_rows[2][both], labels,
                                     confidence_level=confidence_level)
        reference, ref_runs = "control", ctrl_a
    else:
        reference, ref_runs = "first run", first_a
    fc, nc = _per_input(cand_a[0], cand_a[1], failing, g)
    fr, nr = _per_input(ref_runs[0], ref_runs[1], failing, g)
    keep = (nc > 0) & (nr > 0)
    p = np.full(failing.size, np.nan)
    if keep.any():
        p[keep] = fisher_exact_many(fc[keep], (nc - fc)[keep], fr[keep], (nr - fr)[keep])
    qv = bh_qvalues(p)
    with np.errstate(invalid="ignore", divide="ignore"):
        worse = fc * nr > fr * nc
    flags = tuple(InputFlag(str(names[failing[i]]), int(fc[i]), int(nc[i]), int(fr[i]), int(nr[i]),
                            float(p[i]), float(qv[i]), bool(qv[i] < q and (control is not None or worse[i])))
                  for i in np.flatnonzero(keep))
    if control is None:
        # the first run selected these inputs by failing, so a test against it would call an
        # unchanged agent improved; give instead the bar an unchanged re-run reaches by itself
        _, f_first, n_first = failure_counts(first_a[0], first_a[1])   # on codes: the same order as names
        bar = rerun_bar(f_first, n_first, tries=cand.tries or within)
        return FixCheck(cand, None, None, None, flags, ByInputTest(0, 0, 0, float("nan")), reference, bar=bar)
    with np.errstate(invalid="ignore", divide="ignore"):
        change = fc[keep] / nc[keep] - fr[keep] / nr[keep]
    improved, worsened = int((change < 0).sum()), int((change > 0).sum())
    sign_p = float(stats.binomtest(improved, improved + worsened, 0.5).pvalue) if improved + worsened else float("nan")
    by_input = ByInputTest(improved, worsened, int((change == 0).sum()), sign_p)
    return FixCheck(cand, ctrl_rule, diff_once, diff_within, flags, by_input, reference)
