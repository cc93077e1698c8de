"""The fix check on integer-coded inputs (as the ledger's trial table gives them) is the fix check on labels."""

import numpy as np
import pytest

from fluke.comparison import fix_check, rerun_rule
from fluke.comparison._fixcheck import _ranked
from fluke.errors import UsageError


def _arm(rng, names, runs):
    codes = rng.integers(0, names.size, runs)
    return codes, rng.random(runs) < 0.4, rng.integers(0, 6, runs).astype(float)


@pytest.mark.parametrize("seed", range(20))
def test_codes_with_names_give_the_answer_labels_give(seed):
    rng = np.random.default_rng(seed)
    names = np.array(sorted({f"s{int(i)}" for i in rng.integers(0, 40, 12)}))
    first, cand, ctrl = (_arm(rng, names, int(rng.integers(5, 80))) for _ in range(3))
    if seed % 2:    # sorted by input then trial, as the table gives them: the ranking takes its shortcut
        first, cand, ctrl = ((c[np.lexsort((o, c))], f[np.lexsort((o, c))], o[np.lexsort((o, c))])
                             for c, f, o in (first, cand, ctrl))
    labelled = [(names[c], f, o) for c, f, o in (first, cand, ctrl)]
    control = (ctrl, labelled[2]) if seed % 3 else (None, None)
    coded = fix_check(first, cand, control[0], names=names, within=2)
    plain = fix_check(labelled[0], labelled[1], control[1], within=2)
    assert repr(coded) == repr(plain)
    assert repr(rerun_rule(*first, *cand, names=names)) == repr(rerun_rule(*labelled[0], *labelled[1]))


@pytest.mark.parametrize("seed", range(10))
def test_rank_within_input_counts_the_earlier_runs_of_that_input(seed):
    rng = np.random.default_rng(100 + seed)
    codes, order = rng.integers(0, 5, 60), rng.integers(0, 4, 60).astype(float)
    if seed % 2:
        at = np.lexsort((order, codes))
        codes, order = codes[at], order[at]
    rank, counts = _ranked(codes, order, 5)
    # independent: a run's rank is how many runs of its input come before it (by order, ties by position)
    naive = [sum(1 for j in range(60) if codes[j] == codes[i] and (order[j], j) < (order[i], i)) for i in range(60)]
    assert rank.tolist() == naive and counts.tolist() == np.bincount(codes, minlength=5).tolist()


def test_codes_outside_the_names_are_refused():
    names = np.array(["a", "b"])
    with pytest.raises(UsageError, match="integer codes 0..1"):
        fix_check(([0, 2], [True, True], [0, 0]), ([0, 1], [False, True], [1, 1]), names=names)
    with pytest.raises(UsageError, match="sorted and distinct"):
        fix_check(([0, 1], [True, True], [0, 0]), ([0, 1], [False, True], [1, 1]), names=["b", "a"])
