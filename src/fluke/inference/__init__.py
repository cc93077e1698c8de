"""Statistics over run counts and arrays: pure functions, no I/O.

This branch's part of the surface: clustered intervals, variance components, pass@k and
pass^k (the lead merges it with the posteriors and calibration).

>>> from fluke.inference import pass_at_k
>>> round(pass_at_k([2], [10], k=3).statistic, 4)
0.5333
"""

from ._clustered import (BootstrapInterval, ClusteredInterval, ClusterRobustFit, NaiveInterval,
                         cluster_bootstrap_interval, cluster_robust_ols, clustered_interval)
from ._passk import (PassAtK, PlugInWarning, expected_pass_at_k, pass_at_k,
                     pass_at_k_from_average, pass_at_k_plugin, pass_hat_k)
from ._variance import Projection, VarianceComponents, grand_mean_sd, variance_components

__all__ = [
    "BootstrapInterval", "ClusterRobustFit", "ClusteredInterval", "NaiveInterval", "PassAtK",
    "PlugInWarning", "Projection", "VarianceComponents", "cluster_bootstrap_interval",
    "cluster_robust_ols", "clustered_interval", "expected_pass_at_k", "grand_mean_sd",
    "pass_at_k", "pass_at_k_from_average", "pass_at_k_plugin", "pass_hat_k",
    "variance_components",
]
