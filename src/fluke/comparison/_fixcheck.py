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

Every figure needs of the arms only whole-number sums per input (:class:`FixTally`: runs,
failures, tries, fixed once and within), so :func:`fix_check` is :func:`check_tally` of
:func:`fix_tally`, and a reader can tally its inputs a part at a time and join the parts.

>>> import numpy as np
>>> first = ["a", "a", "b", "b", "c", "c"], [1, 0, 1, 1, 1, 0], [0, 1, 0, 1, 0, 1]
>>> cand = ["a", "a", "b", "b", "c", "c"], [0, 0, 0, 1, 0, 0], [2, 3, 2, 3, 2, 3]
>>> rule = rerun_rule(*first, *cand)
>>> rule.rows, rule.inputs, round(rule.fixed_once.estimate, 2), rule.tries
(4, 3, 0.75, 2)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from ..inference import lazy_stats as stats

from ..errors import InputError
from ._consistency import consistency
from ._fisher import bh_qvalues, fisher_exact_many
from ._intervals import ClusteredMean, clustered_mean_sums
from ._verdict import CLOSING_STATEMENT

__all__ = ["ByInputTest", "FixCheck", "FixTally", "InputFlag", "RerunBar", "RerunRule", "check_tally", "fix_check",
           "fix_tally", "rerun_bar", "rerun_rule"]


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
        raise InputError(None, None, "tries", f"tries={tries} must be at least 1")
    f = np.asarray(failures, dtype=float).reshape(-1)
    n = np.asarray(trials, dtype=float).reshape(-1)
    c = consistency(f, n)
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
        raise InputError(None, name, "inputs", f"{name}: inputs, failed and order must have one entry per run")
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
        raise InputError(None, None, "names", "names must be sorted and distinct (as np.unique gives them)")
    for (codes, _, _), label in zip(arms, labels, strict=True):
        if codes.size and (codes.dtype.kind not in "iu" or codes.min() < 0 or codes.max() >= names.size):
            raise InputError(None, label, "inputs", f"{label}: with names, inputs must be integer codes "
                             f"0..{names.size - 1} into them")
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
    # each input's re-runs in rank order, one after another: the re-run at rank k of input c
    # is at starts[c] + k (no inputs × ranks grid)
    starts = np.cumsum(r_count) - r_count
    by_rank = np.ones(max(r_code.size, 1), dtype=bool)
    by_rank[starts[r_code] + r_rank] = r_failed
    rows = np.flatnonzero(f_failed)
    code, rank = f_code[rows], f_rank[rows]
    avail = r_count[code]
    tries = np.minimum(within, avail) if cap is None else np.minimum(np.minimum(within, avail), cap)
    j = np.arange(within)[None, :]
    at = np.where(avail[:, None] > 0, starts[code][:, None] + (rank[:, None] + j) % np.maximum(avail, 1)[:, None], 0)
    passes = ~by_rank[at]
    once = np.where(avail > 0, passes[:, 0], np.nan)
    fixed = np.where(avail > 0, np.any((j < tries[:, None]) & passes, axis=1), np.nan)
    return code, once, fixed, tries


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
        raise InputError(None, None, "within", f"within={within} must be at least 1")
    tally = fix_tally((first_inputs, first_failed, first_order), (rerun_inputs, rerun_failed, rerun_order),
                      within=within, names=names)
    return _tally_rule(tally, tally.candidate_tries, tally.candidate_once, tally.candidate_fixed, confidence_level)


@dataclass(frozen=True)
class FixTally:
    """What the fix check needs of its arms, per input: one entry per input (in the order of the
    names the inputs are coded into), whole numbers only.

    Runs and failures of each arm; for each re-run arm, the tries each of the input's failing
    first-run episodes gets (held to the control's where there is one), and how many of them were
    fixed once and fixed within those tries; with a control, Σ(candidate − control)² of both
    over the episodes (the sums are the differences of the arms' sums). A tally of some inputs
    and a tally of others make, :meth:`joined`, the tally of both: the fix check can read its
    arms an input at a time (:func:`fix_tally` on each part, :func:`check_tally` at the end).
    """

    within: int
    first_runs: np.ndarray
    first_failures: np.ndarray
    candidate_runs: np.ndarray
    candidate_failures: np.ndarray
    candidate_tries: np.ndarray
    candidate_once: np.ndarray
    candidate_fixed: np.ndarray
    control_runs: np.ndarray | None = None
    control_failures: np.ndarray | None = None
    control_tries: np.ndarray | None = None
    control_once: np.ndarray | None = None
    control_fixed: np.ndarray | None = None
    once_squares: np.ndarray | None = None
    within_squares: np.ndarray | None = None

    def _arrays(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "within"}

    def take(self, index) -> "FixTally":
        """The tally of the inputs at ``index`` (in that order).

        >>> t = fix_tally((["a", "b"], [1, 1], [0, 0]), (["a", "b", "b"], [0, 1, 0], [1, 1, 2]))
        >>> t.take([1]).candidate_once.tolist()
        [0]
        """
        return dataclasses.replace(self, **{k: None if v is None else v[index] for k, v in self._arrays().items()})

    @classmethod
    def joined(cls, parts: list) -> "FixTally":
        """One tally of the inputs of every part, part after part (parts of disjoint inputs)."""
        first = parts[0]
        return dataclasses.replace(first, **{k: None if v is None else np.concatenate([getattr(p, k) for p in parts])
                                             for k, v in first._arrays().items()})


def _input_sums(code, values, n: int) -> np.ndarray:
    return np.bincount(code, weights=values, minlength=n).round().astype(np.int64)


def fix_tally(first, candidate, control=None, *, within: int = 3, names=None) -> FixTally:
    """:class:`FixTally` of the arms (each ``(inputs, failed, order)``, as :func:`fix_check` takes
    them), one entry per name (``names`` sorted and distinct; inputs as labels or as codes into it,
    or without it the sorted labels of all three arms).

    >>> t = fix_tally((["a", "b"], [1, 1], [0, 0]), (["a", "a", "b"], [1, 0, 0], [1, 2, 1]))
    >>> t.first_failures.tolist(), t.candidate_tries.tolist(), t.candidate_once.tolist(), t.candidate_fixed.tolist()
    ([1, 1], [2, 1], [0, 1], [1, 1])
    """
    if within < 1:
        raise InputError(None, None, "within", f"within={within} must be at least 1")
    arms, labels = [first, candidate], ["first run", "candidate"]
    if control is not None:
        arms.append(control)
        labels.append("control")
    names, coded = _coded(arms, labels, names)
    g = names.size
    first_a, cand_a = coded[0], coded[1]
    cand_rows = _rows(first_a, cand_a, within, g)
    ctrl_rows = None
    if control is not None:
        ctrl_rows = _rows(first_a, coded[2], within, g)
        # hold both arms to the same number of tries per episode, or "within N" favours the arm
        # that happened to be re-run more often
        cap = np.minimum(cand_rows[3], ctrl_rows[3])
        cand_rows, ctrl_rows = _rows(first_a, cand_a, within, g, cap), _rows(first_a, coded[2], within, g, cap)

    def rule(rows):
        code, once, fixed, tries = rows
        ok = tries > 0
        per_input = np.zeros(g, dtype=np.int64)
        per_input[code] = tries               # one number of tries for every episode of an input
        return per_input, _input_sums(code[ok], once[ok], g), _input_sums(code[ok], fixed[ok], g)

    def runs(arm):
        return np.bincount(arm[0], minlength=g).astype(np.int64), _input_sums(arm[0], arm[1], g)

    out = dict(zip(("first_runs", "first_failures"), runs(first_a), strict=True))
    out.update(zip(("candidate_runs", "candidate_failures"), runs(cand_a), strict=True))
    out.update(zip(("candidate_tries", "candidate_once", "candidate_fixed"), rule(cand_rows), strict=True))
    if control is not None:
        out.update(zip(("control_runs", "control_failures"), runs(coded[2]), strict=True))
        out.update(zip(("control_tries", "control_once", "control_fixed"), rule(ctrl_rows), strict=True))
        both = (cand_rows[3] > 0) & (ctrl_rows[3] > 0)
        code = cand_rows[0][both]
        out["once_squares"] = _input_sums(code, (cand_rows[1][both] - ctrl_rows[1][both]) ** 2, g)
        out["within_squares"] = _input_sums(code, (cand_rows[2][both] - ctrl_rows[2][both]) ** 2, g)
    return FixTally(within, **out)


def _tally_rule(t: FixTally, tries, once, fixed, confidence_level) -> RerunRule:
    episodes = t.first_failures
    ok = (tries > 0) & (episodes > 0)
    return RerunRule(clustered_mean_sums(episodes[ok], once[ok], once[ok], confidence_level=confidence_level),
                     clustered_mean_sums(episodes[ok], fixed[ok], fixed[ok], confidence_level=confidence_level),
                     int(tries[ok].min()) if ok.any() else 0, int(episodes[ok].sum()), int(ok.sum()),
                     int(episodes[~ok].sum()))


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
    ``trial_outcomes`` gives them, and no label is compared per run. The same as
    :func:`check_tally` of :func:`fix_tally`.

    >>> first = (["a", "b", "c", "d"], [1, 1, 1, 1], [0, 0, 0, 0])
    >>> cand = (["a", "b", "c", "d"] * 3, [0] * 12, [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3])
    >>> ctrl = (["a", "b", "c", "d"] * 3, [1] * 12, [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3])
    >>> fc = fix_check(first, cand, ctrl)
    >>> fc.difference_once.estimate, fc.by_input.improved, round(fc.by_input.pvalue, 3)
    (1.0, 4, 0.125)
    """
    arms = [first, candidate] + ([control] if control is not None else [])
    names, coded = _coded(arms, ["first run", "candidate", "control"][:len(arms)], names)
    coded += [None] * (3 - len(coded))
    return check_tally(fix_tally(*coded, within=within, names=names), names, q=q, confidence_level=confidence_level)


def check_tally(tally: FixTally, names, *, q: float = 0.05, confidence_level: float = 0.95) -> FixCheck:
    """:func:`fix_check` from the arms' :class:`FixTally` (``names``: the inputs, one per entry).

    >>> first = (["a", "b", "c"], [1, 1, 1], [0, 0, 0])
    >>> cand = (["a", "b", "c"] * 2, [0, 1, 0, 0, 0, 1], [1, 1, 1, 2, 2, 2])
    >>> tally = fix_tally(first, cand)
    >>> check = check_tally(tally, ["a", "b", "c"])
    >>> once = check.candidate.fixed_once
    >>> once == fix_check(first, cand).candidate.fixed_once, round(once.estimate, 3)
    (True, 0.667)
    """
    t, within = tally, tally.within
    names = np.asarray(names).astype(str).reshape(-1)
    control = t.control_runs is not None
    cand = _tally_rule(t, t.candidate_tries, t.candidate_once, t.candidate_fixed, confidence_level)
    failing = np.flatnonzero(t.first_failures > 0)
    ctrl_rule = diff_once = diff_within = None
    if control:
        ctrl_rule = _tally_rule(t, t.control_tries, t.control_once, t.control_fixed, confidence_level)
        # the same failing episodes on both sides: keep those both arms re-ran
        both = (t.candidate_tries > 0) & (t.control_tries > 0) & (t.first_failures > 0)
        rows = t.first_failures[both]
        diff_once = clustered_mean_sums(rows, (t.candidate_once - t.control_once)[both], t.once_squares[both],
                                        confidence_level=confidence_level)
        diff_within = clustered_mean_sums(rows, (t.candidate_fixed - t.control_fixed)[both], t.within_squares[both],
                                          confidence_level=confidence_level)
        reference, fr, nr = "control", t.control_failures[failing], t.control_runs[failing]
    else:
        reference, fr, nr = "first run", t.first_failures[failing], t.first_runs[failing]
    fc, nc = t.candidate_failures[failing], t.candidate_runs[failing]
    keep = (nc > 0) & (nr > 0)
    p = np.full(failing.size, np.nan)
    if keep.any():
        p[keep] = fisher_exact_many(fc[keep], (nc - fc)[keep], fr[keep], (nr - fr)[keep])
    qv = bh_qvalues(p)
    with np.errstate(invalid="ignore", divide="ignore"):
        worse = fc * nr > fr * nc
    flags = tuple(InputFlag(str(names[failing[i]]), int(fc[i]), int(nc[i]), int(fr[i]), int(nr[i]),
                            float(p[i]), float(qv[i]), bool(qv[i] < q and (control or worse[i])))
                  for i in np.flatnonzero(keep))
    if not control:
        # the first run selected these inputs by failing, so a test against it would call an
        # unchanged agent improved; give instead the bar an unchanged re-run reaches by itself
        present = t.first_runs > 0
        bar = rerun_bar(t.first_failures[present], t.first_runs[present], tries=cand.tries or within)
        return FixCheck(cand, None, None, None, flags, ByInputTest(0, 0, 0, float("nan")), reference, bar=bar)
    with np.errstate(invalid="ignore", divide="ignore"):
        change = fc[keep] / nc[keep] - fr[keep] / nr[keep]
    improved, worsened = int((change < 0).sum()), int((change > 0).sum())
    sign_p = float(stats.binomtest(improved, improved + worsened, 0.5).pvalue) if improved + worsened else float("nan")
    by_input = ByInputTest(improved, worsened, int((change == 0).sum()), sign_p)
    return FixCheck(cand, ctrl_rule, diff_once, diff_within, flags, by_input, reference)
