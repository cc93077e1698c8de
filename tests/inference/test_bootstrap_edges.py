"""The cluster bootstrap at its edges (a06, a17): one cluster refused, few clusters warned, by simulation."""

import math
import warnings

import numpy as np
import pytest

from fluke.inference import FewClustersWarning, cluster_bootstrap_interval, clustered_interval


def test_one_cluster_is_refused_not_a_zero_width_interval():
    r = cluster_bootstrap_interval([1.0, 2.0, 3.0, 5.0], [0, 0, 0, 0], rng=np.random.default_rng(1))
    assert math.isnan(r.low) and math.isnan(r.high) and r.reason.startswith("one cluster")
    assert r.statistic == pytest.approx(2.75)


def test_few_clusters_warn():
    with pytest.warns(FewClustersWarning, match="only 4 clusters"):
        r = cluster_bootstrap_interval([0.0, 1.0, 0.2, 0.9, 0.5, 0.4], [0, 0, 1, 1, 2, 3],
                                       rng=np.random.default_rng(2), resamples=200)
    assert r.warning and r.low < r.high
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = np.random.default_rng(3).normal(size=40)
        assert cluster_bootstrap_interval(y, np.arange(40) // 2, rng=np.random.default_rng(4),
                                          resamples=200).warning is None


def _coverage(clusters, reps, rng):
    boot = t_hit = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewClustersWarning)
        for _ in range(reps):
            sizes = rng.integers(2, 30, clusters)
            c = np.repeat(np.arange(clusters), sizes)
            y = (rng.random(c.size) < rng.beta(2, 2, clusters)[c]).astype(float)
            b = cluster_bootstrap_interval(y, c, rng=rng, resamples=400)
            t = clustered_interval(y, c)
            boot += b.low <= 0.5 <= b.high
            t_hit += t.low <= 0.5 <= t.high
    return boot / reps, t_hit / reps


def test_why_the_warning_is_there_coverage_by_simulation():
    # Binary outcomes in clusters of unequal size, cluster rates ~ Beta(2, 2): the mean is 0.5.
    reps = 1500
    rng = np.random.default_rng(17)
    se = math.sqrt(0.95 * 0.05 / reps)
    boot, t = _coverage(8, reps, rng)
    assert boot < 0.95 - 3 * se                # a17: 88% at 8 clusters
    assert t > boot                            # the t interval does better there
    boot40, _ = _coverage(40, 600, rng)
    assert abs(boot40 - 0.95) < 4 * math.sqrt(0.95 * 0.05 / 600)
