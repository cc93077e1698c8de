"""One policy for unknown outcomes (issue 14, point 6), the same in every inference function."""

import numpy as np
import pytest

from fluke.errors import UsageError
from fluke.inference import apply_unknown_policy, clustered_interval, counts_with_unknowns, pass_at_k


def test_the_helper_on_per_run_outcomes():
    passed = [True, None, False, None, True]
    fail = apply_unknown_policy(passed)
    assert fail.passed.tolist() == [1, 0, 0, 0, 1] and fail.unknowns == 2 and fail.keep.all()
    left = apply_unknown_policy(passed, "exclude")
    assert left.passed.tolist() == [1, 0, 1] and left.keep.tolist() == [True, False, True, False, True]
    assert left.describe() == "2 unknown outcomes left out"
    with pytest.raises(UsageError):
        apply_unknown_policy(passed, "ignore")


def test_counts_and_per_run_functions_agree():
    # one scenario-level and one run-level function on the same runs give the same rate
    passed = [True, None, False, True, None, True]
    scenario = ["a", "a", "a", "b", "b", "b"]
    for policy in ("fail", "exclude"):
        applied = apply_unknown_policy(passed, policy)
        ci = clustered_interval(np.array(passed, dtype=object), scenario, unknown=policy)
        assert ci.statistic == pytest.approx(applied.passed.mean()) and ci.unknowns == 2
        k, n, u = counts_with_unknowns([1, 2], [2, 2], [1, 1], policy)
        assert u == 2 and k.sum() / n.sum() == pytest.approx(applied.passed.mean())
        r = pass_at_k([1, 2], [2, 2], k=1, unknowns=[1, 1], unknown=policy)
        assert r.statistic == pytest.approx(np.mean(k / n))
