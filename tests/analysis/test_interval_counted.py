"""interval from the ledger's unit_cells equals interval from every run (the row functions on the streamed runs)."""

import numpy as np
import pytest

from fluke.analysis import interval
from fluke.analysis._facts import scoped_runs
from fluke.analysis._interval import outcome_values
from fluke.inference import cluster_bootstrap_interval, clustered_interval, variance_components
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

from .._close import assert_same_doc


def from_rows(ledger, *, unit, outcome, unknown, weighting, bootstrap, condition=None):
    """What interval answered when it read every run: {version: payload-like tuple}."""
    out = {}
    by_version: dict = {}
    for r in scoped_runs(ledger, None, condition):
        by_version.setdefault(r.version, []).append(r)
    for v, vruns in by_version.items():
        y, kept = outcome_values(vruns, outcome, unknown)
        if not kept:
            out[v] = (len(vruns), None)
            continue
        units = [r.sampling_unit if unit == "unit" else r.scenario for r in kept]
        ci = clustered_interval(y, units, unit=unit, weighting=weighting)
        vc = variance_components(y, units, [r.scenario for r in kept])
        boot = (cluster_bootstrap_interval(y, units, rng=np.random.default_rng(2026), resamples=bootstrap)
                if bootstrap else None)
        out[v] = (len(vruns), ci, vc, boot)
    return out


def close(a, b):
    assert_same_doc(a, b)


def build(tmp_path, seed):
    rng = np.random.default_rng(seed)
    ledger = open_ledger(str(tmp_path / f"l{seed}.db"))
    runs = []
    for model in ("m1", "m2"):
        for s in range(int(rng.integers(2, 9))):
            declared = rng.random() < 0.7
            for t in range(int(rng.integers(1, 7))):
                passed = None if rng.random() < 0.15 else bool(rng.random() < 0.6)
                reward = None if rng.random() < 0.2 else round(float(rng.random()), 3)
                runs.append(Run(scenario=f"s{s}", trial=t, identity=Identity(model=model),
                                unit=f"user{int(rng.integers(0, 4))}" if declared else None,
                                condition={"temp": str(int(rng.integers(0, 2)))},
                                outcome=Outcome(passed=passed, reward=reward)))
    ledger.ingest(runs)
    return ledger


@pytest.mark.parametrize("seed", range(12))
def test_interval_from_counts_equals_interval_from_runs(tmp_path, seed):
    import warnings

    ledger = build(tmp_path, seed)
    for unit in ("unit", "scenario"):
        for outcome in ("passed", "reward"):
            for unknown in ("fail", "exclude"):
                weighting = "units" if seed % 3 == 0 else "rows"
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    got = interval(ledger, unit=unit, outcome=outcome, unknown=unknown, weighting=weighting,
                                   bootstrap=50 if seed % 2 else 0)
                    want = from_rows(ledger, unit=unit, outcome=outcome, unknown=unknown, weighting=weighting,
                                     bootstrap=50 if seed % 2 else 0)
                assert {v.version for v in got.versions} == set(want)
                for v in got.versions:
                    runs, *rest = want[v.version]
                    assert v.runs == runs
                    if rest[0] is None:
                        assert v.interval is None
                        continue
                    ci, vc, boot = rest
                    for key in ("statistic", "standard_error", "low", "high", "df", "clusters", "rows", "method",
                                "reason"):
                        close(getattr(v.interval, key), getattr(ci, key))
                    for a, b in zip(vars(v.interval.naive).values(), vars(ci.naive).values(), strict=True):
                        close(a, b)
                    for key in ("unit", "scenario", "generation", "units", "scenarios", "generations", "reasons"):
                        close(getattr(v.variance, key), getattr(vc, key))
                    if boot is not None:
                        for key in ("statistic", "standard_error", "low", "high", "clusters"):
                            close(getattr(v.bootstrap, key), getattr(boot, key))
